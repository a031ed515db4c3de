"""Issue 16 in a real browser: streaming and a live chart, with and without a long session.

    .venv/bin/python bench/bench_streaming.py [--history 1500] [--updates 200] [--seconds 10]

Runs JupyterLab and Debian Chromium as the browser tests do (tests/browser/jupyter.py). One
notebook shows two hosts: one with an empty session (the baseline, measured in the same run)
and one whose agent first said ``--history`` Markdown messages. On each, (a) an agent streams
an answer in ``--updates`` writes, 10 ms apart, and (b) a chart surface with a 250 KiB state
has one field patched at 60 Hz for ``--seconds``. For each: the kernel's CPU time (process
time, so the sleeps between updates do not count), the longest task the page ran
(PerformanceObserver "longtask"), and for the stream the lag from the kernel's last write to
the page showing it (the page's clock and the kernel's are the same machine's). The chart's
lag is not measured: the surface draws inside two frames the page cannot observe. Prints a
markdown table for the README. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from playwright.sync_api import sync_playwright

from tests.browser.jupyter import CHROMIUM_ARGS, NotebookPage, start_jupyter, write_notebook

SETUP = r"""
import asyncio, json, time
from lineup_jupyter import Host

hosts = {}
for name in ("empty", "history"):
    host = Host(conversation_id=f"bench_{name}")
    hosts[name] = (host, host.connect_agent("bench"))
"""

SHOW = 'hosts["NAME"][0]'

HISTORY = r"""
host, agent = hosts["history"]
for i in range(COUNT):
    agent.say(f"Message {i}: the **data** of step {i} is in, see [run](https://example.org/{i}).")
"""

STREAM = r"""
host, agent = hosts["NAME"]
cpu = time.process_time()
with agent.stream("answer-NAME") as s:
    for i in range(UPDATES):
        s.write(f"token {i} " + ("\n\n" if i % 20 == 19 else ""))
        await asyncio.sleep(0.01)
    s.write("THE-END")
done = time.time()
await asyncio.sleep(0.2)  # what the widget still sends after the last write counts too
print(json.dumps({"kernel_s": time.process_time() - cpu, "done": done}))
"""

CHART = r"""
host, agent = hosts["NAME"]
rows = [{"t": i, "value": i * 0.5, "label": f"point {i}"} for i in range(5600)]
agent.open("chart", html="<p id=v></p>",
           js="LineUpSurface.onState(s => { v.textContent = 'cursor ' + s.cursor; })",
           state={"title": "chart", "rows": rows, "cursor": -1})
await asyncio.sleep(2)
cpu = time.process_time()
for i in range(LAST + 1):
    agent.patch("chart", {"cursor": i}, merge=True)
    await asyncio.sleep(1 / 60)
done = time.time()
kernel_s = time.process_time() - cpu
state_bytes = len(json.dumps(host.surfaces["chart"].state, separators=(",", ":")))
print(json.dumps({"kernel_s": kernel_s, "done": done, "state_bytes": state_bytes}))
"""

WATCH_TEXT = """([selector, marker]) => {
  window.__seenAt = 0;
  window.__longest = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      window.__longest = Math.max(window.__longest, entry.duration);
    }
  }).observe({ type: "longtask", buffered: false });
  const check = () => {
    for (const el of document.querySelectorAll(selector)) {
      if (el.textContent.includes(marker)) { window.__seenAt = Date.now(); return true; }
    }
    return false;
  };
  const observer = new MutationObserver(() => { if (check()) observer.disconnect(); });
  observer.observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=1500)
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    last = int(args.seconds * 60) - 1
    rows = []
    with tempfile.TemporaryDirectory() as base, sync_playwright() as playwright:
        server = start_jupyter(Path(base))
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            cells = [SETUP, SHOW.replace("NAME", "empty"), SHOW.replace("NAME", "history")]
            write_notebook(server.root, "bench.ipynb", cells)
            notebook = NotebookPage(page, server, "bench.ipynb", "lab").open()
            notebook.run_all()
            page.wait_for_selector(".lineup-host >> nth=1")
            notebook.run_cell(HISTORY.replace("COUNT", str(args.history)))
            page.wait_for_function(
                "n => document.querySelectorAll('.lineup-component').length >= n",
                arg=args.history,
                timeout=300_000,
            )
            results: dict[str, dict[str, dict[str, float]]] = {}
            for name in ("empty", "history"):
                answer = f".lineup-component[data-component-id=answer-{name}]"
                page.evaluate(WATCH_TEXT, [answer, "THE-END"])
                code = STREAM.replace("NAME", name).replace("UPDATES", str(args.updates))
                stream = json.loads(notebook.run_cell(code))
                page.wait_for_function("() => window.__seenAt > 0", timeout=60_000)
                seen_at, longest = page.evaluate("() => [window.__seenAt, window.__longest]")
                results.setdefault(name, {})["stream"] = {
                    "kernel_s": stream["kernel_s"],
                    "lag_s": seen_at / 1000 - stream["done"],
                    "longest_ms": longest,
                }
                page.evaluate(WATCH_TEXT, ["body", "never-there"])
                chart = json.loads(
                    notebook.run_cell(CHART.replace("NAME", name).replace("LAST", str(last)))
                )
                longest = page.evaluate("() => window.__longest")
                results[name]["chart"] = {
                    "kernel_s": chart["kernel_s"],
                    "longest_ms": longest,
                    "state_bytes": chart["state_bytes"],
                }
        finally:
            browser.close()
            server.stop()
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs; the 'history' host first "
        f"said {args.history} Markdown messages"
    )
    print()
    print("| measure | empty session | after the history | ratio |")
    print("|---|---:|---:|---:|")
    labels = {
        "stream": f"{args.updates} streamed writes",
        "chart": f"a chart patched at 60 Hz for {args.seconds:g} s "
        f"({results['empty']['chart']['state_bytes'] // 1024} KiB state)",
    }
    for part, label in labels.items():
        empty, busy = results["empty"][part], results["history"][part]
        rows.append((f"{label}: kernel CPU", empty["kernel_s"], busy["kernel_s"], "s"))
        if "lag_s" in empty:
            rows.append((f"{label}: lag after the last update", empty["lag_s"], busy["lag_s"], "s"))
        rows.append((f"{label}: longest page task", empty["longest_ms"], busy["longest_ms"], "ms"))
    for label, empty_value, busy_value, unit in rows:
        ratio = busy_value / empty_value if empty_value else float("nan")
        print(f"| {label} | {empty_value:.3f} {unit} | {busy_value:.3f} {unit} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
