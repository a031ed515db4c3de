"""Each change alone from the kernel to the view (issue 16, docs/architecture.md "The widget"),
in a real JupyterLab page: a merge patch arrives as the patch, a lost message makes the view
ask for everything again, a streamed answer (H45) ends exactly as the whole text rendered at
once, and a reload or a saved notebook reopened without its kernel still shows it all."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from .conftest import OpenNotebook
from .jupyter import JupyterServer, NotebookPage
from .test_restore import WIDGET_SETTINGS, lab_settings
from .test_surfaces import SETUP, surface

# The kernel's sends, counted, and a switch that drops the next feed message (as the server's
# rate limiter would), so the view meets a gap in the numbering.
WATCH = """\
sent = []  # (kind, ops, bytes) of every message to the view
drop_next = []
plain_send = host.widget.send

def watched_send(content, buffers=None):
    ops = [op["op"] for op in content.get("ops", [])]
    sent.append((content["kind"], ops, len(json.dumps(content))))
    if drop_next and content["kind"] == "feed":
        drop_next.clear()
        return
    plain_send(content, buffers)

host.widget.send = watched_send
"""

OPEN_CHART = """\
agent.open(
    "chart.01",
    html="<p id=v></p>",
    js="LineUpSurface.onState(s => v.textContent = s.label + ' ' + s.cursor + ' ' + s.rows.length)",
    state={"label": "cursor", "cursor": 0, "rows": [{"t": i, "value": i / 2} for i in range(ROWS)]},
)
"""

TOKENS = [
    "## Pla", "n\n\n1. fetch the ", "data\n2. **summ", "arise**\n\n", "| city | °C |\n|---|--:|\n",
    "| Beijing | 22 |\n\n", "```python\nrows = ", "fetch()\n\nprint(rows)\n```\n\n", "> quoted ",
    "and [a link](https://example.org/a) 😀", "\n\nDone: `ok`.",
]  # fmt: skip

STREAM = f"""\
import asyncio
tokens = {TOKENS!r}
with agent.stream("answer") as s:
    for token in tokens:
        s.write(token)
        await asyncio.sleep(0.08)  # the view gets one splice per write
agent.say("".join(tokens), component_id="whole")
"""


def markdown_html(page: Page, component_id: str) -> str:
    selector = f'.lineup-component[data-component-id="{component_id}"] .lineup-markdown'
    html: str = page.locator(selector).first.inner_html()
    return html


def start(open_notebook: OpenNotebook, rows: int = 8000) -> NotebookPage:
    notebook = open_notebook([SETUP, WATCH, OPEN_CHART.replace("ROWS", str(rows))])
    expect(surface(notebook.page, "chart.01").locator("#v")).to_have_text(f"cursor 0 {rows}")
    notebook.round_trip()
    return notebook


def test_h6_a_merge_patch_arrives_as_the_change_and_a_gap_makes_the_view_resync(
    open_notebook: OpenNotebook,
) -> None:
    notebook = start(open_notebook)
    page = notebook.page
    notebook.run_cell('agent.patch("chart.01", {"cursor": 1}, merge=True)')
    expect(surface(page, "chart.01").locator("#v")).to_have_text("cursor 1 8000")
    kind, ops, size = json.loads(notebook.run_cell("print(json.dumps(sent[-1]))"))
    assert (kind, ops) == ("feed", ["patch"]) and size < 2048  # of a ~150 KiB state

    # One message lost: the view sees the gap at the next one and asks for everything.
    notebook.run_cell('drop_next.append(1)\nagent.patch("chart.01", {"label": "lost"}, merge=True)')
    notebook.run_cell('agent.patch("chart.01", {"cursor": 2}, merge=True)')
    expect(surface(page, "chart.01").locator("#v")).to_have_text("lost 2 8000")
    kinds = [k for k, _ops, _size in json.loads(notebook.run_cell("print(json.dumps(sent))"))]
    assert kinds[-1] == "snapshot" and kinds.count("snapshot") == 2  # mount, then the gap


def test_h45_a_streamed_answer_renders_as_the_whole_text_and_survives_a_reload(
    open_notebook: OpenNotebook,
) -> None:
    notebook = start(open_notebook)
    page = notebook.page
    notebook.run_cell(STREAM)
    expect(page.locator('.lineup-component[data-component-id="whole"]')).to_have_count(1)
    assert markdown_html(page, "answer") == markdown_html(page, "whole")
    assert "<table>" in markdown_html(page, "answer")
    sent = json.loads(notebook.run_cell("print(json.dumps(sent))"))
    splices = [size for kind, ops, size in sent if ops == ["splice"]]
    assert len(splices) >= len(TOKENS) - 2 and max(splices) < 600  # each write its own end

    notebook.reload()  # kernel alive: the view rebuilds from the kernel's lists
    expect(page.locator('.lineup-component[data-component-id="whole"]')).to_have_count(1)
    assert markdown_html(page, "answer") == markdown_html(page, "whole")
    expect(surface(page, "chart.01").locator("#v")).to_have_text("cursor 0 8000")


def test_a_saved_notebook_reopened_without_its_kernel_shows_the_last_changes(
    open_notebook: OpenNotebook, jupyter: JupyterServer
) -> None:
    """The view keeps the model's lists current as deltas arrive, so the widget state the
    notebook saves holds the latest state and the whole streamed answer."""
    with lab_settings(jupyter, WIDGET_SETTINGS, {"saveState": True}):
        notebook = start(open_notebook, rows=100)
        page = notebook.page
        notebook.run_cell('agent.patch("chart.01", {"cursor": 7}, merge=True)')
        notebook.run_cell(STREAM)
        expect(surface(page, "chart.01").locator("#v")).to_have_text("cursor 7 100")
        expect(page.locator('.lineup-component[data-component-id="whole"]')).to_have_count(1)
        whole = markdown_html(page, "whole")

        notebook.command("docmanager:save")
        jupyter.shutdown_kernels()
        notebook.reload()

        expect(page.locator(".lineup-host .lineup-status")).to_contain_text("Disconnected")
        expect(surface(page, "chart.01").locator("#v")).to_have_text("cursor 7 100")
        assert markdown_html(page, "answer") == whole
