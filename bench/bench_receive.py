"""How much Host.receive costs next to json.loads of the same bytes.

    .venv/bin/python bench/bench_receive.py            # the table
    .venv/bin/python bench/bench_receive.py --profile  # and where receive spends its time

Every subject message has its own id (H9 refuses repeats), so the N messages are generated
before timing and both sides walk the same list. Baseline and subject runs alternate, each
run on a fresh host, and the median run is reported.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _timing import timed  # bench/ is the script's folder, first on sys.path

try:
    from lineup_jupyter import Host
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from lineup_jupyter import Host

from lineup_jupyter.protocol import rules

CONVERSATION = "conv_bench"
AGENT = "agent_bench"
INSTANCE = "sales.dashboard"

# A dashboard's state as an agent would send it: KPIs, a week of series, filters (~1 KiB).
DASHBOARD_STATE: dict[str, Any] = {
    "title": "Weekly sales — EMEA",
    "updated_at": "2026-12-02T09:30:00Z",
    "filters": {"region": ["DE", "FR", "IT", "ES"], "channel": "online", "currency": "EUR"},
    "kpis": [
        {"id": "revenue", "label": "Revenue", "value": 1284503.25, "delta": 0.043},
        {"id": "orders", "label": "Orders", "value": 12877, "delta": -0.012},
        {"id": "basket", "label": "Avg. basket", "value": 99.75, "delta": 0.021},
    ],
    "series": [
        {"day": f"2026-11-{day}", "orders": 1700 + 37 * i, "revenue": 171000.5 + 913.25 * i}
        for i, day in enumerate(range(25, 32 - 1))
    ],
    "top_products": [
        {"sku": "A-1042", "name": "Espresso machine", "units": 311},
        {"sku": "B-2210", "name": "Grinder", "units": 207},
        {"sku": "C-0007", "name": "Milk frother", "units": 164},
    ],
    "alerts": [{"level": "warning", "text": "Stock of A-1042 below 50 units in FR"}],
    "selected": None,
    "loading": False,
    "theme": "dark",
    "refresh_seconds": 60,
}


def wire(value: Any, ensure_ascii: bool = False) -> bytes:
    """Compact UTF-8 JSON, as an agent would put it on the wire."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=ensure_ascii).encode()


def envelope(type_: str, message_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "v": 1,
        "id": message_id,
        "type": f"lineup.v1.{type_}",
        "conversation_id": CONVERSATION,
        "sender": {"kind": "agent", "id": AGENT},
        "payload": payload,
    }


def patches(n: int, ensure_ascii: bool = False) -> list[bytes]:
    """``ensure_ascii`` writes non-ASCII text as \\u escapes, as json.dumps does by default."""
    payload = {"instance_id": INSTANCE, "state": DASHBOARD_STATE}
    return [
        wire(envelope("ui.patch", f"msg_patch_{i:07d}", payload), ensure_ascii) for i in range(n)
    ]


def big_opens(n: int) -> list[bytes]:
    """ui.open messages whose bundle is 1 KiB under the 160 KiB limit (U3)."""
    html = "<main>" + "<div class='cell'>42</div>" * 7000
    html = html[: rules.DEFAULT_MAX_BUNDLE_BYTES - 1024]
    app = {"id": "com.example.sales", "version": "1.0.0", "html": html, "css": "", "js": ""}
    payload = {"instance_id": INSTANCE, "app": app, "state": DASHBOARD_STATE}
    return [wire(envelope("ui.open", f"msg_open_{i:07d}", payload)) for i in range(n)]


def host_with_open_instance() -> Host:
    host = Host(CONVERSATION)
    opened = big_opens(1)[0].replace(b"msg_open_0000000", b"msg_setup_00000")
    assert host.receive(opened) is None
    return host


def compare(
    items: Sequence[Any], baseline_items: Sequence[bytes], repeats: int
) -> tuple[float, float]:
    """Median µs per message of json.loads(baseline_items) and of Host.receive(items)."""
    baseline: list[float] = []
    subject: list[float] = []

    def receive_all() -> None:
        host = host_with_open_instance()
        subject.append(timed(host.receive, items))
        # Every message must have been accepted (each bumps the revision), or we timed refusals.
        assert host.surfaces[INSTANCE].revision == len(items) + 1

    for turn in range(repeats + 1):  # turn 0 warms up and is dropped
        if turn % 2:
            receive_all()
            baseline.append(timed(json.loads, baseline_items))
        else:
            baseline.append(timed(json.loads, baseline_items))
            receive_all()
    return statistics.median(baseline[1:]) / 1000, statistics.median(subject[1:]) / 1000


def profile(label: str, items: Sequence[Any], top: int) -> None:
    host = host_with_open_instance()
    profiler = cProfile.Profile()
    profiler.enable()
    for item in items:
        host.receive(item)
    profiler.disable()
    print(f"\ncProfile of Host.receive over {len(items)} {label}:\n")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000, help="1 KiB patches per run")
    parser.add_argument("--repeats", type=int, default=15, help="timed runs per row")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top costs")
    args = parser.parse_args()

    small = patches(args.n)
    escaped = patches(args.n, ensure_ascii=True)
    small_dicts = [json.loads(raw) for raw in small]
    big = big_opens(max(args.n // 20, 20))
    print(
        f"1 KiB ui.patch: {len(small[0])} bytes (state {len(wire(DASHBOARD_STATE))} bytes); "
        f"160 KiB ui.open: {len(big[0])} bytes\n"
    )
    rows = [
        ("ui.patch, 1 KiB state, bytes", *compare(small, small, args.repeats)),
        ("ui.patch, 1 KiB state, bytes with \\u escapes", *compare(escaped, escaped, args.repeats)),
        ("ui.patch, 1 KiB state, dict", *compare(small_dicts, small, args.repeats)),
        ("ui.open, 160 KiB bundle, bytes", *compare(big, big, args.repeats)),
    ]
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.platform()}; "
        f"median of {args.repeats} runs\n"
    )
    print("| message | json.loads µs | Host.receive µs | ratio |")
    print("|---|---:|---:|---:|")
    for name, loads_us, receive_us in rows:
        print(f"| {name} | {loads_us:.1f} | {receive_us:.1f} | {receive_us / loads_us:.1f}x |")
    print(
        "\nTarget: receive of the 1 KiB patch at most 3x json.loads (dict rows compare with "
        "json.loads of the same message's bytes)."
    )
    if args.profile:
        profile("1 KiB ui.patch messages as bytes", small, top=20)
        profile("1 KiB ui.patch messages as bytes with \\u escapes", escaped, top=20)
        profile("1 KiB ui.patch messages as dicts", small_dicts, top=20)


if __name__ == "__main__":
    main()
