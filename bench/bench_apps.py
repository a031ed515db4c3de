"""What opening an installed app's surface costs, next to hashing its bytes, in the same run.

    .venv/bin/python bench/bench_apps.py [-n 200] [--repeats 11] [--kib 159]

One app with a surface of about 160 KiB (html + css + js, the U3 limit) is installed into a
temporary data dir. Then, alternating, each timed over ``n`` repetitions:

- baseline: ``hashlib.sha256`` of the surface's cache bytes, already in memory;
- verify + load: ``host.apps.open_surface(ref)``: the registry row (SQLite), the cache file
  read from disk, its SHA-256 checked against the registry (H32), the framing parsed, the
  assets inlined;
- ui.open by id: ``Host.receive`` of the agent's ``ui.open {app: {id, surface}}``: all of the
  above plus the envelope checks and the surface opened (replacing the previous one).

The three run back to back, one of each per round, so a busy machine slows them alike; the
table gives each one's median µs and the median of the per-round ratios to hashing. Nothing
here asserts a time.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

try:
    from lineup_jupyter import Host
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from lineup_jupyter import Host

from lineup_jupyter.protocol import AppRef

APP = "com.example.bench"


def write_app(folder: Path, kib: int) -> None:
    folder.mkdir(parents=True)
    third = kib * 1024 // 3
    (folder / "index.html").write_text("<main>" + "<p>row</p>" * (third // 10) + "</main>")
    (folder / "style.css").write_text("p{margin:0}" * (third // 11))
    (folder / "main.js").write_text("LineUpSurface.onState(s=>s);" * (third // 28))
    manifest = {
        "id": APP,
        "name": "Bench",
        "version": "1.0.0",
        "surfaces": [
            {"id": "main", "html": "index.html", "css": "style.css", "js": "main.js", "events": []}
        ],
    }
    (folder / "lineup-app.json").write_text(json.dumps(manifest))


def timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=2000, help="rounds")
    parser.add_argument("--kib", type=int, default=159)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        write_app(root / "app", args.kib)
        host = Host("conv_bench", data_dir=root / "home")
        host.apps.install(root / "app")
        (blob,) = (root / "home" / "bundles").glob("*.bundle")
        data = blob.read_bytes()
        ref = AppRef(id=APP, surface="main")
        ids = itertools.count()

        def receive() -> None:
            error = host.receive(
                {
                    "v": 1,
                    "id": f"m{next(ids)}",
                    "type": "lineup.v1.ui.open",
                    "conversation_id": "conv_bench",
                    "sender": {"kind": "agent", "id": "agent_bench"},
                    "payload": {"instance_id": "s1", "app": {"id": APP, "surface": "main"}},
                }
            )
            assert error is None, error

        rows: dict[str, list[float]] = {"hash": [], "load": [], "open": []}
        for _ in range(args.n):
            rows["hash"].append(timed(lambda: hashlib.sha256(data).digest()))
            rows["load"].append(timed(lambda: host.apps.open_surface(ref)))
            rows["open"].append(timed(receive))
        print(
            f"{len(data) / 1024:.1f} KiB bundle, medians of {args.n} rounds; "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs\n"
        )
        print("| path | µs per open | ratio to hashlib |\n|---|---:|---:|")
        for key, label in (
            ("hash", "`hashlib.sha256` of the bytes in memory"),
            ("load", "verify + load from the cache (`apps.open_surface`)"),
            ("open", "`ui.open {app: {id, surface}}` through `Host.receive`"),
        ):
            ratio = statistics.median(a / b for a, b in zip(rows[key], rows["hash"], strict=True))
            print(f"| {label} | {statistics.median(rows[key]):.0f} | {ratio:.1f}x |")
        host.apps.close()


if __name__ == "__main__":
    main()
