"""What a saved or exported notebook shows is true (issue 24, "Exported HTML lies";
docs/architecture.md "When the kernel is gone"): a notebook run in a real kernel and converted
to HTML by nbconvert, as a reader of the export sees it. The waiting line's picture is
written again when its wait ends; the host's says when it was taken."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

pytestmark = pytest.mark.notebook

HOST = """\
import asyncio, tempfile
from lineup_jupyter import Host
host = Host(conversation_id="conv_export", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_demo")
host"""
OPEN = """\
for n in range(5):
    agent.open(f"note.{n}", html="<p>", state={"n": n})"""
# The user says no (here a task, as a click would) while the cell awaits the call.
CALL = """\
async def deny_soon():
    while not host.pending_calls:
        await asyncio.sleep(0.01)
    host.decide("w1", "deny")
asyncio.ensure_future(deny_soon())
result = await agent.call("artifact.save", {"path": "w.txt", "content": "a"},
                          reason="save the report", call_id="w1")
print(result.status)"""


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_an_exported_notebook_shows_how_a_wait_ended_and_when_the_hosts_picture_was_taken() -> None:
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in (HOST, OPEN, CALL)]
    )
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    NotebookClient(notebook, timeout=60, kernel_name="python3", store_widget_state=False).execute()
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(notebook)
    shown = text_of(body)

    call_cell = text_of(
        HTMLExporter(template_name="lab").from_notebook_node(
            nbformat.v4.new_notebook(cells=[notebook.cells[2]])
        )[0]
    )
    assert "artifact.save ('save the report'): rejected" in call_cell
    assert "waiting" not in call_cell.lower()  # not "waiting" above the printed "rejected"
    assert call_cell.index("): rejected") < call_cell.rindex("rejected")

    # The host shown in the first cell: taken before the five surfaces opened, and saying so.
    assert "0 surfaces, 0 components" in shown
    assert "A picture taken when this cell ran (" in shown
    assert "what changed later is not in it. Run the notebook to see it live." in shown
