"""The inspector's records (issue 7): ``host.history`` filtered and exported, each surface's
states by revision, the calls and inventories derived from the history, and the widget's
messages to its views. Rule numbers: docs/rules.md, docs/protocol.md."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import Host, UsageError
from lineup_jupyter.host import _inspector as inspector
from lineup_jupyter.widgets._widget import InspectorWidget

from ..conftest import view_sends

AGENT = "agent_hermes_main"


@pytest.fixture
def host(tmp_path: Path) -> Host:
    return Host(conversation_id="conv_01", data_dir=tmp_path)


def sent_by(widget: InspectorWidget) -> list[tuple[dict[str, Any], list[bytes] | None]]:
    """What the widget sends to its views, kept instead of sent (no comm in a test)."""
    sent: list[tuple[dict[str, Any], list[bytes] | None]] = []
    widget.send = lambda content, buffers=None: sent.append((content, buffers))  # type: ignore[method-assign]
    return sent


def test_history_select_filters_by_type_instance_direction_and_kind(host: Host) -> None:
    agent = host.connect_agent(AGENT)
    agent.open("w1", html="<p>one</p>", state={"n": 0})
    agent.open("w2", html="<p>two</p>", state={"n": 0})
    agent.patch("w1", {"n": 1})
    host.user_event("w1", "refresh", {})
    assert host.receive({"v": 1}) is not None  # refused (M1): recorded as such

    history = host.history
    assert [r.instance_id for r in history.select(type="lineup.v1.ui.open")] == ["w1", "w2"]
    assert [r.type for r in history.select(instance_id="w1")] == [
        "lineup.v1.ui.open",
        "lineup.v1.ui.patch",
        "lineup.v1.ui.event",
    ]
    assert [r.type for r in history.select(instance_id="w1", direction="to_agent")] == [
        "lineup.v1.ui.event"
    ]
    (refused,) = history.select(kind="refused")
    assert refused.error is not None and refused.error["rule"].startswith("M")
    assert history.select(type="lineup.v1.ui.close") == []


def test_a_refusal_reported_by_a_surface_is_a_record_of_its_instance(host: Host) -> None:
    """S4: what the browser refused from a surface (here a CSP violation) is recorded against
    the instance, so the inspector can filter by it."""
    agent = host.connect_agent(AGENT)
    agent.open("w1", html="<p>one</p>", state={})
    view_sends(
        host.widget,
        {
            "kind": "refused",
            "instance_id": "w1",
            "code": "csp_violation",
            "rule": "S3",
            "message": "img-src",
        },
    )
    (record,) = host.history.select(kind="refused")
    assert record.instance_id == "w1"
    assert record.type == "lineup.surface.v1.event"  # the refused type, as it had none
    assert record.error is not None and record.error["code"] == "csp_violation"


def test_export_writes_every_record_whole_as_json_lines(host: Host, tmp_path: Path) -> None:
    agent = host.connect_agent(AGENT)
    big = "x" * (inspector.PREVIEW_CHARS * 3)
    agent.open("w1", html=f"<p>{big}</p>", state={})
    host.receive(b"not json")

    path = tmp_path / "history.jsonl"
    # the inventory, the open, the refused bytes, the error that told the agent (H3)
    assert host.history.export(path) == len(host.history) == 4
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert [line["seq"] for line in lines] == [r.seq for r in host.history]
    assert lines[1]["envelope"]["payload"]["app"]["html"] == f"<p>{big}</p>"  # not shortened
    assert lines[2]["kind"] == "refused" and lines[2]["error"]["code"] == "invalid_json"
    assert lines[3]["type"] == "lineup.v1.error"

    stream = io.StringIO()
    assert host.history.export(stream) == 4
    assert stream.getvalue() == path.read_text("utf-8")


def test_preview_cuts_long_strings_and_says_how_much(host: Host) -> None:
    agent = host.connect_agent(AGENT)
    big = "y" * (inspector.PREVIEW_CHARS + 10)
    agent.open("w1", html=big, state={"short": "kept"})
    shown = inspector.preview(host.history[-1])
    assert shown["envelope"]["payload"]["app"]["html"] == (
        "y" * inspector.PREVIEW_CHARS + "… [10 more characters]"
    )
    assert shown["envelope"]["payload"]["state"] == {"short": "kept"}


def test_state_history_keeps_each_revision_merges_included(host: Host) -> None:
    """U4, H6: every state a surface had, with the revision the view saw it under."""
    agent = host.connect_agent(AGENT)
    agent.open("w1", html="<p>x</p>", state={"n": 0})
    agent.patch("w1", {"n": 1})
    agent.patch("w1", {"m": 2}, merge=True)
    agent.open("w1", html="<p>replaced</p>", state={"fresh": True})  # U1: a replace
    agent.close("w1")
    states = host.state_history("w1")
    assert [(s.revision, s.state) for s in states] == [
        (1, {"n": 0}),
        (2, {"n": 1}),
        (3, {"n": 1, "m": 2}),
        (4, {"fresh": True}),
    ]  # kept after the close, for the inspector
    states[0].state["n"] = 99  # a copy: the host's record does not change
    assert host.state_history("w1")[0].state == {"n": 0}
    assert host.state_history("never-opened") == []


def test_state_history_is_bounded_per_instance_and_in_instances(tmp_path: Path) -> None:
    host = Host(conversation_id="conv_01", data_dir=tmp_path, state_history=2)
    agent = host.connect_agent(AGENT)
    agent.open("w1", html="<p>x</p>", state={"n": 0})
    for n in range(1, 5):
        agent.patch("w1", {"n": n})
    assert [s.revision for s in host.state_history("w1")] == [4, 5]
    for i in range(60):  # more instances than are remembered (50): the oldest are forgotten
        agent.open(f"s{i}", html="<p>x</p>", state={})
    assert host.state_history("w1") == []
    assert host.state_history("s59") != []


def test_state_history_zero_keeps_nothing_and_negative_is_refused(tmp_path: Path) -> None:
    host = Host(conversation_id="conv_01", data_dir=tmp_path, state_history=0)
    host.connect_agent(AGENT).open("w1", html="<p>x</p>", state={"n": 0})
    assert host.state_history("w1") == []
    with pytest.raises(UsageError, match="state_history"):
        Host(conversation_id="conv_01", data_dir=tmp_path, state_history=-1)


def test_calls_pair_each_app_call_with_its_result(host: Host) -> None:
    """C9-C12: a call that ran, one waiting for the user, one decided, a repeat of a call_id
    answered once, and a refused app.call, answered by a failed result (C10) with why."""

    @host.capability("demo.lookup", risk="display_only", input_schema={"type": "object"})
    def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"found": arguments.get("q")}

    agent = host.connect_agent(AGENT)
    agent.call("demo.lookup", {"q": "oslo"}, reason="look it up", call_id="call_1")
    agent.call("demo.lookup", {"q": "oslo"}, reason="look it up", call_id="call_1")  # C12
    agent.call("app.open_url", {"url": "https://example.com"}, reason="docs", call_id="call_2")
    agent.call("clipboard.write", {"text": "hi"}, reason="copy", call_id="call_3")
    host.decide("call_3", "deny")
    host.receive(
        {
            "v": 1,
            "id": "msg_bad_call",
            "type": "lineup.v1.app.call",
            "conversation_id": "conv_01",
            "sender": {"kind": "agent", "id": AGENT},
            "payload": {"call_id": "call_4", "capability": "demo.lookup"},
        }
    )
    summary = inspector.summarize(host.history)
    calls = {c["call_id"]: c for c in summary.calls(host.pending_calls)}
    assert list(calls) == ["call_1", "call_2", "call_3", "call_4"]
    assert calls["call_1"]["status"] == "completed"
    assert calls["call_1"]["result"] == {"found": "oslo"}
    assert calls["call_1"]["requests"] == 2
    assert calls["call_1"]["agent"] == AGENT and calls["call_1"]["capability"] == "demo.lookup"
    assert calls["call_2"]["status"] == "waiting for the user"
    assert calls["call_2"]["answered"] is None
    assert calls["call_3"]["status"] == "rejected"
    assert calls["call_3"]["refused"] is None
    assert calls["call_4"]["status"] == "failed"
    assert calls["call_4"]["refused"]["rule"] == "C9"  # reason and the rest are missing
    assert calls["call_4"]["capability"] == "demo.lookup"


def test_h27_two_agents_calls_under_one_call_id_are_two_rows(host: Host) -> None:
    """The call table is where a user reads whose call is whose: another agent's call under
    a call_id alice used is a row of its own, under its own name and status, never counted
    as a repeat of alice's (H27, as the broker keeps them apart)."""

    @host.capability("demo.lookup", risk="display_only", input_schema={"type": "object"})
    def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"found": arguments.get("q")}

    alice = host.connect_agent("alice")
    mallory = host.connect_agent("mallory")
    alice.call("demo.lookup", {"q": "oslo"}, reason="look it up", call_id="same_1")
    mallory.call("app.open_url", {"url": "https://example.com"}, reason="x", call_id="same_1")
    calls = inspector.summarize(host.history).calls(host.pending_calls)
    rows = [(c["call_id"], c["agent"], c["capability"], c["status"], c["requests"]) for c in calls]
    assert rows == [
        ("same_1", "alice", "demo.lookup", "completed", 1),
        ("same_1", "mallory", "app.open_url", "waiting for the user", 1),
    ]


def test_inventories_list_every_revision_sent(host: Host) -> None:
    """C1, C2: each client.inventory sent, with its revision and what it listed."""
    agent = host.connect_agent(AGENT)
    host.apps.install("com.lineup.svg-canvas")
    host.send_inventory(to=AGENT)
    sent = inspector.summarize(host.history).inventories()
    assert len(sent) >= 2 and sent[0]["to"] == AGENT
    revisions = [int(s["revision"]) for s in sent]
    assert revisions == sorted(revisions) and revisions[0] < revisions[-1]
    assert sent[0]["applications"] == []
    assert sent[-1]["applications"][0].startswith("com.lineup.svg-canvas ")
    assert "app.open_url (user_confirmation)" in sent[-1]["capabilities"]
    assert agent.inventory["revision"] == sent[-1]["revision"]


def test_surfaces_lists_open_ones_first_with_their_last_revision(host: Host) -> None:
    agent = host.connect_agent(AGENT)
    agent.open("gone", html="<p>x</p>", state={})
    agent.open("here", html="<p>x</p>", state={})
    agent.patch("here", {"n": 1})
    agent.close("gone")
    rows = inspector.surfaces(host.surfaces)
    assert [(r["instance_id"], r["open"], r["revision"]) for r in rows] == [
        ("here", True, 2),
        ("gone", False, 1),
    ]


def test_widget_sync_sends_every_record_then_only_new_ones_numbered(host: Host) -> None:
    agent = host.connect_agent(AGENT)
    agent.open("w1", html="<p>x</p>", state={"n": 0})
    widget = host.inspector
    assert host.inspector is widget  # one per host
    sent = sent_by(widget)

    view_sends(widget, {"kind": "sync"})
    reset = sent[-1][0]
    assert reset["kind"] == "reset" and reset["size"] == host.history.size
    assert [r["seq"] for r in reset["records"]] == [r.seq for r in host.history]
    assert reset["summary"]["surfaces"][0]["instance_id"] == "w1"

    agent.patch("w1", {"n": 1})  # no event loop in a test: sent at once
    update = sent[-1][0]
    assert update["kind"] == "records"
    assert update["after"] == reset["records"][-1]["seq"]  # a view detects a gap by it
    assert [r["type"] for r in update["records"]] == ["lineup.v1.ui.patch"]
    assert update["summary"]["surfaces"][0]["revision"] == 2


def test_widget_keeps_its_summary_up_to_date_one_record_at_a_time(host: Host) -> None:
    """What the view's last update says of calls and inventories is what a summary of the
    whole history says (C9-C12, C2), though each update only read the new records."""

    @host.capability("demo.lookup", risk="display_only")
    def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    agent = host.connect_agent(AGENT)
    widget = host.inspector
    sent = sent_by(widget)
    view_sends(widget, {"kind": "sync"})
    agent.call("demo.lookup", {}, reason="one", call_id="call_1")
    agent.call("app.open_url", {"url": "https://example.com"}, reason="two", call_id="call_2")
    host.decide("call_2", "deny")
    host.send_inventory()
    last = sent[-1][0]["summary"]
    whole = inspector.summarize(host.history)
    deciders = [call.pop("decided_by") for call in last["calls"]]
    assert last["calls"] == whole.calls(host.pending_calls)
    assert [c["status"] for c in last["calls"]] == ["completed", "rejected"]
    assert deciders == ["policy", "user"]  # C13: who decided, as the audit has it
    assert last["inventories"] == whole.inventories() and len(last["inventories"]) == 2


def test_summary_keeps_at_most_its_limit_of_calls_and_inventories(host: Host) -> None:
    @host.capability("demo.lookup", risk="display_only")
    def lookup(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    agent = host.connect_agent(AGENT)
    for n in range(3):
        agent.call("demo.lookup", {}, reason="again", call_id=f"call_{n}")
        host.send_inventory()
    summary = inspector.summarize(host.history, limit=2)
    assert [c["call_id"] for c in summary.calls([])] == ["call_1", "call_2"]
    assert len(summary.inventories()) == 2


def test_widget_answers_states_and_export(host: Host) -> None:
    agent = host.connect_agent(AGENT)
    agent.open("w1", html="<p>x</p>", state={"n": 0})
    agent.patch("w1", {"n": 1})
    widget = host.inspector
    sent = sent_by(widget)

    view_sends(widget, {"kind": "states", "instance_id": "w1"})
    states = sent[-1][0]
    assert [(s["revision"], s["state"]) for s in states["states"]] == [(1, {"n": 0}), (2, {"n": 1})]

    view_sends(widget, {"kind": "export"})
    content, buffers = sent[-1]
    assert content == {
        "kind": "export",
        "filename": "lineup-conv_01-history.jsonl",
        "count": len(host.history),
    }
    assert buffers is not None
    lines = buffers[0].decode("utf-8").splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [r.seq for r in host.history]


def test_h38_widget_refuses_a_message_it_does_not_understand(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    """H38: refused with its path, on record (so the inspector shows it) and in the log."""
    widget = host.inspector
    sent = sent_by(widget)
    view_sends(widget, {"kind": "rm -rf"})
    (record,) = host.history
    assert record.error is not None and (record.error["rule"], record.error["path"]) == (
        "H38",
        "$.kind",
    )
    assert [m["kind"] for m, _ in sent] == ["records"]  # only the record of the refusal
    assert "[lineup] a view message was refused at $.kind" in caplog.text


def test_the_inspector_costs_nothing_until_it_is_displayed() -> None:
    """No history watcher (and no widget module) until ``host.inspector`` is used."""
    code = (
        "import sys; from lineup_jupyter import Host; import tempfile\n"
        "host = Host(conversation_id='conv_01', data_dir=tempfile.mkdtemp())\n"
        "host.connect_agent('a1').open('w1', html='<p>x</p>', state={})\n"
        "assert not host.history._watchers, 'watched'\n"
        "assert 'lineup_jupyter.host._inspector' not in sys.modules, 'imported'\n"
        "host.inspector\n"
        "assert host.history._watchers\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_records_added_on_another_thread_are_sent_from_the_kernels_loop(tmp_path: Path) -> None:
    """An agent's reader thread adds a record: the view hears of it from the loop's thread
    (a widget's comm is not for other threads), paced, and numbered after the last."""
    import asyncio
    import threading

    async def cell() -> None:
        host = Host(conversation_id="conv_01", data_dir=tmp_path)
        widget = host.inspector  # made on the loop, as in a notebook cell
        senders: list[int] = []
        sent: list[dict[str, Any]] = []

        def send(content: dict[str, Any], buffers: Any = None) -> None:
            senders.append(threading.get_ident())
            sent.append(content)

        widget.send = send  # type: ignore[method-assign]
        host.connect_agent(AGENT)  # its inventory: a record before the sync
        view_sends(widget, {"kind": "sync"})
        worker = threading.Thread(target=lambda: host.receive(b"not json"))
        worker.start()
        worker.join()
        for _ in range(200):
            if len(sent) > 1:
                break
            await asyncio.sleep(0.01)
        assert sent[-1]["kind"] == "records" and sent[-1]["after"] == sent[0]["records"][-1]["seq"]
        assert [r["kind"] for r in sent[-1]["records"]] == ["refused", "envelope"]
        assert set(senders) == {threading.get_ident()}  # never the worker's thread
        host.close()

    asyncio.run(cell())
