"""The headless host: Host.receive / Host.subscribe, surfaces, refusals, and the agent helper."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lineup_jupyter import Host, ProtocolError, SurfaceChange, UsageError, bundle_integrity
from lineup_jupyter.protocol import Limits, validate_envelope

from ..conftest import AGENT, CONVERSATION, Recorder, envelope, open_payload
from ..receive_contract import snapshot  # everything a refused message must leave as it was


def opened(host: Host, instance_id: str = "w", sender: str = AGENT, **state: Any) -> None:
    assert (
        host.receive(
            envelope(
                "ui.open",
                open_payload(instance_id, **state),
                id_=f"open-{instance_id}-{len(host.history)}",
                sender=sender,
            )
        )
        is None
    )


def assert_refused_once(
    host: Host, sent: Recorder, message: Any, code: str, rule: str
) -> dict[str, Any]:
    """H3: refused, nothing changed, exactly one lineup.v1.error back, itself a valid envelope."""
    before, count = snapshot(host), len(sent.sent)
    error = host.receive(message)
    assert isinstance(error, ProtocolError)
    assert (error.code, error.rule) == (code, rule)
    assert snapshot(host) == before
    assert len(sent.sent) == count + 1
    answer = sent.last()
    validate_envelope(answer)
    assert answer["type"] == "lineup.v1.error"
    assert answer["payload"]["code"] == code and answer["payload"]["rule"] == rule
    return answer


def test_open_patch_close(host: Host, sent: Recorder) -> None:
    """U1, U4, H6, U10: the life of one instance, with revisions."""
    opened(host)
    assert host.surfaces["w"].revision == 1 and host.surfaces["w"].state["city"] == "Beijing"
    assert (
        host.receive(
            envelope("ui.patch", {"instance_id": "w", "state": {"city": "Shanghai"}}, id_="p1")
        )
        is None
    )
    assert host.surfaces["w"].state == {"city": "Shanghai"}  # H6: replace
    assert host.surfaces["w"].revision == 2
    assert (
        host.receive(envelope("ui.close", {"instance_id": "w", "reason": "completed"}, id_="c1"))
        is None
    )
    assert "w" not in host.surfaces
    assert sent.sent == []  # none of these needs an answer


def test_surfaces_and_components_are_read_only_views(host: Host) -> None:
    """H3: a change goes through receive (the lock, the history, the bus); the public
    registries have no mutator to skip them, and cannot be swapped."""
    agent = host.connect_agent("view-check")
    agent.open("w", html="<p>w</p>")
    agent.status("hi", component_id="s1")
    history = len(host.history)
    for view, mutators in (
        (host.surfaces, ("open", "patch", "close", "watch", "owned", "_instances")),
        (host.components, ("show", "append", "remove", "answer", "watch", "_shown")),
    ):
        for name in mutators:
            assert not hasattr(view, name), name
        with pytest.raises((AttributeError, TypeError)):
            view["x"] = None  # type: ignore[index]
        with pytest.raises(AttributeError):
            view.extra = 1  # type: ignore[union-attr]
    with pytest.raises(AttributeError):
        host.surfaces = {}  # type: ignore[misc]
    # The control: the views read what the host holds, and follow it.
    assert list(host.surfaces) == ["w"] and host.surfaces["w"].revision == 1
    assert "s1" in host.components and host.components.get("s1") is not None
    assert len(host.history) == history
    agent.close("w")
    assert "w" not in host.surfaces and len(host.history) == history + 1


def test_open_with_existing_id_replaces(host: Host) -> None:
    """U1: same id replaces; the revision keeps rising so a view never sees it go back."""
    opened(host, temperature=1)
    first = host.surfaces["w"]
    opened(host, temperature=2)
    second = host.surfaces["w"]
    assert len(host.surfaces) == 1
    assert second.state == {"temperature": 2}
    assert second.revision == first.revision + 1 and second.generation > first.generation


def test_merge_patch_rfc7396(host: Host) -> None:
    """H6: merge sets, nests and deletes with null."""
    opened(host, a=1, b={"x": 1, "y": 2})
    patch = {"instance_id": "w", "state": {"a": None, "b": {"y": 3}, "c": [1]}, "merge": True}
    assert host.receive(envelope("ui.patch", patch, id_="p1")) is None
    assert host.surfaces["w"].state == {"b": {"x": 1, "y": 3}, "c": [1]}


def test_merge_that_would_exceed_the_state_limit_is_refused(sent: Recorder) -> None:
    """H7: the merged result counts, and a refused merge leaves the old state."""
    host = Host(conversation_id=CONVERSATION, limits=Limits(max_state_bytes=100))
    recorder = Recorder(host)
    opened(host, a="x" * 50)
    patch = {"instance_id": "w", "state": {"b": "y" * 50}, "merge": True}
    assert_refused_once(host, recorder, envelope("ui.patch", patch, id_="p1"), "too_large", "H7")


def test_state_limit_on_open_and_patch() -> None:
    """H7: the state limit is configurable and applies to open and patch alike."""
    host = Host(conversation_id=CONVERSATION, limits=Limits(max_state_bytes=100))
    recorder = Recorder(host)
    big = {
        "instance_id": "w",
        **{k: v for k, v in open_payload().items() if k != "state"},
        "state": {"a": "x" * 100},
    }
    assert_refused_once(host, recorder, envelope("ui.open", big), "too_large", "H7")


def test_patch_or_close_of_unknown_instance(host: Host, sent: Recorder) -> None:
    """H6: a patch or close names an open instance."""
    answer = assert_refused_once(
        host,
        sent,
        envelope("ui.patch", {"instance_id": "nope", "state": {}}),
        "unknown_instance",
        "H6",
    )
    assert answer["target"] == {"kind": "agent", "id": AGENT}
    assert answer["payload"]["refused_id"] == "m1"
    assert_refused_once(
        host,
        sent,
        envelope("ui.close", {"instance_id": "nope", "reason": "x"}, id_="m2"),
        "unknown_instance",
        "H6",
    )


def test_only_the_opening_agent_may_touch_an_instance(host: Host, sent: Recorder) -> None:
    """H8: another agent can neither patch, close nor replace it."""
    opened(host, sender="agent_a")
    for kind, payload in (
        ("ui.patch", {"instance_id": "w", "state": {}}),
        ("ui.close", {"instance_id": "w", "reason": "x"}),
        ("ui.open", open_payload("w")),
    ):
        answer = assert_refused_once(
            host, sent, envelope(kind, payload, sender="agent_b"), "not_owner", "H8"
        )
        assert answer["target"]["id"] == "agent_b"


def test_wrong_conversation_is_refused(host: Host, sent: Recorder) -> None:
    """M1: a host serves one conversation; another's envelope changes nothing."""
    assert_refused_once(
        host,
        sent,
        envelope("ui.open", open_payload(), conversation="conv_02"),
        "wrong_conversation",
        "M1",
    )


def test_client_to_agent_types_are_refused_from_an_agent(host: Host, sent: Recorder) -> None:
    """M2: an agent cannot forge a ui.event or an app.result into the client."""
    forged = envelope("ui.event", {"instance_id": "w", "event": "x", "data": {}}, kind="client")
    assert_refused_once(host, sent, forged, "wrong_direction", "M2")
    result = envelope("app.result", {"call_id": "c", "status": "completed"}, kind="client")
    assert_refused_once(host, sent, result, "wrong_direction", "M2")


def test_unknown_ui_type_is_answered_unsupported(host: Host, sent: Recorder) -> None:
    """M3: never executed, answered unsupported."""
    opened(host)
    assert_refused_once(host, sent, envelope("ui.toast", {"text": "hi"}), "unsupported", "M3")


def test_repeated_message_id_is_refused(host: Host, sent: Recorder) -> None:
    """H9: a replayed message is not applied twice."""
    opened(host)
    patch = envelope("ui.patch", {"instance_id": "w", "state": {"n": 1}}, id_="same")
    assert host.receive(patch) is None
    assert_refused_once(host, sent, patch, "duplicate_id", "H9")
    assert host.surfaces["w"].revision == 2


def test_integrity_checked_when_present(host: Host, sent: Recorder) -> None:
    """S7, H4: a declared integrity must match; a matching one is accepted."""
    payload = open_payload()
    app = payload["app"]
    app["integrity"] = bundle_integrity(app["html"], "", "")
    assert host.receive(envelope("ui.open", payload)) is None
    app["html"] += "<script>steal()</script>"
    answer = assert_refused_once(
        host, sent, envelope("ui.open", payload, id_="m2"), "integrity_mismatch", "S7"
    )
    assert answer["payload"]["path"] == "$.payload.app.integrity"


def test_installed_app_reference_is_unsupported_without_an_app_center(
    host: Host, sent: Recorder
) -> None:
    """C3: no fallback, no download: a deterministic unsupported."""
    ref = {"instance_id": "c", "app": {"id": "com.lineup.svg-canvas", "surface": "canvas"}}
    assert_refused_once(host, sent, envelope("ui.open", ref), "unsupported", "C3")


def _call(call_id: str = "call_1", id_: str = "m1", **arguments: Any) -> dict[str, Any]:
    return envelope(
        "app.call",
        {
            "call_id": call_id,
            "capability": "weather.lookup",  # not declared: answered unsupported at once (C3)
            "reason": "docs",
            "expires_at": "2030-01-01T00:00:00Z",
            "arguments": arguments or {"url": "https://example.com"},
        },
        id_=id_,
    )


def test_app_call_gets_exactly_one_result_and_the_same_again(host: Host, sent: Recorder) -> None:
    """C10, C12: an undeclared capability is unsupported; a repeat gets the recorded result."""
    assert host.receive(_call()) is None
    first = sent.last()
    validate_envelope(first)
    assert first["type"] == "lineup.v1.app.result"
    assert first["payload"]["call_id"] == "call_1" and first["payload"]["status"] == "unsupported"
    assert host.receive(_call(id_="m2")) is None
    assert len(sent.sent) == 2 and sent.last()["payload"] == first["payload"]


def test_app_call_id_reused_for_another_request_is_refused(host: Host, sent: Recorder) -> None:
    """C12: same call_id, different arguments: refused, the first result stands."""
    host.receive(_call())
    assert_refused_once(
        host, sent, _call(id_="m2", url="https://evil.example"), "call_conflict", "C12"
    )


def test_invalid_app_call_is_answered_with_a_failed_result(host: Host, sent: Recorder) -> None:
    """C10, H3: the agent waiting on call_id hears back exactly once, with the reason."""
    bad = _call()
    bad["payload"]["expires_at"] = "soon"
    error = host.receive(bad)
    assert error is not None and error.rule == "C9"
    assert len(sent.sent) == 1
    answer = sent.last()
    validate_envelope(answer)
    assert answer["type"] == "lineup.v1.app.result"
    assert answer["payload"]["status"] == "failed"
    assert answer["payload"]["error"]["path"] == "$.payload.expires_at"


@pytest.mark.parametrize(
    "garbage",
    [
        None,
        5,
        1.5,
        [],
        "",
        "null",
        b"\xff\xfe",
        object(),
        {"v": 1},
        '{"v":1,"id":"x"}',
        "[" * 100000,
    ],
)
def test_receive_never_raises_and_answers_once(host: Host, sent: Recorder, garbage: Any) -> None:
    """H3: whatever arrives, one answer, no exception, no change."""
    before = snapshot(host)
    error = host.receive(garbage)
    assert isinstance(error, ProtocolError)
    assert snapshot(host) == before
    assert len(sent.sent) == 1
    validate_envelope(sent.last())
    assert "target" not in sent.last()  # the sender could not be read: sent to all


def test_refused_messages_are_in_the_history(host: Host) -> None:
    host.receive("{nope")
    record = host.history[-2]
    assert record.kind == "refused" and record.direction == "to_client"
    assert record.envelope == {"raw": "{nope"} and record.error is not None
    assert record.error["rule"] == "H2"
    assert host.history[-1].envelope["type"] == "lineup.v1.error"


def test_history_is_a_bounded_ring() -> None:
    host = Host(conversation_id=CONVERSATION, history_size=3)
    for i in range(5):
        host.receive(f"bad {i}")
    assert len(host.history) == 3 and host.history.dropped == 7
    assert host.history[-1].seq == 10


def test_state_is_not_aliased_to_the_agents_dict(host: Host) -> None:
    """U4: the agent changing its dict afterwards changes nothing in the host."""
    state = {"nested": {"n": 1}}
    assert host.receive(envelope("ui.open", {**open_payload(), "state": state})) is None
    state["nested"]["n"] = 2
    assert host.surfaces["weather.dashboard.01"].state == {"nested": {"n": 1}}
    host.surfaces["weather.dashboard.01"].state["nested"]["n"] = 3  # a copy, too
    assert host.surfaces["weather.dashboard.01"].state == {"nested": {"n": 1}}


def test_subscribe_and_unsubscribe(host: Host) -> None:
    got: list[dict[str, Any]] = []
    subscription = host.subscribe(got.append)
    host.receive("x")
    subscription()
    host.receive("y")
    assert [e["type"] for e in got] == ["lineup.v1.client.inventory", "lineup.v1.error"]


def test_c1_a_subscriber_hears_the_inventory_at_once_and_every_later_one(host: Host) -> None:
    """C1, C2: subscribing sets the session up: the current client.inventory comes at once,
    to the new subscriber alone (one who was listening already has it); a later revision
    (a capability declared, C4) reaches every subscriber."""
    first: list[dict[str, Any]] = []
    host.subscribe(first.append)
    second: list[dict[str, Any]] = []
    host.subscribe(second.append)
    assert [e["type"] for e in first] == ["lineup.v1.client.inventory"]
    assert [e["type"] for e in second] == ["lineup.v1.client.inventory"]
    assert first[0]["payload"] == second[0]["payload"] == host.inventory
    recorded = host.history.select(type="lineup.v1.client.inventory")
    assert [r.envelope["id"] for r in recorded] == [first[0]["id"], second[0]["id"]]

    @host.capability("demo.later", risk="user_confirmation")
    def later(arguments: dict[str, Any]) -> None:
        """A capability declared after both subscribed."""

    for got in (first, second):
        assert [e["type"] for e in got][-1] == "lineup.v1.client.inventory" and len(got) == 2
        assert int(got[1]["payload"]["revision"]) > int(got[0]["payload"]["revision"])
        assert "demo.later" in [c["name"] for c in got[1]["payload"]["capabilities"]]


def test_a_failing_subscriber_does_not_stop_the_others(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    got: list[dict[str, Any]] = []

    def broken(envelope: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    host.subscribe(broken)  # it raises on its first inventory already: recorded, not raised
    host.subscribe(got.append)
    assert isinstance(host.receive("x"), ProtocolError)
    assert [e["type"] for e in got] == ["lineup.v1.client.inventory", "lineup.v1.error"]
    assert any(
        r.kind == "handler_error" and "boom" in (r.error or {})["message"] for r in host.history
    )
    assert "[lineup]" in caplog.text


def test_a_failing_surface_watcher_does_not_undo_the_change(host: Host) -> None:
    def broken(change: SurfaceChange) -> None:
        raise RuntimeError("view broke")

    host.watch_surfaces(broken)
    opened(host)
    assert "w" in host.surfaces


def test_a_failing_watcher_is_logged_and_the_others_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The one watcher list surfaces, components and consent cards share."""
    from lineup_jupyter.runtime._watchers import Watchers

    heard: list[str] = []
    watchers: Watchers[[str]] = Watchers("test")
    assert not watchers

    def broken(_change: str) -> None:
        raise RuntimeError("view broke")

    watchers.add(broken)
    stop = watchers.add(heard.append)
    assert watchers
    watchers.notify("first")
    assert heard == ["first"]
    assert "[lineup] a test watcher failed on ('first',)" in caplog.text
    stop()
    stop()  # twice is harmless
    watchers.notify("second")
    assert heard == ["first"]


def test_surface_watchers_see_every_change(host: Host) -> None:
    changes: list[tuple[str, str, int]] = []
    host.watch_surfaces(
        lambda c: changes.append((c.kind, c.instance.instance_id, c.instance.revision))
    )
    opened(host)
    host.receive(envelope("ui.patch", {"instance_id": "w", "state": {}}, id_="p"))
    host.receive(envelope("ui.close", {"instance_id": "w", "reason": "done"}, id_="c"))
    assert changes == [("open", "w", 1), ("patch", "w", 2), ("close", "w", 2)]


def test_user_event_reaches_the_owner_as_ui_event(host: Host, sent: Recorder) -> None:
    """U8: the instance id comes from the frame, the event and data from the surface."""
    opened(host, sender="agent_a")
    host.user_event("w", "refresh", {"unit": "c"})
    event = sent.last()
    validate_envelope(event)
    assert event["type"] == "lineup.v1.ui.event"
    assert event["payload"] == {"instance_id": "w", "event": "refresh", "data": {"unit": "c"}}
    assert event["target"] == {"kind": "agent", "id": "agent_a"}


@pytest.mark.parametrize(
    ("message", "rule", "path"),
    [
        ({"namespace": "evil", "type": "event", "event": "x", "data": {}}, "U7", "$.namespace"),
        (
            {"namespace": "lineup.surface.v1", "type": "call", "event": "x", "data": {}},
            "U7",
            "$.type",
        ),
        (
            {"namespace": "lineup.surface.v1", "type": "event", "event": "1x", "data": {}},
            "U9",
            "$.event",
        ),
        (
            {"namespace": "lineup.surface.v1", "type": "event", "event": "x", "data": []},
            "U9",
            "$.data",
        ),
        (
            {
                "namespace": "lineup.surface.v1",
                "type": "event",
                "event": "x",
                "data": {"a": "b" * 16400},
            },
            "U9",
            "$.data",
        ),
        (
            {
                "namespace": "lineup.surface.v1",
                "type": "event",
                "event": "x",
                "data": {},
                "instance_id": "other",
            },
            "U7",
            "$.instance_id",
        ),
        ("not an object", "U7", "$"),
    ],
)
def test_bad_surface_messages_are_refused_and_reported(
    host: Host, sent: Recorder, message: Any, rule: str, path: str
) -> None:
    """S4, U7, U9: the kernel checks again; the owner hears why; no ui.event goes out."""
    opened(host)
    error = host.surface_message("w", message)
    assert error is not None and (error.rule, error.path) == (rule, path)
    assert [e["type"] for e in sent.sent] == ["lineup.v1.error"]
    assert sent.last()["payload"]["refused_type"] == "lineup.surface.v1.event"


def test_surface_message_for_a_closed_instance_is_refused(host: Host, sent: Recorder) -> None:
    error = host.surface_message("gone", {"namespace": "lineup.surface.v1", "type": "event"})
    assert error is not None and error.code == "unknown_instance"
    assert sent.types() == ["error"]


def test_the_users_refused_acts_raise_what_a_frames_return(host: Host, sent: Recorder) -> None:
    """One convention (docs/architecture.md, "Refusals"): the user's own act, called in
    Python, raises its refusal into the cell; the agent is told all the same."""
    with pytest.raises(ProtocolError) as refused:
        host.user_event("gone", "refresh", {})
    assert refused.value.code == "unknown_instance"
    assert sent.types() == ["error"]
    with pytest.raises(ProtocolError) as refused:
        host.user_close("gone")
    assert refused.value.code == "unknown_instance"
    with pytest.raises(ProtocolError):
        host.answer("nothing", "answered", True)
    assert [r.kind for r in host.history].count("refused") == 3


def test_user_close_closes_and_tells_the_agent(host: Host, sent: Recorder) -> None:
    """U10: the user's close reaches the agent as ui.event 'close'."""
    opened(host)
    host.user_close("w")
    assert "w" not in host.surfaces
    assert sent.last()["payload"] == {"instance_id": "w", "event": "close", "data": {}}
    with pytest.raises(ProtocolError):
        host.user_close("w")
    assert sent.last()["payload"]["event"] == "close"  # nothing more went to the agent


def test_host_ids_are_checked() -> None:
    with pytest.raises(UsageError):
        Host(conversation_id="not valid")


def test_inventory_has_the_c4_shape(host: Host, sent: Recorder) -> None:
    """C1, C4: sent on request, valid, revision a string."""
    host.send_inventory()
    validate_envelope(sent.last())
    assert set(sent.last()["payload"]) == {
        "revision",
        "standard_components",
        "applications",
        "capabilities",
    }


# ---- the in-kernel agent helper ---------------------------------------------------------


def test_agent_gets_the_inventory_when_it_connects(host: Host) -> None:
    """C1: once the session is set up, the agent is told what it may use."""
    agent = host.connect_agent("a1")
    assert agent.inventory is not None and agent.inventory["revision"] == host.inventory["revision"]


def test_on_inventory_hears_each_new_revision_and_inventory_is_the_latest(host: Host) -> None:
    """C1, C2: a capability declared later changes what the agent may use; the agent's
    handler hears the new revision and ``agent.inventory`` is it."""
    agent = host.connect_agent("a1")
    first = agent.inventory
    heard: list[dict[str, Any]] = []
    assert agent.on_inventory(heard.append) == heard.append  # a decorator returns its function

    @host.capability("demo.later", risk="display_only")
    def later(arguments: dict[str, Any]) -> None:
        return None

    assert first is not None and len(heard) == 1
    assert int(heard[0]["revision"]) > int(first["revision"])
    assert "demo.later" in [c["name"] for c in heard[0]["capabilities"]]
    assert agent.inventory == heard[0]


def test_agent_open_patch_close_and_events(host: Host) -> None:
    agent = host.connect_agent("a1")
    other = host.connect_agent("a2")
    seen: list[tuple[str, dict[str, Any]]] = []
    other_seen: list[Any] = []
    agent.on_event("refresh")(lambda e: seen.append((e.instance_id, e.data)))
    other.on_event()(other_seen.append)
    agent.open("w", html="<button>go</button>", state={"n": 0}, integrity=True)
    host.user_event("w", "refresh", {"unit": "c"})
    host.user_event("w", "ignored", {})
    assert seen == [("w", {"unit": "c"})]
    assert other_seen == []  # ui.event goes to the instance's own agent only
    agent.patch("w", {"n": 1})
    agent.patch("w", {"m": 2}, merge=True)
    assert host.surfaces["w"].state == {"n": 1, "m": 2}
    agent.close("w")
    assert "w" not in host.surfaces


def test_agent_handler_may_patch_while_handling(host: Host) -> None:
    """A handler answering an event with a patch sees it applied (FIFO delivery)."""
    agent = host.connect_agent("a1")
    agent.open("w", html="<p>", state={"n": 0})

    @agent.on_event("inc", instance_id="w")
    def inc(event: Any) -> None:
        agent.patch("w", {"n": host.surfaces["w"].state["n"] + 1})

    for _ in range(3):
        host.user_event("w", "inc", {})
    assert host.surfaces["w"].state == {"n": 3}


def test_agent_refusal_raises_for_the_author(host: Host) -> None:
    """The notebook author's own bad call raises the precise ProtocolError."""
    agent = host.connect_agent("a1")
    with pytest.raises(ProtocolError) as caught:
        agent.open("bad id", html="<p>")
    assert caught.value.rule == "U1"
    assert agent.errors[-1]["rule"] == "U1"  # and the error envelope reached it too
    with pytest.raises(ProtocolError, match="tuple"):
        agent.open("w", html="<p>", state={"xy": (1, 2)})
    assert len(host.surfaces) == 0


def test_agent_on_type_handler(host: Host) -> None:
    agent = host.connect_agent("a1")
    results: list[dict[str, Any]] = []
    agent.on("app.result", results.append)
    agent.send("app.call", _call()["payload"])
    assert results[0]["payload"]["status"] == "unsupported"
    agent.disconnect()
    agent2 = host.connect_agent("a2")
    agent2.send("app.call", _call(call_id="call_2")["payload"])
    assert len(results) == 1


def test_history_records_both_directions_in_order(host: Host) -> None:
    agent = host.connect_agent("a1")
    agent.open("w", html="<p>")
    host.user_event("w", "go", {})
    kinds = [
        (r.direction, r.envelope.get("type", "").removeprefix("lineup.v1.")) for r in host.history
    ]
    assert kinds == [
        ("to_agent", "client.inventory"),
        ("to_client", "ui.open"),
        ("to_agent", "ui.event"),
    ]
    json.dumps([r.envelope for r in host.history])  # exportable as JSON


def test_the_host_acts_on_exactly_the_agent_to_client_types(host: Host) -> None:
    """M2: one action per agent->client type, none for the other direction."""
    from lineup_jupyter.protocol import rules

    assert set(host._intake.actions) == {rules.TYPE_PREFIX + t for t in rules.AGENT_TO_CLIENT}


def test_history_reads_back_what_arrived_as_text_or_bytes(host: Host) -> None:
    """The history keeps accepted text as text (cheap to hold) and parses it when read."""
    message = envelope("ui.open", open_payload())
    text = "\ufeff" + json.dumps(message)
    assert host.receive(text) is None
    assert host.receive(json.dumps({**message, "id": "m2"}).encode()) is None
    first, second = host.history[-2], host.history[-1]
    assert first.envelope == message
    assert second.envelope["id"] == "m2"
