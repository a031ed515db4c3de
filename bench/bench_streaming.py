"""Issue 16 in a real browser: streaming and a live chart, with and without a long session.

    .venv/bin/python bench/bench_streaming.py [--history 1500] [--updates 200] [--seconds 10]

Runs JupyterLab and Debian Chromium as the browser tests do (tests/browser/jupyter.py). One
notebook shows two hosts: one with an empty session (the baseline, measured in the same run)
and one whose agent first said ``--history`` Markdown messages. On each, (a) an agent streams
an answer in ``--updates`` writes, 10 ms apart, with the host's end in the middle of the view
(a user watching the answer), (b) a chart surface with a 250 KiB state has one field patched at
60 Hz for ``--seconds``, and (c) a second view of the host is shown (it draws the whole list
from one snapshot). The agents' code runs in the notebook's kernel without adding a cell
(NotebookPage.execute): JupyterLab adding and scrolling to a new cell is JupyterLab's own work,
not the session's. For each: the kernel's CPU time (process time, so the sleeps between
updates do not count), the longest task the page ran, as wall time (PerformanceObserver
"longtask") and as the page's CPU time (a Chromium trace: on a shared machine the wall time
of a task also counts the time other processes had the CPU), the page's CPU for all its tasks,
and for the stream the lag from the kernel's last write to the page showing it (the page's
clock and the kernel's are the same machine's). The chart's lag is not measured: the surface
draws inside two frames the page cannot observe. Prints a markdown table for the README.
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from playwright.sync_api import Browser, Page, sync_playwright

from tests.browser.jupyter import CHROMIUM_ARGS, NotebookPage, start_jupyter, write_notebook

SETUP = r"""
import asyncio, json, time
from lineup_jupyter import Host, Limits

hosts = {}
for name in ("empty", "history"):
    # Room for the history and the answer past H44's default (both hosts alike).
    host = Host(conversation_id=f"bench_{name}", limits=Limits(max_components=COUNT + 10))
    hosts[name] = (host, host.connect_agent("bench"))
"""

SHOW = 'hosts["NAME"][0]'
# Cells: the setup, each host, and each host's second view (run last).
VIEWS = {"empty": 3, "history": 4}

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
agent.close("chart")  # its frame would go on taking the states still on their way
print(json.dumps({"kernel_s": kernel_s, "done": done, "state_bytes": state_bytes}))
"""

# Each phase's watchers replace the previous phase's: a watcher left running would add its own
# work (reading the page's text on each change) to the next phase, more with a longer page.
WATCH = """([selector, marker]) => {
  window.__watch?.forEach((observer) => observer.disconnect());
  window.__seenAt = 0;
  window.__longest = 0;
  const tasks = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      window.__longest = Math.max(window.__longest, entry.duration);
    }
  });
  tasks.observe({ type: "longtask", buffered: false });
  window.__watch = [tasks];
  if (!marker) return;
  const check = () => {
    for (const el of document.querySelectorAll(selector)) {
      if (el.textContent.includes(marker)) { window.__seenAt = Date.now(); return true; }
    }
    return false;
  };
  const text = new MutationObserver(() => { if (check()) text.disconnect(); });
  text.observe(document.body, { subtree: true, childList: true, characterData: true });
  window.__watch.push(text);
}"""


# Where the stream goes: the host's end in the middle of the view, as a user watching it.
SCROLL_TO = """(index) => {
  const host = document.querySelectorAll(".lineup-host")[index];
  const scroller = host.closest(".jp-WindowedPanel-outer") ?? document.scrollingElement;
  const middle = scroller.getBoundingClientRect().top + scroller.clientHeight / 2;
  scroller.scrollTop += host.getBoundingClientRect().bottom - middle;
}"""

# Each task of the page's main thread is a RunTask with its thread time (tdur, microseconds).
TRACE_CATEGORIES = ["disabled-by-default-devtools.timeline"]


def page_cpu(trace: bytes) -> tuple[float, float]:
    """The longest task of the notebook page's main thread by CPU time, and the CPU of all its
    tasks, in ms (surface frames run in other processes and are not counted)."""
    events: list[dict[str, Any]] = json.loads(trace)["traceEvents"]
    page_pid = next(
        frame["processId"]
        for event in events
        if event.get("name") == "TracingStartedInBrowser"
        for frame in event["args"]["data"]["frames"]
        if frame.get("isOutermostMainFrame")
    )
    main = {
        (event["pid"], event["tid"])
        for event in events
        if event.get("name") == "thread_name"
        and event["pid"] == page_pid
        and event["args"]["name"] == "CrRendererMain"
    }
    cpu = [
        event.get("tdur", 0) / 1000
        for event in events
        if event.get("name") == "RunTask"
        and event.get("ph") == "X"
        and (event["pid"], event["tid"]) in main
    ]
    return max(cpu, default=0.0), sum(cpu)


@contextmanager
def watched(
    browser: Browser, page: Page, selector: str = "", marker: str = ""
) -> Iterator[dict[str, float]]:
    """Measure the page while the block runs: fills longest_ms, cpu_longest_ms, cpu_ms."""
    figures: dict[str, float] = {}
    page.evaluate(WATCH, [selector, marker])
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    try:
        yield figures
    finally:
        trace = browser.stop_tracing()
    figures["longest_ms"] = page.evaluate("() => window.__longest")
    figures["cpu_longest_ms"], figures["cpu_ms"] = page_cpu(trace)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=1500)
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    last = int(args.seconds * 60) - 1
    counts = {"empty": 1, "history": args.history + 1}  # components, the answer included
    results: dict[str, dict[str, dict[str, float]]] = {"empty": {}, "history": {}}
    with tempfile.TemporaryDirectory() as base, sync_playwright() as playwright:
        server = start_jupyter(Path(base))
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            setup = SETUP.replace("COUNT", str(args.history))
            shows = [SHOW.replace("NAME", name) for name in ("empty", "history")]
            write_notebook(server.root, "bench.ipynb", [setup, *shows, *shows])
            notebook = NotebookPage(page, server, "bench.ipynb", "lab").open()
            notebook.run_cells(0, 3)
            page.wait_for_selector(".lineup-host >> nth=1")
            notebook.execute(HISTORY.replace("COUNT", str(args.history)))
            page.wait_for_function(
                "n => document.querySelectorAll('.lineup-component').length >= n",
                arg=args.history,
                timeout=300_000,
            )
            for index, name in enumerate(("empty", "history")):
                page.evaluate(SCROLL_TO, index)
                answer = f".lineup-component[data-component-id=answer-{name}]"
                code = STREAM.replace("NAME", name).replace("UPDATES", str(args.updates))
                with watched(browser, page, answer, "THE-END") as stream:
                    kernel = json.loads(notebook.execute(code))
                    page.wait_for_function("() => window.__seenAt > 0", timeout=60_000)
                stream["kernel_s"] = kernel["kernel_s"]
                stream["lag_s"] = page.evaluate("() => window.__seenAt") / 1000 - kernel["done"]
                results[name]["stream"] = stream
                code = CHART.replace("NAME", name).replace("LAST", str(last))
                with watched(browser, page) as chart:
                    kernel = json.loads(notebook.execute(code))
                chart["kernel_s"] = kernel["kernel_s"]
                chart["state_bytes"] = kernel["state_bytes"]
                results[name]["chart"] = chart
            for name, cell in VIEWS.items():
                with watched(browser, page) as view:
                    notebook.run_cells(cell, cell + 1)
                    page.wait_for_function(
                        "([i, n]) => (document.querySelectorAll('.lineup-host')[i]"
                        "?.querySelectorAll('.lineup-component').length ?? 0) >= n",
                        arg=[cell - 1, counts[name]],
                        timeout=300_000,
                    )
                results[name]["view"] = view
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
    state_kib = results["empty"]["chart"]["state_bytes"] // 1024
    labels = {
        "stream": f"{args.updates} streamed writes",
        "chart": f"a chart patched at 60 Hz for {args.seconds:g} s ({state_kib:g} KiB state)",
        "view": "a second view of the host (one snapshot)",
    }
    rows = []
    for part, label in labels.items():
        empty, busy = results["empty"][part], results["history"][part]
        if "kernel_s" in empty:
            rows.append((f"{label}: kernel CPU", empty["kernel_s"], busy["kernel_s"], "s"))
        if "lag_s" in empty:
            rows.append((f"{label}: lag after the last update", empty["lag_s"], busy["lag_s"], "s"))
        rows.append((f"{label}: longest page task", empty["longest_ms"], busy["longest_ms"], "ms"))
        rows.append(
            (f"{label}: its CPU, longest", empty["cpu_longest_ms"], busy["cpu_longest_ms"], "ms")
        )
        rows.append((f"{label}: page CPU, all tasks", empty["cpu_ms"], busy["cpu_ms"], "ms"))
    for label, empty_value, busy_value, unit in rows:
        ratio = busy_value / empty_value if empty_value else float("nan")
        print(f"| {label} | {empty_value:.3f} {unit} | {busy_value:.3f} {unit} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
