"""Every notebook in notebooks/ runs top to bottom in a real kernel and shows its key results.

Each notebook has an entry in EXPECTED: strings its outputs (stdout and text/plain) must
contain, so a notebook that runs but no longer demonstrates what it teaches fails. A notebook
without an entry fails too, so a new notebook comes with its expectations.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.notebook

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))

EXPECTED: dict[str, list[str]] = {
    "01-quickstart.ipynb": [
        "[U5 invalid] $.payload.js",  # the refused patch explains itself
        "'Shanghai'",
        "('completed', {'city': 'Oslo', 'temperature': 21})",  # a capability ran
        "'rejected'",  # and one the notebook denied
    ],
    "02-envelope.ipynb": [
        "[M1 invalid] $.v",
        "[H1 invalid] $.conversationId",  # unknown fields are refused...
        "Did you mean 'conversation_id'?",  # ...with a suggestion
        "[H2 invalid_json] $",
        "[M2 unknown_type] $.type",
        "[M3 unsupported] $.type",
        "[M2 wrong_direction] $.sender.kind",
        "[U1 invalid] $.payload.instance_id",
        "[U3 too_large] $.payload.app",
        "[U5 invalid] $.payload.js",
        "[U9 invalid] $.payload.event",
        "[U10 invalid] $.payload.reason",
        "[C9 invalid] $.payload.expires_at",
        "[C11 invalid] $.payload.status",
        # The host's own checks (M1, H9, H6, H8, S7), and H3: a refusal changes nothing.
        "[M1 wrong_conversation] $.conversation_id",
        "[H9 duplicate_id] $.id",
        "[H6 unknown_instance] $.payload.instance_id",
        "[H8 not_owner] $.payload.instance_id",
        "[S7 integrity_mismatch] $.payload.app.integrity",
        "state unchanged: {'city': 'Beijing', 'temperature': 22} revision 1",
        '"refused_id": "msg_04"',  # H3: the error names the message it refused
        "lineup.v1.app.result failed $.payload.expires_at",  # a refused call is answered (C10)
        "[C12 call_conflict] $.payload.call_id",
        "[U7 invalid] $.namespace",  # a surface message, checked in the kernel
        "[S4 unknown_instance] $",
    ],
    "03-state-and-events.ipynb": [
        "revision 2 [5, 2, 8, 6, 4, 7, 3]",  # the first patch of the live loop (H6)
        "revision 6 [4, 7, 3, 5, 2, 8, 6]",  # the last
        "['series', 'title'] Sales (merged) revision 8",  # merge patch: null deletes
        "('sales.chart', 'select', {'label': 'Thu', 'value': 8})",  # the handler heard it (U8)
        "selected: Thu revision 9",  # and patched in answer
        "[U9 invalid] $.event",
        "revision 9 -> 10 | version 1.1.0",  # U1: a replace continues the revision
        "[H6 unknown_instance] $.payload.instance_id",  # patch after close
        "the agent heard: ('note.01', 'close', {})",  # U10: the user closed it
        "close  sales.chart  revision 10",
    ],
    "04-capabilities.ipynb": [
        "display_only -> completed {'city': 'Oslo', 'temperature': 21}",
        "failed invalid $.payload.arguments.city",  # C7: checked against input_schema
        "user_confirmation, allowed -> completed",  # C10
        "user_confirmation, denied -> rejected | the handler ran: False",
        "unanswered -> expired expired H20",  # the kernel's timer
        "expired on arrival -> expired",
        "no card this time -> completed",  # remembered for the session
        "cannot be pre-allowed: it is system_permission",  # C8
        "system_permission -> completed",
        "to allow it, type its name exactly",  # H23
        "restricted -> completed",
        "completed completed True | the handler ran 1 time",  # C12: idempotent
        "[C12 call_conflict] $.payload.call_id",
        "AuditVerification(ok=True, rows=12",  # C13
        "AuditVerification(ok=False, rows=4, first_broken=4",  # the edited row is found
    ],
    "05-app-center.ipynb": [
        "revision 1: {}",  # C1: the first inventory, on connecting
        "revision 2: {'com.lineup.state-chart': '1.0.0'}",  # installed
        "revision 3: {'com.example.hello': '1.0.0', 'com.lineup.state-chart': '1.0.0'}",
        "wave: accepted | the agent heard [('wave', {'times': 1})]",  # a declared event (C6)
        "[C6 invalid] $.event",  # undeclared event
        "[C6 invalid] $.data",  # data against the event's schema
        "'reason': 'app_disabled'",  # H35: disabling closes its surfaces
        "revision 4: {'com.lineup.state-chart': '1.0.0'}",
        "[C3 unsupported] $.payload.app",
        "revision 6: {'com.example.hello': '1.1.0'",  # upgrade
        "revision 7: {'com.example.hello': '1.0.0'",  # rollback
        "com.lineup.state-chart 1.0.0 bars ok",  # verify
        "was changed on disk",  # H32
        "[S7 integrity_mismatch]",
        "revision 8: {'com.example.hello': '1.0.0'}",  # C5: not verified, not offered
        "verified: True",  # reinstalling repairs
        "another host on the same data dir: 11",  # H36: revisions are never reused
        "revisions the agent received: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]",  # C2
    ],
    "06-security.ipynb": [
        "opened: ['probe.01']",
        # S4, U7, U9, H2: forged and malformed surface messages
        "refused [U7 invalid] $.namespace",
        "refused [U7 invalid] $.instance_id",
        "refused [U7 invalid] $.type",
        "refused [U9 invalid] $.event",
        "refused [U9 too_large] $.data",
        "refused [U9 invalid] $.data",
        "refused [H2 invalid_json] $.data.x",
        "refused [U7 invalid] $\n",  # not even an object
        "[S4 unknown_instance] $",
        "ui.events sent to the agent: 0",
        "still waiting for the user: True",  # S5: a surface's click authorizes nothing
        "the real card's answer: rejected",
        "[C6 invalid] $.event",  # undeclared event of an installed app
        "[C6 invalid] $.data.color",
        "[U3 too_large] $.payload.app",  # oversized bundle
        "signed: ['signed.01']",  # S7, H37: strict mode
        "unsigned                 refused [H37 untrusted_bundle] $.payload.app\n",
        "refused [H37 untrusted_bundle] $.payload.app.signature.key_id",
        "refused [H37 untrusted_bundle] $.payload.app.signature.value",
        "-> &lt;script&gt;alert(1)&lt;/script&gt;\n",  # S6, H15: raw HTML shown as text
        "script elements: 0",
        "event handler attributes: 0",
        "link targets: ['https://example.org', 'https://tracker.example/p.png']",
    ],
    "07-building-an-agent.ipynb": [
        "{'count': 1, 'last': 'Ada'}",  # the in-kernel agent answered the click
        "connected agent_greeter ['kernel.greeter', 'greeter.main']",  # H41: the process's id
        "{'count': 1, 'last': 'Grace'}",  # the process answered the click...
        "<p>Hello, <strong>Grace</strong>! (from process",  # ...and greeted
        "agent_kernel / agent_greeter",  # H8: each surface has its own owner
        "ended with code 0",  # U10: it left when the user closed its surface
        "the scripted user saw: {'count': 1, 'last': 'Ada'}",  # expect_async in a cell
        "and the greeter left with code 0",
        "1 passed",  # the ScriptedUser test, run by pytest
    ],
    "08-a-model-drives-the-agent.ipynb": [
        "'open_surface', 'patch_surface', 'close_surface', 'wait_for_event', 'say'",
        "'notes.save_count'",  # the inventory's capabilities, offered to the model (C4)
        "opened: Counter {'n': 0}",
        'tool wait_for_event -> {"event": "inc", "data": {"n": 1}}',  # U8: the click
        'tool ask_choice -> {"answer": "save"}',  # H14: the answer
        'tool call_capability -> {"status": "completed", "result": {"saved": 1}',  # C10
        "assistant: Done: counted, asked, saved.",
        "lineup.v1.app.call",
        "H6 unknown_instance",  # a refused tool call comes back as an error to read
    ],
    "09-mcp-apps.ipynb": [
        "McpServer('weather-app', ready",  # connected over stdio with the official SDK
        "refresh_weather  ['app'] read_only=True -> mcp.weather-app.refresh_weather",
        "forecast_text    ['model'] read_only=False -> None",  # never the app's
        "result: {'city': 'Oslo', 'temperature': 21}",  # tool-result
        "card: mcp.weather-app.refresh_weather user_confirmation",  # the app's call, consented
        "refresh answered: {'city': 'Oslo', 'temperature': 22}",
        "forecast_text refused: -32000 unsupported",  # C3
        "model context: The user is looking at Oslo.",
        # The inspector's MCP rows: the kernel's side of a call (the app's side is the page's
        # to record, and this run has no page).
        "to_server    mcp.tools/call",
        "app.calls: ['mcp.weather-app.refresh_weather', 'mcp.weather-app.forecast_text']",
        "surface state after the click: {'city': 'Oslo', 'temperature': 22}",
        "server: ended",
    ],
}


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


def test_every_notebook_has_expectations() -> None:
    """A new notebook needs an entry in EXPECTED; a removed one leaves none behind."""
    assert sorted(p.name for p in NOTEBOOKS) == sorted(EXPECTED)


def git_status(folder: Path) -> list[str]:
    """What git sees changed or new under ``folder`` (untracked files listed one by one)."""
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--", str(folder)],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """And leaves no trace (issue 24): nothing new or changed beside the notebooks, nothing in
    the user-wide data dir (the kernel's LINEUP_JUPYTER_HOME, an empty folder here): each
    notebook keeps its audit, apps and files in a scratch folder of its own."""
    home = tmp_path / "user-data"
    home.mkdir()
    monkeypatch.setenv("LINEUP_JUPYTER_HOME", str(home))  # the kernel inherits it
    before = git_status(path.parent)
    assert path.name in EXPECTED, f"add what {path.name} must show to EXPECTED"
    raw = json.loads(path.read_text("utf-8"))
    assert all(cell.get("id") for cell in raw["cells"]), "every cell has an id"
    notebook = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "outputs are stripped in the repo"
    )
    NotebookClient(
        notebook,
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert git_status(path.parent) == before, "the notebook left files in the repository"
    assert sorted(p.name for p in home.iterdir()) == [], "it wrote into the user's data dir"
    text = "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs
    )
    missing = [expected for expected in EXPECTED[path.name] if expected not in text]
    assert not missing, f"{path.name} did not show: {missing}"
