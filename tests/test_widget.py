"""The host's widget, kernel side, with its comm replaced by a list (browser tests do the rest)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from lineup_jupyter import Host

from .conftest import Recorder


@pytest.fixture
def widget(host: Host) -> Any:
    widget = host.widget
    widget.sent = []
    widget.send = lambda content, buffers=None: widget.sent.append(content)
    return widget


def event_message(name: str = "refresh", **data: Any) -> dict[str, Any]:
    return {"namespace": "lineup.surface.v1", "type": "event", "event": name, "data": data}


def test_displaying_the_host_displays_its_one_widget(host: Host) -> None:
    bundle = host._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert host.widget is host.widget


def test_the_trait_lists_every_open_surface_with_bundle_and_state(host: Host, widget: Any) -> None:
    """U1, U4: what a view rebuilds from."""
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", css="p{}", js="1", state={"n": 1}, app_id="com.x.y", name="Y")
    (spec,) = widget.surfaces
    assert spec["instance_id"] == "w" and spec["html"] == "<p>" and spec["state"] == {"n": 1}
    assert spec["app"] == {"id": "com.x.y", "version": "0.1.0", "name": "Y"}
    agent.close("w")
    assert widget.surfaces == []


def test_patches_travel_as_messages_with_the_full_state_and_revision(
    host: Host, widget: Any
) -> None:
    """U4, H6: outside an event loop each patch is sent at once."""
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"a": 1})
    agent.patch("w", {"b": 2}, merge=True)
    assert widget.sent == [
        {
            "kind": "state",
            "instance_id": "w",
            "generation": 1,
            "revision": 2,
            "state": {"a": 1, "b": 2},
        }
    ]
    assert widget.surfaces[0]["state"] == {"a": 1}  # the trait is not rewritten per patch


def test_a_burst_of_patches_in_one_tick_sends_one_message(host: Host, widget: Any) -> None:
    """U4: coalesced in the kernel, so the server's rate limiter never drops the last state."""
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"n": 0})

    async def burst() -> None:
        for n in range(1, 10001):
            agent.patch("w", {"n": n})
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(burst())
    assert widget.sent == [
        {
            "kind": "state",
            "instance_id": "w",
            "generation": 1,
            "revision": 10001,
            "state": {"n": 10000},
        }
    ]


def test_sync_answers_with_a_snapshot(host: Host, widget: Any) -> None:
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"n": 0})
    agent.patch("w", {"n": 5})
    widget._on_message(widget, {"kind": "sync"}, [])
    snapshot = widget.sent[-1]
    assert snapshot["kind"] == "snapshot"
    assert [(s["instance_id"], s["revision"], s["state"]) for s in snapshot["surfaces"]] == [
        ("w", 2, {"n": 5})
    ]


def test_browser_events_are_checked_again_by_the_kernel(host: Host, widget: Any) -> None:
    """S4, U8, U9: the kernel is the authority; the frame decided the instance."""
    agent = host.connect_agent("a")
    got: list[Any] = []
    agent.on_event()(got.append)
    agent.open("w", html="<p>")
    widget._on_message(
        widget, {"kind": "event", "instance_id": "w", "message": event_message(unit="c")}, []
    )
    widget._on_message(
        widget, {"kind": "event", "instance_id": "w", "message": event_message("1bad")}, []
    )
    assert [(e.instance_id, e.event, e.data) for e in got] == [("w", "refresh", {"unit": "c"})]
    assert agent.errors[-1]["rule"] == "U9"


def test_batched_browser_events_arrive_in_order_each_checked(host: Host, widget: Any) -> None:
    """S4, U9: a busy view sends events together; the kernel takes them in order, checks each,
    and never unpacks a batch inside a batch (a hand-made message cannot multiply itself)."""
    agent = host.connect_agent("a")
    got: list[Any] = []
    agent.on_event()(got.append)
    agent.open("w", html="<p>")
    item = {"kind": "event", "instance_id": "w"}
    nested = {"kind": "events", "items": [{**item, "message": event_message(n=99)}]}
    widget._on_message(
        widget,
        {
            "kind": "events",
            "items": [
                {**item, "message": event_message(n=1)},
                {**item, "message": event_message("1bad")},
                nested,
                {**item, "message": event_message(n=2)},
            ],
        },
        [],
    )
    assert [e.data for e in got] == [{"n": 1}, {"n": 2}]
    assert agent.errors[-1]["rule"] == "U9"


def test_close_button_closes_and_tells_the_agent(host: Host, widget: Any) -> None:
    """U10."""
    agent = host.connect_agent("a")
    got: list[Any] = []
    agent.on_event("close")(got.append)
    agent.open("w", html="<p>")
    widget._on_message(widget, {"kind": "close", "instance_id": "w"}, [])
    assert "w" not in host.surfaces and len(got) == 1


def test_browser_reports_reach_the_agent_and_the_history(host: Host, widget: Any) -> None:
    """S3, S4: what the browser refused or blocked is never silent."""
    agent = host.connect_agent("a")
    agent.open("w", html="<p>")
    report = {
        "kind": "refused",
        "instance_id": "w",
        "code": "csp_violation",
        "rule": "S3",
        "path": "$",
        "message": "blocked by img-src: http://evil.example/x",
    }
    widget._on_message(widget, report, [])
    assert agent.errors[-1]["code"] == "csp_violation" and agent.errors[-1]["rule"] == "S3"
    assert host.history[-2].kind == "refused"


def test_a_forged_report_cannot_inject_codes_or_rules(host: Host, widget: Any) -> None:
    """H3: codes and rules come from the known sets, whatever the page sends."""
    recorder = Recorder(host)
    widget._on_message(
        widget,
        {
            "kind": "refused",
            "instance_id": "w",
            "code": "pwned",
            "rule": "Z9",
            "path": "$" * 5000,
            "message": "x" * 10000,
        },
        [],
    )
    payload = recorder.last()["payload"]
    assert (payload["code"], payload["rule"]) == ("invalid", "S4")
    assert len(payload["path"]) <= 1024 and len(payload["message"]) <= 4096


@pytest.mark.parametrize(
    "content",
    [
        None,
        [],
        "x",
        {"kind": "event"},
        {"kind": "nope", "instance_id": "w"},
        {"kind": "event", "instance_id": 5},
    ],
)
def test_malformed_browser_messages_change_nothing(
    host: Host, widget: Any, content: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Our own front end sent something it should not: logged, nothing changes."""
    agent = host.connect_agent("a")
    agent.open("w", html="<p>")
    before = len(host.history)
    widget._on_message(widget, content, [])
    assert len(host.history) == before and "w" in host.surfaces
    assert "[lineup] the view sent a message the kernel does not understand" in caplog.text
