"""What the capability broker costs per auto-allowed display_only call, next to calling the
handler directly, in the same run.

    .venv/bin/python bench/bench_broker.py            # the table
    .venv/bin/python bench/bench_broker.py --profile  # and where a call spends its time

The broker path is an agent's app.call (a dict, as an in-kernel agent sends it) through
Host.receive: envelope checks, call_id record, schema check of the arguments, policy, the
handler, the audit row in SQLite (WAL, in a temporary data dir), and the app.result on the
bus. The baseline is the same handler called with the same arguments. Runs alternate, each
on a fresh host, and the median run is reported.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _timing import timed  # bench/ is the script's folder, first on sys.path

try:
    from lineup_jupyter import Host
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from lineup_jupyter import Host

CONVERSATION = "conv_bench"
AGENT = "agent_bench"
ARGUMENTS = {"city": "Berlin", "unit": "C", "days": 3}
SCHEMA = {
    "type": "object",
    "required": ["city"],
    "additionalProperties": False,
    "properties": {
        "city": {"type": "string", "maxLength": 100},
        "unit": {"enum": ["C", "F"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
    },
}


def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
    """The handler: a weather lookup answered from memory (so the broker's cost shows)."""
    return {"city": arguments["city"], "temperature": 21, "unit": arguments.get("unit", "C")}


def calls(n: int, run: int) -> list[dict[str, Any]]:
    return [
        {
            "v": 1,
            "id": f"msg_{run}_{i}",
            "type": "lineup.v1.app.call",
            "conversation_id": CONVERSATION,
            "sender": {"kind": "agent", "id": AGENT},
            "payload": {
                "call_id": f"call_{run}_{i}",
                "capability": "weather.lookup",
                "reason": "The user asked for the forecast",
                "expires_at": "2099-01-01T00:00:00Z",
                "arguments": ARGUMENTS,
            },
        }
        for i in range(n)
    ]


def make_host(data_dir: Path) -> Host:
    host = Host(CONVERSATION, data_dir=data_dir)
    host.capability("weather.lookup", risk="display_only", input_schema=SCHEMA)(lookup)
    return host


def status(sent: dict[str, Any]) -> str:
    return str(sent["payload"].get("status", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=500, help="calls per run")
    parser.add_argument("--repeats", type=int, default=11, help="timed runs of each side")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top costs")
    args = parser.parse_args()
    direct: list[float] = []
    broker: list[float] = []
    with tempfile.TemporaryDirectory(prefix="lineup-bench-") as folder:
        for turn in range(args.repeats + 1):  # turn 0 warms up and is dropped
            host = make_host(Path(folder) / f"run{turn}")
            answers: list[str] = []
            host.subscribe(lambda sent, answers=answers: answers.append(status(sent)))
            items = calls(args.n, turn)
            direct.append(timed(lookup, [ARGUMENTS] * args.n))
            broker.append(timed(host.receive, items))
            # Every call must have completed, or we timed refusals.
            assert answers[-args.n :] == ["completed"] * args.n, answers[-3:]
            host.audit.close()
        if args.profile:
            host = make_host(Path(folder) / "profile")
            profiler = cProfile.Profile()
            profiler.enable()
            for item in calls(args.n, -1):
                host.receive(item)
            profiler.disable()
            host.audit.close()
    direct_us = statistics.median(direct[1:]) / 1000
    broker_us = statistics.median(broker[1:]) / 1000
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.platform()}; "
        f"{args.n} calls per run, median of {args.repeats} runs\n"
    )
    print("| path | µs per call | ratio |")
    print("|---|---:|---:|")
    print(f"| handler called directly | {direct_us:.2f} | 1x |")
    print(
        f"| app.call through the broker, auto-allowed display_only, audited | {broker_us:.1f} | "
        f"{broker_us / direct_us:.0f}x |"
    )
    print(f"\nbroker overhead per call: {broker_us - direct_us:.1f} µs")
    if args.profile:
        print(f"\ncProfile of {args.n} broker calls:\n")
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


if __name__ == "__main__":
    main()
