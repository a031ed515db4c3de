"""The surface authoring loop in real JupyterLab (issue 7): a surface read from files with
``Surface.from_dir(...).watch(...)``; saving a file reopens it in place with a new version
(U1, U5), on the state it had, and the watcher polls on the kernel's event loop between
cells, with no cell running."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from .conftest import OpenNotebook
from .test_surfaces import surface

SETUP = """\
import json, pathlib, tempfile
from lineup_jupyter import Host, Surface

host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_dev")
folder = pathlib.Path(tempfile.mkdtemp())
(folder / "index.html").write_text("<h1 id=title>first</h1><button id=add>add</button><p id=n></p>")
(folder / "main.js").write_text(
    "LineUpSurface.onState(s => n.textContent = s.count);"
    "add.onclick = () => LineUpSurface.event('add', {});"
)

@agent.on_event("add")
def add(event):
    agent.patch(event.instance_id, {"count": host.surfaces[event.instance_id].state["count"] + 1})

watcher = Surface.from_dir(folder).watch(agent, "counter.01", state={"count": 0}, interval=0.2)
host
"""


def test_a_saved_file_reopens_the_surface_on_its_state(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook([SETUP])
    page = notebook.page
    counter = surface(page, "counter.01")
    expect(counter.locator("#title")).to_have_text("first")
    notebook.round_trip()
    counter.locator("#add").click()
    counter.locator("#add").click()
    expect(counter.locator("#n")).to_have_text("2")

    # An editor's save, then nothing else runs in the kernel: the watcher's own poll sees it.
    notebook.run_cell(
        '(folder / "index.html").write_text('
        '"<h1 id=title>second</h1><button id=add>add</button><p id=n></p>")'
    )
    expect(counter.locator("#title")).to_have_text("second")  # the new code (U5: by ui.open)
    expect(counter.locator("#n")).to_have_text("2")  # on the state it had
    notebook.round_trip()
    counter.locator("#add").click()  # still wired to the agent
    expect(counter.locator("#n")).to_have_text("3")

    opens = json.loads(
        notebook.run_cell(
            "print(json.dumps([r.envelope['payload']['app']['version'] "
            "for r in host.history.select(type='lineup.v1.ui.open')]))"
        )
    )
    assert opens == ["0.1.0-dev.1", "0.1.0-dev.2"]  # one replace (U1), a bumped version
    assert notebook.run_cell("print(watcher.status, watcher.reloads)").strip() == "watching 1"
