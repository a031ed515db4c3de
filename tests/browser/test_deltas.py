"""Each change alone from the kernel to the view (issue 16, docs/architecture.md "The widget"),
in a real JupyterLab page: a merge patch arrives as the patch, a lost message makes the view
ask for everything again, a streamed answer (H45) ends exactly as the whole text rendered at
once, and a reload or a saved notebook reopened without its kernel still shows it all."""

from __future__ import annotations

import json

from playwright.sync_api import Page, expect

from .conftest import FRESH_PAGE, OpenNotebook
from .jupyter import JupyterServer, NotebookPage
from .test_restore import WIDGET_SETTINGS, lab_settings
from .test_surfaces import SETUP, shell_selector, surface

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


@FRESH_PAGE
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


@FRESH_PAGE
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
        jupyter.start_kernel_for(notebook.name)  # a new kernel, which knows no host
        notebook.reload(save=False)

        expect(page.locator(".lineup-host .lineup-kernel-gone")).to_contain_text(
            "Not connected to a kernel"
        )
        expect(surface(page, "chart.01").locator("#v")).to_have_text("cursor 7 100")
        assert markdown_html(page, "answer") == whole


# A long session (issue 16: no page task over 100 ms with 1 500 messages): a view draws a whole
# list in slices, one a frame (js/paced.js), in blocks the browser skips off screen
# (js/blocks.js). What a user sees must not change: every component, in the kernel's order,
# each whole. (The cost is measured by bench/bench_streaming.py, never asserted here.)
LONG = 600
LONG_SESSION = f"""\
from lineup_jupyter import Host, Limits

host = Host(conversation_id="conv_long", limits=Limits(max_components={LONG + 10}))
agent = host.connect_agent("agent_long")
host
"""

SAY_ALL = f"""\
for i in range({LONG}):
    agent.say(f"Message {{i}}: **step {{i}}**, see [run](https://example.org/{{i}}).",
              component_id=f"m{{i}}")
"""

# Per view: the component ids in page order, the texts that do not match their id, and the
# number of components in each block.
DRAWN = """(host) => {
  const cards = [...host.querySelectorAll(".lineup-components .lineup-component")];
  return {
    ids: cards.map((card) => card.dataset.componentId),
    wrong: cards.filter((card) => {
      const i = card.dataset.componentId.slice(1);
      const body = card.querySelector(".lineup-markdown");
      return !body || body.textContent.trim() !== `Message ${i}: step ${i}, see run.`
        || body.querySelector("strong")?.textContent !== `step ${i}`
        || body.querySelector("a")?.getAttribute("rel") !== "noopener noreferrer nofollow";
    }).length,
    blocks: [...host.querySelectorAll(".lineup-component-block")].map((b) => b.children.length),
  };
}"""


def drawn(page: Page, view: int) -> dict[str, object]:
    return page.locator(".lineup-host").nth(view).evaluate(DRAWN)  # type: ignore[no-any-return]


def test_a_long_session_draws_every_component_in_order_in_each_view(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([LONG_SESSION])
    page = notebook.page
    cards = page.locator(".lineup-components .lineup-component")
    notebook.run_cell(SAY_ALL)  # one feed message of 600 components, drawn in slices
    expect(cards).to_have_count(LONG)
    expected = [f"m{i}" for i in range(LONG)]
    first = drawn(page, 0)
    assert first["ids"] == expected and first["wrong"] == 0
    assert first["blocks"] == [50] * (LONG // 50)

    # A second view gets the whole list in one snapshot while the kernel goes on: the new
    # component lands last in both, whichever arrives first.
    notebook.run_cell('display(host)\nagent.say("after", component_id="last")')
    expect(cards).to_have_count(2 * (LONG + 1))
    for view in (0, 1):
        shown = drawn(page, view)
        assert shown["ids"] == [*expected, "last"] and shown["wrong"] == 1  # "last" says "after"

    # Out of the middle, then shown again: it goes last (H13: a removed id is new again).
    notebook.run_cell(
        'agent.remove("m300")\n'
        'agent.say("Message 300: **step 300**, see [run](https://example.org/300).", '
        'component_id="m300")'
    )
    moved = [*expected[:300], *expected[301:], "last", "m300"]
    for view in (0, 1):
        host = page.locator(".lineup-host").nth(view)
        expect(host.locator(".lineup-component").last).to_have_attribute(
            "data-component-id", "m300"
        )
        assert drawn(page, view)["ids"] == moved


OPEN_MIRROR = """\
agent.open(
    "mirror.01",
    html="<pre id=out></pre>",
    js="LineUpSurface.onState(state => out.textContent = JSON.stringify(state))",
    state={"label": "x", "meta": {"a": 1, "b": {"c": 2}},
           "rows": [{"t": i, "note": "row %d of the mirror" % i} for i in range(200)]},
)
"""

# What the shell frame hears from the page (the host's frame: the surface cannot touch it).
HEAR = """() => {
  window.__heard = [];
  addEventListener('message', (e) => {
    if (e.source === parent) window.__heard.push([e.data.type, JSON.stringify(e.data).length]);
  });
}"""


def test_u4_a_frame_gets_each_patch_as_the_change_and_ends_on_the_kernels_state(
    open_notebook: OpenNotebook,
) -> None:
    """Issue 16, U4: a frame that holds a revision gets the merge patches since, never the
    whole state again (a one-field patch of a 250 KiB state no longer costs the page a
    structured clone of it), and its bridge applies them so the bundle's onState still sees
    the whole state, equal to the kernel's: nested merges, deletions, a replaced array,
    patches coalesced in one tick and one by one."""
    notebook = open_notebook([SETUP, OPEN_MIRROR])
    page = notebook.page
    out = surface(page, "mirror.01").locator("#out")
    expect(out).to_contain_text('"label":"x"')
    shell = page.locator(shell_selector("mirror.01")).element_handle().content_frame()
    assert shell is not None
    shell.evaluate(HEAR)

    notebook.run_cell(
        'agent.patch("mirror.01", {"meta": {"b": {"d": 3}}}, merge=True)\n'
        'agent.patch("mirror.01", {"label": None}, merge=True)\n'
        'agent.patch("mirror.01", {"meta": {"a": None, "e": [1, 2]}}, merge=True)'
    )
    notebook.run_cell('agent.patch("mirror.01", {"rows": [{"t": 0}]}, merge=True)')
    kernel = json.loads(notebook.run_cell('print(json.dumps(host.surfaces["mirror.01"].state))'))
    assert kernel == {"meta": {"b": {"c": 2, "d": 3}, "e": [1, 2]}, "rows": [{"t": 0}]}
    expect(out).to_have_text(json.dumps(kernel, separators=(",", ":")))

    heard = shell.evaluate("() => window.__heard")
    states = [size for kind, size in heard if kind == "state"]
    patches = [size for kind, size in heard if kind == "patch"]
    assert states == [] and patches, heard  # the change, never the ~9 KB state again
    assert max(patches) < 400, heard
