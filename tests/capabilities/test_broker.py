"""The capability broker (C7-C13, H20-H25): every status path, every risk tier, a scripted user.

``host.decide`` is what the view calls on a click, so these tests act as the user through it.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import hashlib
import json
import sqlite3
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import (
    Capability,
    CapabilityError,
    Host,
    ProtocolError,
    UsageError,
    validate_envelope,
)

from ..conftest import AGENT, CONVERSATION, Recorder, consent_state, envelope, view_sends

FUTURE = "2099-01-01T00:00:00Z"


def call(
    call_id: str,
    capability: str,
    arguments: dict[str, Any] | None = None,
    *,
    expires_at: str = FUTURE,
    id_: str | None = None,
    reason: str = "because",
) -> dict[str, Any]:
    return envelope(
        "app.call",
        {
            "call_id": call_id,
            "capability": capability,
            "reason": reason,
            "expires_at": expires_at,
            "arguments": {} if arguments is None else arguments,
        },
        id_=id_ or f"msg_{call_id}_{threading.get_ident()}_{id(arguments)}",
    )


def results(sent: Recorder) -> list[dict[str, Any]]:
    out = []
    for message in sent.sent:
        if message["type"] == "lineup.v1.app.result":
            validate_envelope(message)  # C11: every answer is a valid app.result
            out.append(message["payload"])
    return out


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    return tmp_path / "artifacts"


@pytest.fixture
def host(artifacts: Path) -> Host:
    return Host(conversation_id=CONVERSATION, artifacts_dir=artifacts)


@pytest.fixture
def runs(host: Host) -> list[dict[str, Any]]:
    """Four custom capabilities, one per risk tier, recording every run of their handlers."""
    ran: list[dict[str, Any]] = []
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    for name, risk in (
        ("demo.show", "display_only"),
        ("demo.confirm", "user_confirmation"),
        ("demo.system", "system_permission"),
        ("demo.secret", "restricted"),
    ):

        def handler(arguments: dict[str, Any], name: str = name) -> dict[str, Any]:
            ran.append({"capability": name, **arguments})
            return {"done": name}

        host.capability(name, risk=risk, input_schema=schema)(handler)  # type: ignore[arg-type]
    return ran


# ---- the checks in order -------------------------------------------------------------


def test_c3_an_undeclared_capability_is_unsupported(host: Host, sent: Recorder) -> None:
    assert host.receive(call("c1", "weather.lookp")) is None
    (answer,) = results(sent)
    assert answer["status"] == "unsupported" and answer["error"]["rule"] == "C3"
    assert host.pending_calls == []


def test_c3_a_revoked_capability_is_unsupported_and_not_listed(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.capabilities.revoke("demo.show")
    host.receive(call("c1", "demo.show"))
    assert results(sent)[-1]["status"] == "unsupported" and runs == []
    assert "demo.show" not in [c["name"] for c in host.inventory["capabilities"]]
    host.capabilities.restore("demo.show")
    host.receive(call("c2", "demo.show"))
    assert results(sent)[-1]["status"] == "completed"


def test_c3_a_capability_for_some_callers_is_unsupported_and_unlisted_for_the_rest(
    host: Host, sent: Recorder
) -> None:
    """Capability.callers (an MCP server's tools: its own agent's only). The control: the
    same capability runs for the agent it names."""
    ran: list[dict[str, Any]] = []
    host.capabilities.declare(
        Capability(
            "own.tool",
            "display_only",
            handler=lambda arguments: ran.append(arguments) or {},
            callers=frozenset({"agent_owner"}),
        )
    )
    host.receive(call("c1", "own.tool"))  # from AGENT
    (answer,) = results(sent)
    assert answer["status"] == "unsupported" and answer["error"]["rule"] == "C3"
    assert "own.tool" not in answer["error"]["message"].split("declared:")[-1]  # not listed
    assert "own.tool" not in [c["name"] for c in host.inventory["capabilities"]]
    assert "own.tool" not in [c["name"] for c in host.send_app_list()["payload"]["capabilities"]]
    owner = envelope(
        "app.call",
        {
            "call_id": "c2",
            "capability": "own.tool",
            "reason": "r",
            "expires_at": FUTURE,
            "arguments": {},
        },
        sender="agent_owner",
        id_="msg_owner",
    )
    assert host.receive(owner) is None
    assert results(sent)[-1]["status"] == "completed" and ran == [{}]


def test_h20_a_call_expired_on_arrival_is_expired_without_a_prompt(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.confirm", expires_at="2020-01-01T00:00:00Z"))
    (answer,) = results(sent)
    assert answer["status"] == "expired" and answer["error"]["rule"] == "H20"
    assert host.pending_calls == [] and runs == []


def test_c7_arguments_failing_the_schema_fail_with_the_argument_path(
    host: Host, sent: Recorder
) -> None:
    host.receive(call("c1", "artifact.save", {"path": 5, "content": "x"}))
    host.receive(call("c2", "app.open_url", {"url": "javascript:alert(1)"}))
    host.receive(call("c3", "artifact.save", {"path": "a.txt"}))
    first, second, third = results(sent)
    assert (first["status"], first["error"]["path"]) == ("failed", "$.payload.arguments.path")
    assert second["error"]["path"] == "$.payload.arguments.url"
    assert (
        third["error"]["path"] == "$.payload.arguments" and "content" in third["error"]["message"]
    )
    assert {a["error"]["rule"] for a in (first, second, third)} == {"C7"}
    assert host.pending_calls == []


def test_checks_run_in_order_unsupported_before_expired_before_schema(
    host: Host, sent: Recorder
) -> None:
    """docs/capabilities.md: each failure has one deterministic status."""
    host.receive(call("c1", "nope.none", {"bad": 1}, expires_at="2020-01-01T00:00:00Z"))
    host.receive(call("c2", "artifact.save", {"bad": 1}, expires_at="2020-01-01T00:00:00Z"))
    assert [a["status"] for a in results(sent)] == ["unsupported", "expired"]


# ---- risk tiers and the policy (C8, C10) -----------------------------------------------


def test_c8_display_only_runs_without_a_prompt(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.show", {"n": 1}))
    (answer,) = results(sent)
    assert answer == {"call_id": "c1", "status": "completed", "result": {"done": "demo.show"}}
    assert runs == [{"capability": "demo.show", "n": 1}]
    assert host.audit.query(call_id="c1")[0]["decided_by"] == "policy"


def test_c10_user_confirmation_waits_for_the_user_then_runs_once(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.confirm", {"n": 2}))
    assert results(sent) == [] and runs == []
    (pending,) = host.pending_calls
    assert (pending.call_id, pending.capability.name, pending.reason) == (
        "c1",
        "demo.confirm",
        "because",
    )
    answer = host.decide("c1", "allow")
    assert answer["status"] == "completed" and results(sent) == [answer]
    assert runs == [{"capability": "demo.confirm", "n": 2}] and host.pending_calls == []
    with pytest.raises(UsageError, match="already answered"):
        host.decide("c1", "allow")


@pytest.mark.parametrize(("decision", "status"), [("deny", "rejected"), ("cancel", "cancelled")])
def test_c10_deny_is_rejected_and_closing_is_cancelled(
    host: Host, sent: Recorder, runs: list[dict[str, Any]], decision: str, status: str
) -> None:
    host.receive(call("c1", "demo.system"))
    host.decide("c1", decision)  # type: ignore[arg-type]
    (answer,) = results(sent)
    assert answer["status"] == status and runs == []
    row = host.audit.query(call_id="c1")[0]
    assert (row["decision"], row["decided_by"], row["status"]) == (decision, "user", status)


def test_c8_remember_for_the_session_then_revoke(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.confirm"))
    host.decide("c1", "allow", remember=True)
    assert host.policy.remembered == [  # whose grant it is (H27): this kernel agent's alone
        {"capability": "demo.confirm", "agent": AGENT, "session": 0, "via": "the kernel"}
    ]
    host.receive(call("c2", "demo.confirm"))
    assert results(sent)[-1]["status"] == "completed" and host.pending_calls == []
    assert host.audit.query(call_id="c2")[0]["decided_by"] == "remembered"
    host.policy.revoke("demo.confirm")
    host.receive(call("c3", "demo.confirm"))
    assert [c.call_id for c in host.pending_calls] == ["c3"]
    grants = [(r["event"], r["decision"]) for r in host.audit.query() if r["event"] == "grant"]
    assert grants == [("grant", "remember"), ("grant", "revoke")]  # C13: grants are on record


@pytest.mark.parametrize("name", ["demo.system", "demo.secret", "app.open_url", "device.pick_file"])
def test_c8_the_higher_tiers_and_browser_capabilities_are_never_remembered(
    host: Host, runs: list[dict[str, Any]], name: str
) -> None:
    with pytest.raises(UsageError, match="cannot be pre-allowed"):
        host.policy.allow(name)
    host.receive(call("c1", name, {"url": "https://example.org"} if name == "app.open_url" else {}))
    with pytest.raises(UsageError, match="cannot be remembered"):
        host.decide(
            "c1", "allow", remember=True, typed_name=name, outcome={"ok": True, "result": {}}
        )
    assert [c.call_id for c in host.pending_calls] == ["c1"]  # still waiting, nothing ran
    assert runs == [] and host.policy.remembered == []


def test_c8_system_permission_prompts_every_time(host: Host, runs: list[dict[str, Any]]) -> None:
    for n in range(2):
        host.receive(call(f"c{n}", "demo.system"))
        assert [c.call_id for c in host.pending_calls] == [f"c{n}"]
        host.decide(f"c{n}", "allow")
    assert len(runs) == 2


def test_h23_restricted_needs_its_name_typed(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.secret"))
    for typed in (None, "", "demo.secre", "DEMO.SECRET"):
        with pytest.raises(UsageError, match="type its name"):
            host.decide("c1", "allow", typed_name=typed)
    assert runs == [] and results(sent) == []
    assert host.decide("c1", "allow", typed_name="demo.secret")["status"] == "completed"


def test_policy_pre_allow_runs_without_a_prompt(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.policy.allow("demo.confirm")
    host.receive(call("c1", "demo.confirm"))
    assert results(sent)[-1]["status"] == "completed" and len(runs) == 1


def test_c7_policy_deny_hides_the_capability_and_rejects_its_calls(
    host: Host, runs: list[dict[str, Any]]
) -> None:
    """A visibility change makes a new inventory revision, sent to the agents (C4)."""
    agent = host.connect_agent("a1")
    assert agent.inventory is not None
    before = agent.inventory["revision"]
    host.policy.deny("demo.show")
    assert agent.inventory["revision"] == str(int(before) + 1)
    assert "demo.show" not in [c["name"] for c in agent.inventory["capabilities"]]
    listed = host.send_app_list()["payload"]["capabilities"]
    assert "demo.show" not in [c["name"] for c in listed]
    validate_envelope(host.send_app_list())
    handle = agent.call("demo.show", reason="show")
    assert handle.result().status == "rejected" and runs == []
    assert host.audit.query(call_id=handle.call_id)[0]["decided_by"] == "policy"
    host.policy.ask("demo.show")
    assert agent.inventory["revision"] == str(int(before) + 2)
    host.policy.allow("demo.confirm")  # visible before and after: no new revision
    assert agent.inventory["revision"] == str(int(before) + 2)


def test_c7_app_list_and_inventory_are_the_registry(host: Host) -> None:
    names = ["artifact.save", "app.open_url", "clipboard.write", "device.pick_file"]
    assert [c["name"] for c in host.inventory["capabilities"]] == names
    app_list = host.send_app_list()
    validate_envelope(app_list)
    entry = app_list["payload"]["capabilities"][1]
    assert entry["risk"] == "user_confirmation" and entry["input_schema"]["required"] == ["url"]


def test_a_bad_declaration_is_refused(host: Host) -> None:
    with pytest.raises(UsageError, match="dotted lower case"):
        host.capability("Weather", risk="display_only")(lambda a: a)
    with pytest.raises(UsageError, match="risk"):
        host.capability("a.b", risk="whatever")(lambda a: a)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="not a valid JSON Schema"):
        host.capability("a.b", risk="display_only", input_schema={"type": 5})(lambda a: a)


# ---- idempotency (C12, H22) ---------------------------------------------------------------


def test_c12_a_repeat_after_the_answer_gets_it_again_without_running(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.confirm", {"n": 1}, id_="m1"))
    host.decide("c1", "allow")
    host.receive(call("c1", "demo.confirm", {"n": 1}, id_="m2"))
    first, second = results(sent)
    assert first == second and len(runs) == 1 and host.pending_calls == []


def test_c12_h22_a_repeat_while_waiting_is_answered_with_the_first(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.confirm", id_="m1"))
    host.receive(call("c1", "demo.confirm", id_="m2"))
    assert len(host.pending_calls) == 1 and results(sent) == []
    host.decide("c1", "allow")
    first, second = results(sent)
    assert first == second and first["status"] == "completed" and len(runs) == 1


def test_c12_concurrent_repeats_make_one_prompt_and_one_run(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    start = threading.Barrier(8)

    def send(n: int) -> None:
        start.wait()
        host.receive(call("c1", "demo.confirm", id_=f"m{n}"))

    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(host.pending_calls) == 1
    host.decide("c1", "allow")
    answers = results(sent)
    assert len(answers) == 8 and all(a == answers[0] for a in answers) and len(runs) == 1


def test_c12_a_call_id_reused_with_other_arguments_is_refused(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.confirm", {"n": 1}, id_="m1"))
    error = host.receive(call("c1", "demo.confirm", {"n": 2}, id_="m2"))
    assert error is not None and (error.code, error.rule) == ("call_conflict", "C12")
    assert [c.arguments for c in host.pending_calls] == [{"n": 1}]
    assert host.decide("c1", "allow")["status"] == "completed"
    assert runs == [{"capability": "demo.confirm", "n": 1}]


def test_c12_agent_call_refused_as_a_conflict_leaves_the_waiting_handle_alone(
    host: Host, runs: list[dict[str, Any]]
) -> None:
    """The conflicting agent.call raises; the first call's handle still gets its result,
    and a completed call's conflict leaves no handle waiting for an answer that never comes."""
    agent = host.connect_agent("agent_1")
    first = agent.call("demo.confirm", {"n": 1}, reason="first", call_id="c1")
    with pytest.raises(ProtocolError, match="C12"):
        agent.call("demo.confirm", {"n": 2}, reason="again", call_id="c1")
    host.decide("c1", "allow")
    assert first.done() and first.result().status == "completed"

    agent.call("demo.show", {"n": 1}, reason="quick", call_id="c2")  # answered at once
    with pytest.raises(ProtocolError, match="C12"):
        agent.call("demo.show", {"n": 2}, reason="again", call_id="c2")
    assert agent._calls == {}  # nothing left waiting


# ---- expiry while waiting (H20) ----------------------------------------------------------


def test_h20_the_kernel_timer_expires_a_waiting_call_and_its_card_goes(
    host: Host, sent: Recorder, fed: Any, runs: list[dict[str, Any]]
) -> None:
    agent = host.connect_agent("a1")
    handle = agent.call("demo.confirm", reason="soon gone", expires_in=1.0, call_id="c1")
    assert consent_state(fed)["pending"][0]["call_id"] == "c1"  # waits for the user
    assert handle.result(timeout=30).status == "expired"  # the timer, not a test, ended it
    (answer,) = results(sent)
    assert answer["status"] == "expired" and answer["error"]["rule"] == "H20" and runs == []
    assert host.pending_calls == [] and consent_state(fed)["pending"] == []
    with pytest.raises(UsageError, match="already answered"):
        host.decide("c1", "allow")


def test_h20_deciding_after_the_time_passed_gives_expired(
    host: Host, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.confirm"))
    (pending,) = host.pending_calls
    pending.expires_at = datetime.now(timezone.utc) - timedelta(seconds=1)  # timer not yet run
    assert host.decide("c1", "allow")["status"] == "expired" and runs == []


# ---- handlers (H24) -----------------------------------------------------------------------


def test_h24_a_raising_handler_fails_with_a_sanitized_message(host: Host, sent: Recorder) -> None:
    @host.capability("demo.boom", risk="display_only")
    def boom(arguments: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("token=hunter2 at /home/me/secret")

    @host.capability("demo.refuse", risk="display_only")
    def refuse(arguments: dict[str, Any]) -> dict[str, Any]:
        raise CapabilityError("city unknown", path="$.payload.arguments.city")

    @host.capability("demo.tuple", risk="display_only")
    def not_json(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"xy": (1, 2)}

    @host.capability("demo.list", risk="display_only")
    def not_object(arguments: dict[str, Any]) -> Any:
        return [1]

    for name in ("demo.boom", "demo.refuse", "demo.tuple", "demo.list"):
        host.receive(call(name.replace(".", "_"), name))
    boom_, refuse_, tuple_, list_ = results(sent)
    assert boom_["status"] == "failed" and "RuntimeError" in boom_["error"]["message"]
    assert "hunter2" not in str(boom_) and "/home/me" not in str(boom_)
    assert refuse_["error"]["message"] == "city unknown"
    assert refuse_["error"]["path"] == "$.payload.arguments.city"
    assert (
        tuple_["status"] == "failed" and tuple_["error"]["path"] == "$.result.xy"
    )  # where in the result
    assert list_["status"] == "failed" and "not a JSON object" in list_["error"]["message"]


def test_a_handler_cannot_change_the_recorded_arguments(host: Host) -> None:
    @host.capability("demo.mutate", risk="user_confirmation")
    def mutate(arguments: dict[str, Any]) -> None:
        arguments["n"] = 99

    host.receive(call("c1", "demo.mutate", {"n": 1}))
    host.decide("c1", "allow")
    assert host.receive(call("c1", "demo.mutate", {"n": 1}, id_="again")) is None  # same request


# ---- capabilities the browser runs (H21) -------------------------------------------------


def test_h21_a_browser_capability_is_decided_only_with_the_browsers_report(
    host: Host, sent: Recorder
) -> None:
    host.receive(call("c1", "app.open_url", {"url": "https://example.org/docs"}))
    with pytest.raises(UsageError, match="runs in the browser"):
        host.decide("c1", "allow")
    answer = host.decide("c1", "allow", outcome={"ok": True, "result": {"opened": True}})
    assert answer["result"] == {"url": "https://example.org/docs"}


def test_h21_a_browser_failure_fails_the_call(host: Host) -> None:
    host.receive(call("c1", "clipboard.write", {"text": "hi"}))
    answer = host.decide("c1", "allow", outcome={"ok": False, "message": "NotAllowedError"})
    assert answer["status"] == "failed" and "NotAllowedError" in answer["error"]["message"]


@pytest.mark.parametrize(
    "url",
    ["http://example.org", "https://example.org/a?b#c"],
)
def test_h21_open_url_takes_http_and_https(host: Host, url: str) -> None:
    host.receive(call("c1", "app.open_url", {"url": url}))
    assert len(host.pending_calls) == 1


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,x",
        "file:///etc/passwd",
        "https://bank.example@evil.example/",
        "ftp://x.org",
        "https://",
    ],
)
def test_h21_open_url_refuses_every_other_scheme(host: Host, sent: Recorder, url: str) -> None:
    host.receive(call("c1", "app.open_url", {"url": url}))
    assert results(sent)[0]["status"] == "failed" and host.pending_calls == []


def _picked(data: bytes, **changes: Any) -> dict[str, Any]:
    report = {
        "name": "notes.txt",
        "size": len(data),
        "media_type": "text/plain",
        "sha256": hashlib.sha256(data).hexdigest(),
        "content_base64": base64.b64encode(data).decode(),
    }
    return {"ok": True, "result": {**report, **changes}}


def test_h21_pick_file_result_is_checked_against_its_content(host: Host) -> None:
    host.receive(call("c1", "device.pick_file"))
    answer = host.decide("c1", "allow", outcome=_picked(b"hello"))
    assert answer["status"] == "completed"
    assert answer["result"]["content_base64"] == base64.b64encode(b"hello").decode()
    assert answer["result"]["content_included"] is True
    host.receive(call("c2", "device.pick_file"))
    forged = host.decide("c2", "allow", outcome=_picked(b"hello", sha256="0" * 64))
    assert forged["status"] == "failed" and "sha256" in forged["error"]["message"]


# ---- artifact.save (H25) -----------------------------------------------------------------


def save(host: Host, path: str, content: str = "data", call_id: str = "s1") -> dict[str, Any]:
    host.receive(call(call_id, "artifact.save", {"path": path, "content": content}))
    return host.decide(call_id, "allow")


def test_h25_artifact_save_writes_inside_the_folder_and_never_overwrites(
    host: Host, artifacts: Path
) -> None:
    first = save(host, "reports/q1.csv", "a,b", "s1")
    assert first["result"]["path"] == "reports/q1.csv" and first["result"]["renamed"] is False
    assert (artifacts / "reports" / "q1.csv").read_text() == "a,b"
    second = save(host, "reports/q1.csv", "c,d", "s2")
    assert second["result"] == {
        "path": "reports/q1-1.csv",
        "bytes": 3,
        "sha256": hashlib.sha256(b"c,d").hexdigest(),
        "renamed": True,
    }
    assert (artifacts / "reports" / "q1.csv").read_text() == "a,b"  # untouched


@pytest.mark.parametrize(
    "path",
    [
        "../escape.txt",
        "a/../../escape.txt",
        "/tmp/escape.txt",
        "a//b",
        "./x",
        "a\\..\\x",
        "C:x",
        "a\x00b",
    ],
)
def test_h25_no_path_leaves_the_artifacts_folder(
    host: Host, artifacts: Path, tmp_path: Path, path: str
) -> None:
    answer = save(host, path)
    assert answer["status"] == "failed" and answer["error"]["path"] == "$.payload.arguments.path"
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == []


def test_h25_a_symlinked_folder_inside_is_not_followed(
    host: Host, artifacts: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    artifacts.mkdir()
    (artifacts / "link").symlink_to(outside, target_is_directory=True)
    answer = save(host, "link/stolen.txt")
    assert answer["status"] == "failed" and "symlink" in answer["error"]["message"]
    assert list(outside.iterdir()) == []


def test_h25_a_symlink_at_the_file_name_is_not_written_through(
    host: Host, artifacts: Path, tmp_path: Path
) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("original")
    artifacts.mkdir()
    (artifacts / "out.txt").symlink_to(target)
    answer = save(host, "out.txt", "evil")
    assert answer["result"]["path"] == "out-1.txt"
    assert target.read_text() == "original"


# ---- audit (C13) ----------------------------------------------------------------------------


def test_c13_every_answer_is_audited_with_a_verifiable_chain(
    host: Host, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.show", {"n": 1}))
    host.receive(call("c2", "demo.confirm"))
    host.decide("c2", "deny")
    host.receive(call("c3", "none.such"))
    rows = list(host.audit.query())
    assert [(r["call_id"], r["status"]) for r in rows] == [
        ("c1", "completed"),
        ("c2", "rejected"),
        ("c3", "unsupported"),
    ]
    first = rows[0]
    assert first["capability"] == "demo.show" and first["risk"] == "display_only"
    assert first["agent"] == AGENT and first["reason"] == "because"
    assert first["arguments_digest"] == hashlib.sha256(b'{"n":1}').hexdigest()
    assert first["received_at"] and first["decided_at"] and first["answered_at"]
    assert rows[1]["prev_hash"] == rows[0]["hash"]
    verdict = host.audit.verify()
    assert verdict.ok and verdict.rows == 3


@pytest.mark.parametrize(
    ("sql", "broken"),
    [
        ("UPDATE audit SET status = 'rejected' WHERE seq = 2", 2),
        ("DELETE FROM audit WHERE seq = 2", 3),
        ("UPDATE audit SET hash = 'x' WHERE seq = 1", 1),
    ],
)
def test_c13_tampering_is_found_at_the_first_broken_row(
    host: Host, runs: list[dict[str, Any]], sql: str, broken: int
) -> None:
    for n in range(4):
        host.receive(call(f"c{n}", "demo.show"))
    with sqlite3.connect(host.audit.path) as db:
        db.execute(sql)
    verdict = host.audit.verify()
    assert not verdict.ok and verdict.first_broken == broken and verdict.problem


def test_c13_two_kernels_share_one_chain(tmp_path: Path) -> None:
    hosts = [Host(conversation_id=f"conv_{n}", data_dir=tmp_path) for n in range(2)]
    for n in range(3):
        for host in hosts:
            message = call(f"c{n}", "none.such")
            message["conversation_id"] = host.conversation_id
            assert host.receive(message) is None
    assert hosts[0].audit.verify().rows == 6 and hosts[1].audit.verify().ok
    every = hosts[0].audit.query(conversation_id=None)  # one chain, both conversations
    assert {r["conversation_id"] for r in every} == {"conv_0", "conv_1"}


def test_c13_a_refused_call_is_audited_too(host: Host) -> None:
    bad = call("c1", "demo.show")
    bad["payload"]["expires_at"] = "soon"
    host.receive(bad)
    (row,) = host.audit.query()
    assert (row["call_id"], row["status"]) == ("c1", "failed")


def test_c13_the_audit_table_escapes_what_agents_wrote(host: Host) -> None:
    host.receive(call("c1", "none.such", reason="<img src=x onerror=alert(1)>"))
    html = host.audit._repr_html_()
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_data_dir_is_argument_then_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lineup_jupyter.runtime._store import data_dir

    monkeypatch.setenv("LINEUP_JUPYTER_HOME", str(tmp_path / "env"))
    assert data_dir(tmp_path / "arg") == tmp_path / "arg"
    assert data_dir() == tmp_path / "env"
    monkeypatch.delenv("LINEUP_JUPYTER_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "lineup-jupyter"
    host = Host(conversation_id="c", data_dir=tmp_path / "arg")
    assert host.audit.path == tmp_path / "arg" / "audit.sqlite3"


# ---- the agent's side ----------------------------------------------------------------------


def test_agent_call_resolves_its_handle_and_callbacks(
    host: Host, runs: list[dict[str, Any]]
) -> None:
    agent = host.connect_agent("a1")
    seen: list[str] = []
    handle = agent.call("demo.confirm", {"n": 3}, reason="why")
    handle.add_done_callback(lambda result: seen.append(result.status))
    assert not handle.done() and seen == []
    host.decide(handle.call_id, "allow")
    assert handle.done() and seen == ["completed"]
    assert handle.result().result == {"done": "demo.confirm"} and handle.result().ok


def test_await_a_handle_while_the_user_decides(host: Host, runs: list[dict[str, Any]]) -> None:
    """ipykernel 7.4 handles the click while the cell awaits; here the click is a loop task."""
    agent = host.connect_agent("a1")

    async def cell() -> str:
        handle = agent.call("demo.confirm", reason="why")
        asyncio.get_running_loop().call_soon(host.decide, handle.call_id, "allow")
        result = await handle
        return result.status

    assert asyncio.run(cell()) == "completed"


def test_a_decision_from_another_thread_wakes_the_awaiting_cell(
    host: Host, runs: list[dict[str, Any]]
) -> None:
    """ipykernel 7.0-7.3 run comm handlers on a subshell thread: resolved thread-safely."""
    agent = host.connect_agent("a1")

    async def cell() -> str:
        handle = agent.call("demo.confirm", reason="why")
        threading.Thread(target=host.decide, args=(handle.call_id, "deny")).start()
        return (await handle).status

    assert asyncio.run(cell()) == "rejected"


def test_blocking_on_the_event_loop_thread_says_to_await(
    host: Host, runs: list[dict[str, Any]]
) -> None:
    agent = host.connect_agent("a1")

    async def cell() -> None:
        handle = agent.call("demo.confirm", reason="why")
        with pytest.raises(UsageError, match="await"):
            handle.result()

    asyncio.run(cell())


# ---- what the view sends -------------------------------------------------------------------


def test_two_views_deciding_at_once_one_wins(
    host: Host, sent: Recorder, fed: Any, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.confirm"))
    view_sends(fed, {"kind": "consent_decide", "call_id": "c1", "decision": "allow"})
    view_sends(fed, {"kind": "consent_decide", "call_id": "c1", "decision": "deny"})
    assert [a["status"] for a in results(sent)] == ["completed"] and len(runs) == 1
    state = consent_state(fed)
    assert state["pending"] == []
    assert state["recent"][0] == {
        "call_id": "c1",
        "capability": "demo.confirm",
        "status": "completed",
        "decided_by": "user",
    }


def test_the_view_state_carries_what_the_card_shows(
    host: Host, fed: Any, runs: list[dict[str, Any]]
) -> None:
    host.receive(call("c1", "demo.secret", {"n": 1}, reason="needs the key"))
    (spec,) = consent_state(fed)["pending"]
    assert spec["capability"] == "demo.secret" and spec["risk"] == "restricted"
    assert spec["reason"] == "needs the key" and spec["arguments"] == {"n": 1}
    assert spec["agent"] == AGENT and spec["typed_name_required"] is True
    assert spec["remember_allowed"] is False and spec["remaining_ms"] > 0
    # An agent's reason is its words; the notebook's own capability is described by the host.
    assert (spec["reason_by"], spec["description_by"]) == ("agent", "host")


def test_a_card_names_the_owner_of_each_url_by_the_public_suffix_list(host: Host, fed: Any) -> None:
    """Issue 22 §2: the kernel names who owns each URL's host; the page only marks it."""
    url = "https://evil-corp.s3.amazonaws.com/login"
    host.receive(call("c1", "app.open_url", {"url": url}, reason="log in"))
    (spec,) = consent_state(fed)["pending"]
    assert spec["owners"] == {"evil-corp.s3.amazonaws.com": "evil-corp.s3.amazonaws.com"}


def test_the_widget_relays_consent_both_ways(host: Host, runs: list[dict[str, Any]]) -> None:
    widget = host.widget
    widget.sent = []
    widget.send = lambda content, buffers=None: widget.sent.append(content)
    view_sends(widget, {"kind": "consent_sync"})
    assert widget.sent[-1] == {
        "kind": "consent",
        "seq": 1,
        "pending": [],
        "remembered": [],
        "recent": [],
    }
    host.receive(call("c1", "demo.confirm"))
    assert widget.sent[-1]["kind"] == "consent_delta" and widget.sent[-1]["seq"] == 2
    assert [spec["call_id"] for spec in widget.sent[-1]["added"]] == ["c1"]
    before = len(widget.sent)
    view_sends(
        widget, {"kind": "consent_decide", "call_id": "c1", "decision": "allow", "remember": True}
    )
    changes = widget.sent[before:]
    assert [key for change in changes for key in change["removed"]] == ["c1"]
    assert [change["seq"] for change in changes] == list(range(3, 3 + len(changes)))
    assert [[g["capability"] for g in c["remembered"]] for c in changes if "remembered" in c] == [
        ["demo.confirm"]
    ]
    view_sends(widget, {"kind": "consent_revoke", "capability": "demo.confirm", "session": 0})
    assert widget.sent[-1]["remembered"] == [] and "recent" not in widget.sent[-1]
    view_sends(widget, {"kind": "consent_sync"})  # a view (re)drawn: everything
    assert widget.sent[-1]["kind"] == "consent" and widget.sent[-1]["recent"][0]["call_id"] == "c1"


def test_a_waiting_card_is_sent_alone_however_many_wait(
    host: Host, runs: list[dict[str, Any]]
) -> None:
    """The 200th waiting card costs what the first did: a consent change goes alone (with
    the H44 bound on waiting calls raised to 200 for it)."""
    host.limits = dataclasses.replace(host.limits, max_waiting_calls=200)
    widget = host.widget
    sizes: list[int] = []
    widget.send = lambda content, buffers=None: sizes.append(len(json.dumps(content)))
    view_sends(widget, {"kind": "consent_sync"})
    for n in range(1, 201):
        host.receive(call(f"c{n:03}", "demo.confirm"))
    assert len(host.pending_calls) == 200
    assert sizes[-1] <= 1.1 * sizes[1]


def test_c3_h26_revoking_or_denying_ends_the_calls_that_wait(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    """Nothing the user might still click runs a capability withdrawn while its call waits."""
    host.receive(call("c1", "demo.confirm"))
    host.receive(call("c2", "demo.system"))
    host.capabilities.revoke("demo.confirm")
    host.policy.deny("demo.system")
    assert host.pending_calls == [] and runs == []
    first, second = results(sent)
    assert (first["call_id"], first["status"]) == ("c1", "unsupported")
    assert (second["call_id"], second["status"]) == ("c2", "rejected")
    assert host.audit.query(call_id="c2")[0]["decided_by"] == "policy"


def test_c10_an_audit_that_cannot_be_written_still_answers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The agent never waits forever; the failure is logged as an error for the user."""
    (tmp_path / "audit.sqlite3").mkdir()  # a folder where the database file should be
    host = Host(conversation_id=CONVERSATION, data_dir=tmp_path)
    sent = Recorder(host)
    host.receive(call("c1", "none.such"))
    assert [a["status"] for a in results(sent)] == ["unsupported"]
    assert any("audit could not be written" in r.getMessage() for r in caplog.records)


def test_a_decision_the_kernel_refuses_is_told_to_the_view(
    host: Host, fed: Any, runs: list[dict[str, Any]]
) -> None:
    """The card is made usable again with the reason, instead of waiting forever."""
    host.receive(call("c1", "demo.secret"))
    view_sends(
        fed, {"kind": "consent_decide", "call_id": "c1", "decision": "allow", "typed_name": "nope"}
    )
    assert fed.sent[-1]["refused"]["call_id"] == "c1"
    assert "type its name" in fed.sent[-1]["refused"]["message"]
    assert [c.call_id for c in host.pending_calls] == ["c1"] and runs == []
    assert "refused" not in consent_state(fed)


def test_h20_a_timer_that_fires_early_looks_again_instead_of_expiring(
    host: Host, sent: Recorder, runs: list[dict[str, Any]]
) -> None:
    """Expiry timers wait at most a day at a time; one that fires before expires_at (as the
    first step of a long wait does) re-arms and the call keeps waiting."""
    host.receive(call("c1", "demo.confirm", expires_at="9999-12-31T23:59:59Z"))
    host._broker._expire("c1")  # what the timer does when its step ends
    assert [c.call_id for c in host.pending_calls] == ["c1"] and results(sent) == []
    assert host.decide("c1", "allow")["status"] == "completed"


def test_c7_the_builtin_capabilities_input_schemas_are_valid(host: Host) -> None:
    """The built-ins are declared without a schema check (_schemas.py says why): check here."""
    from lineup_jupyter.core._schemas import schema_error

    builtins = [host.capabilities.get(name) for name in host.capabilities]
    assert builtins and all(
        c is not None and schema_error(c.input_schema) is None for c in builtins
    )


def test_a_host_in_a_fresh_interpreter_does_not_import_jsonschema() -> None:
    """jsonschema's import costs seconds in a Jupyter environment (_schemas.py): a kernel that
    makes a host and talks to it without checking a schema must not pay for it."""
    import subprocess
    import sys

    code = (
        "import sys, lineup_jupyter as l\n"
        "h = l.Host('conv_1'); a = h.connect_agent('a'); a.say('**hi**'); h.inventory\n"
        "assert 'jsonschema' not in sys.modules, 'jsonschema was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
