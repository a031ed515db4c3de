"""Agents outside the kernel in the host's view (H42), in real JupyterLab: a process agent
that opens a surface and then crashes is listed, and its line turns into the crash report
(exit code, the end of its stderr) where the user looks, while its surface stays."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import OpenNotebook
from .test_surfaces import surface

SETUP = """\
import json, pathlib, sys, tempfile
from lineup_jupyter import Host

host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp())
script = pathlib.Path(tempfile.mkdtemp()) / "flaky_agent.py"
script.write_text('''
import json, sys
hello = json.loads(sys.stdin.readline())  # client.inventory (C1)
app = {"id": "com.example.flaky", "version": "1.0.0", "html": "<button id=go>go</button>",
       "js": "go.onclick = () => LineUpSurface.event('go', {})"}
print(json.dumps({"v": 1, "id": "m1", "type": "lineup.v1.ui.open",
    "conversation_id": hello["conversation_id"], "sender": {"kind": "agent", "id": "agent_flaky"},
    "payload": {"instance_id": "flaky.1", "app": app, "state": {}}}), flush=True)
sys.stdin.readline()  # the click
print("Traceback: the agent fell over", file=sys.stderr)
sys.exit(3)
''')
process = host.connect_process([sys.executable, str(script)])
host
"""


def test_h42_a_crashing_process_agent_is_reported_in_the_view(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP])
    page = notebook.page
    line = page.locator(".lineup-host .lineup-agents .lineup-agent")
    expect(line).to_have_count(1)
    expect(line).to_contain_text("Agent agent_flaky (process ")  # named by its first envelope
    expect(line).to_contain_text("connected")
    notebook.round_trip()

    surface(page, "flaky.1").locator("#go").click()  # the agent reads it, then crashes
    expect(line).to_have_attribute("data-troubled", "true")
    expect(line).to_contain_text("ended")
    expect(line.locator(".lineup-agent-problem")).to_contain_text("exited with code 3")
    expect(line.locator(".lineup-agent-problem")).to_contain_text("the agent fell over")
    assert notebook.run_cell("print(process.status, process.returncode)").strip() == "ended 3"
    expect(page.locator(".lineup-host .lineup-surface")).to_have_count(1)  # its surface stays
