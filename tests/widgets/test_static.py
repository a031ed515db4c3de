"""A saved notebook shows what its host showed where no widget can be drawn (GitHub, nbviewer,
nbconvert, an untrusted notebook): _static.py, run in a real kernel and exported to HTML."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from lineup_jupyter import Host

CELLS = [
    """\
import tempfile
from lineup_jupyter import Host
host = Host(conversation_id="conv_static", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_demo")
agent.open("weather.01", html="<p id=t>", state={"city": "Oslo", "t": 21}, name="Weather")
agent.say("It is **sunny** <script>alert(1)</script>", component_id="said")
question = agent.ask_choice("Which unit?", ["C", "F"], component_id="unit")
call = agent.call("app.open_url", {"url": "https://example.org/"}, reason="<b>docs</b>")
host""",
    "host.apps",
    "host.inspector",
]


def run(cells: list[str]) -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    # As a notebook saved without its widget state: the widgets' models are gone.
    NotebookClient(notebook, timeout=60, kernel_name="python3", store_widget_state=False).execute()
    return notebook


@pytest.mark.kernel
def test_the_host_app_center_and_inspector_travel_as_text_and_html() -> None:
    notebook = run(CELLS)
    host_out, apps_out, inspector_out = (cell.outputs[-1] for cell in notebook.cells)

    plain = host_out.data["text/plain"]
    assert "object at 0x" not in plain
    assert "conversation conv_static · 1 surface, 2 components, 1 call waiting" in plain
    assert "surface weather.01: Weather (local.notebook.surface 0.1.0), agent agent_demo" in plain
    assert '{"city": "Oslo", "t": 21}' in plain
    assert "choice from agent_demo: Which unit? (waiting for the user)" in plain
    assert "waiting: app.open_url (user_confirmation) asked by agent_demo: <b>docs</b>" in plain
    assert "lineup app center · " in apps_out.data["text/plain"]
    assert "lineup inspector · conversation conv_static · " in inspector_out.data["text/plain"]

    html = HTMLExporter().from_notebook_node(notebook)[0]
    assert "<strong>sunny</strong>" in html  # the kernel's sanitized Markdown (H15)
    assert "Which unit?" in html and "waiting for the user" in html
    assert "&lt;b&gt;docs&lt;/b&gt;" in html  # an agent's reason is text, not markup
    assert "<script>alert(1)</script>" not in html


def test_agent_strings_in_the_static_html_are_escaped_and_cut(host: Host) -> None:
    agent = host.connect_agent("a")
    agent.open("x.1", html="<p>", state={"k": "<img src=x onerror=alert(1)>" + "y" * 500})
    agent.ask_input("<svg onload=alert(1)>", component_id="q")
    data, _metadata = host.widget._repr_mimebundle_()
    html = data["text/html"]
    assert "<img" not in html and "<svg" not in html
    assert "&lt;svg onload=alert(1)&gt;" in html
    assert "yyy…" in html and "y" * 300 not in html
