"""The surface host in a real browser: latency, bursts, many surfaces, floods.

    .venv/bin/python bench/bench_surfaces.py [--roundtrips 200] [--only roundtrip,burst,many,flood]

Runs JupyterLab and Debian Chromium as the browser tests do (tests/browser/jupyter.py), with
one notebook that displays a Host and, beside it, a bare anywidget that echoes through one
plain sandboxed iframe: the baseline every figure is compared with, measured in the same run.
Prints a markdown table for the README. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import psutil
from playwright.sync_api import sync_playwright

from tests.browser.jupyter import (
    _PANEL,
    CHROMIUM_ARGS,
    NotebookPage,
    start_jupyter,
    write_notebook,
)

SETUP = r'''
import asyncio, json, time
import anywidget
from IPython.display import display
from lineup_jupyter import Host

host = Host(conversation_id="bench", events_per_second=100)
agent = host.connect_agent("bench")
waiting = {}

def arrived(key):
    future = waiting.pop(key, None)
    if future is not None and not future.done():
        future.set_result(time.perf_counter())

agent.on_event("ack")(lambda e: arrived(("lineup", e.data["n"])))
agent.open("lat", html="<p>latency</p>",
           js="LineUpSurface.onState(s => { if (s.n) LineUpSurface.event('ack', {n: s.n}); })")

class Echo(anywidget.AnyWidget):
    """The baseline: kernel -> view -> one sandboxed iframe -> view -> kernel."""
    _esm = """export default { render({ model, el }) {
      const frame = document.createElement('iframe');
      frame.setAttribute('sandbox', 'allow-scripts');
      frame.srcdoc = "<script>addEventListener('message', "
        + "e => parent.postMessage(e.data, '*'))<\/script>";
      el.append(frame);
      addEventListener('message', e => {
        if (e.source === frame.contentWindow) model.send(e.data);
      });
      model.on('msg:custom', m => frame.contentWindow.postMessage(m, '*'));
    } }"""

echo = Echo()
echo.on_msg(lambda _w, content, _b: arrived(("raw", content["n"])))
display(host, echo)
'''

ROUNDTRIPS = r"""
async def roundtrip(kind, n):
    future = asyncio.get_running_loop().create_future()
    waiting[(kind, n)] = future
    start = time.perf_counter()
    if kind == "lineup":
        agent.patch("lat", {"n": n})
    else:
        echo.send({"n": n})
    return await asyncio.wait_for(future, 20) - start

await asyncio.sleep(2)
times = {"lineup": [], "raw": []}
for n in range(1, COUNT + 1):  # interleaved, so both see the same machine
    times["raw"].append(await roundtrip("raw", n))
    times["lineup"].append(await roundtrip("lineup", n))
    # Paced (about 15 a second): latency, not throughput. Beyond 20 events a second a view
    # batches its events (js/state_queue.js EventBatcher), trading latency for the notebook's
    # responsiveness; the flood row measures that side.
    await asyncio.sleep(0.05)
print(json.dumps(times))
"""

BURST = r'''
seen = []
agent.on_event("seen")(lambda e: seen.append(e.data))
agent.open("burst", html="<p>burst</p>", state={"n": 0}, js="""
  let last = 0, ordered = true, count = 0;
  LineUpSurface.onState(s => {
    if (s.n < last) ordered = false;
    last = s.n; count += 1;
    if (s.n === 10000) LineUpSurface.event('seen', {last, ordered, count});
  });""")
await asyncio.sleep(2)
start = time.perf_counter()
for n in range(1, 10001):
    agent.patch("burst", {"n": n})
sent = time.perf_counter() - start
while not seen:
    await asyncio.sleep(0.01)
print(json.dumps({"kernel_s": sent, "delivered_s": time.perf_counter() - start, **seen[0]}))
agent.close("burst")
'''

MANY = r"""
up = set()
agent.on_event("up")(lambda e: up.add(e.instance_id))
start = time.perf_counter()
for i in range(COUNT):
    agent.open(f"many{COUNT}.{i}", html="<p>x</p>", js="LineUpSurface.event('up', {})")
while sum(1 for u in up if u.startswith(f"many{COUNT}.")) < COUNT:
    await asyncio.sleep(0.02)
print(json.dumps({"open_s": time.perf_counter() - start}))
"""

CLOSE_MANY = r"""
for i in range(COUNT):
    agent.close(f"many{COUNT}.{i}")
"""

FLOOD = r"""
agent.open("flood", html="<p>flood</p>",
           js="setInterval(() => { for (let i = 0; i < 10; i++) "
              "LineUpSurface.event('flood', {i}); }, 1)")
"""


LONGEST_TASK = """() => {
  window.__longest = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      window.__longest = Math.max(window.__longest, entry.duration);
    }
  }).observe({ type: "longtask", buffered: false });
}"""


def browser_memory() -> int:
    """Bytes held by every Chromium process this script started (resident, unique to each
    process where the system says so): what opening surfaces adds to the browser."""
    total = 0
    for process in psutil.Process().children(recursive=True):
        try:
            if "chrom" not in process.name():
                continue
            info = process.memory_full_info()
            total += getattr(info, "uss", info.rss)
        except psutil.Error:  # a process that ended meanwhile
            continue
    return total


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def timed_cell(notebook: NotebookPage, code: str) -> float:
    """A cell as the user runs one: JupyterLab adds it, runs it, draws its output."""
    start = time.perf_counter()
    notebook.run_cell(code)
    return time.perf_counter() - start


# The same code executed on the notebook's kernel from the page, without JupyterLab adding and
# drawing a cell: from the request to the reply, as the page measures it.
EXECUTE = f"""async ([name, code]) => {{ {_PANEL}
  const kernel = findPanel(name).sessionContext.session.kernel;
  const start = performance.now();
  await kernel.requestExecute({{ code, store_history: false }}).done;
  return (performance.now() - start) / 1000;
}}"""


def timed_execute(notebook: NotebookPage, code: str) -> float:
    return float(notebook.page.evaluate(EXECUTE, [notebook.name, code]))


def flood(notebook: NotebookPage) -> list[tuple[str, str, str, str]]:
    """An unrelated cell, idle and while a surface sends 10 000 events a second."""
    timed_cell(notebook, "1 + 1")  # warm up
    quiet_cell = statistics.median(timed_cell(notebook, "1 + 1") for _ in range(9))
    quiet_run = statistics.median(timed_execute(notebook, "1 + 1") for _ in range(21))
    notebook.run_cell(FLOOD)
    time.sleep(2)
    flooded_cell = statistics.median(timed_cell(notebook, "1 + 1") for _ in range(9))
    flooded_run = statistics.median(timed_execute(notebook, "1 + 1") for _ in range(21))
    notebook.run_cell('agent.close("flood")')
    return [
        (
            "an unrelated cell while a surface sends 10 000 events/s: the kernel runs it",
            f"{quiet_run * 1000:.0f} ms",
            f"{flooded_run * 1000:.0f} ms",
            f"{flooded_run / quiet_run:.2f}x",
        ),
        (
            "  ... and JupyterLab adds, runs and draws it",
            f"{quiet_cell * 1000:.0f} ms",
            f"{flooded_cell * 1000:.0f} ms",
            f"{flooded_cell / quiet_cell:.2f}x",
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roundtrips", type=int, default=200)
    parser.add_argument("--only", default="roundtrip,burst,many,flood")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each surface count")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as base, sync_playwright() as playwright:
        server = start_jupyter(Path(base))
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            write_notebook(server.root, "bench.ipynb", [SETUP])
            notebook = NotebookPage(page, server, "bench.ipynb", "lab").open()
            notebook.run_all()

            times = (
                json.loads(notebook.run_cell(ROUNDTRIPS.replace("COUNT", str(args.roundtrips))))
                if "roundtrip" in parts
                else {"lineup": [], "raw": []}
            )
            for label, q in (("p50", 0.5), ("p95", 0.95)) if "roundtrip" in parts else ():
                ours, raw = percentile(times["lineup"], q), percentile(times["raw"], q)
                rows.append(
                    (
                        f"patch -> onState -> event round trip, {label}",
                        f"{raw * 1000:.1f} ms",
                        f"{ours * 1000:.1f} ms",
                        f"{ours / raw:.2f}x",
                    )
                )

            if "burst" in parts:
                page.evaluate(LONGEST_TASK)
                burst = json.loads(notebook.run_cell(BURST))
                longest = page.evaluate("() => window.__longest")
                rows.append(
                    (
                        "10 000 patches in a loop: surface ends on the last, in order",
                        "—",
                        f"last={burst['last']}, ordered={burst['ordered']}, "
                        f"{burst['count']} states delivered",
                        "—",
                    )
                )
                rows.append(
                    (
                        "  ... kernel time / until the surface has it / longest page task",
                        "—",
                        f"{burst['kernel_s'] * 1000:.0f} ms / "
                        f"{burst['delivered_s'] * 1000:.0f} ms / {longest:.0f} ms",
                        "—",
                    )
                )

            # Each count is opened --repeats times and the median kept: one run on this
            # 2-core machine varies by a third. Linear cost = a flat time per surface.
            per_count: dict[int, tuple[float, float]] = {}
            for count in (25, 50, 100) if "many" in parts else ():
                opens, grown = [], []
                for _ in range(args.repeats):
                    before = browser_memory()
                    opened = json.loads(notebook.run_cell(MANY.replace("COUNT", str(count))))
                    opens.append(opened["open_s"])
                    grown.append((browser_memory() - before) / count / 2**20)
                    notebook.run_cell(CLOSE_MANY.replace("COUNT", str(count)))
                    time.sleep(2)  # let the browser drop the closed frames
                per_count[count] = (statistics.median(opens), statistics.median(grown))
            if per_count:
                rows.append(
                    (
                        f"25 / 50 / 100 surfaces until every one has said it is up, median of "
                        f"{args.repeats}: total (per surface); browser memory per surface",
                        "—",
                        " / ".join(
                            f"{total:.2f} s ({total / count * 1000:.0f} ms)"
                            for count, (total, _) in per_count.items()
                        )
                        + "; "
                        + " / ".join(f"{mib:.1f} MiB" for _, mib in per_count.values()),
                        "—",
                    )
                )
                (t25, _), (t100, _) = per_count[25], per_count[100]
                rows.append(
                    (
                        "  ... time per surface at 100 over time per surface at 25 (1.0 = linear)",
                        "—",
                        "—",
                        f"{(t100 / 100) / (t25 / 25):.2f}x",
                    )
                )

            if "flood" in parts:
                rows.extend(flood(notebook))
        finally:
            browser.close()
            server.stop()
    print(
        f"\nPython {platform.python_version()}, {os.cpu_count()} CPUs, Chromium headless, "
        f"JupyterLab; baseline: a bare anywidget echoing through one sandboxed iframe\n"
    )
    print("| measure | baseline | lineup host | ratio |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
