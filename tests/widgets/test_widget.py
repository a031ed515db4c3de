"""The host's widget, kernel side, with its comm replaced by a list (browser tests do the rest)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from lineup_jupyter import Host

from ..conftest import Recorder, view_sends


@pytest.fixture
def widget(host: Host) -> Any:
    widget = host.widget
    widget.sent = []
    # As the wire has it when it is sent: later changes to the kernel's lists do not show.
    widget.send = lambda content, buffers=None: widget.sent.append(json.loads(json.dumps(content)))
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


def test_patches_travel_as_the_change_with_the_revision_it_applies_to(
    host: Host, widget: Any
) -> None:
    """U4, H6: outside an event loop each change is sent at once, alone: a merge patch as the
    patch and its base revision, and the trait (edited in place, never re-sent) holds the
    latest state for a reload or a saved notebook."""
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"a": 1})
    agent.patch("w", {"b": 2}, merge=True)
    agent.patch("w", {"c": 3})
    assert [message["seq"] for message in widget.sent] == [1, 2, 3]
    assert widget.sent[1]["ops"] == [
        {
            "op": "patch",
            "instance_id": "w",
            "generation": 1,
            "base": 1,
            "revision": 2,
            "patches": [{"b": 2}],
        }
    ]
    assert widget.sent[2]["ops"] == [
        {"op": "state", "instance_id": "w", "generation": 1, "revision": 3, "state": {"c": 3}}
    ]
    assert widget.surfaces[0]["state"] == {"c": 3} and widget.surfaces[0]["revision"] == 3


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
    assert widget.sent[1:] == [
        {
            "kind": "feed",
            "seq": 2,
            "ops": [
                {
                    "op": "state",
                    "instance_id": "w",
                    "generation": 1,
                    "revision": 10001,
                    "state": {"n": 10000},
                }
            ],
        }
    ]


def test_sync_answers_with_a_snapshot(host: Host, widget: Any) -> None:
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"n": 0})
    agent.patch("w", {"n": 5})
    view_sends(widget, {"kind": "sync"})
    snapshot = widget.sent[-1]
    assert snapshot["kind"] == "snapshot" and snapshot["seq"] == 2
    assert [(s["instance_id"], s["revision"], s["state"]) for s in snapshot["surfaces"]] == [
        ("w", 2, {"n": 5})
    ]


def test_browser_events_are_checked_again_by_the_kernel(host: Host, widget: Any) -> None:
    """S4, U8, U9: the kernel is the authority; the frame decided the instance."""
    agent = host.connect_agent("a")
    got: list[Any] = []
    agent.on_event()(got.append)
    agent.open("w", html="<p>")
    view_sends(widget, {"kind": "event", "instance_id": "w", "message": event_message(unit="c")})
    view_sends(widget, {"kind": "event", "instance_id": "w", "message": event_message("1bad")})
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
    view_sends(
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
    )
    assert [e.data for e in got] == [{"n": 1}, {"n": 2}]
    assert agent.errors[-1]["rule"] == "U9"


def test_refusals_travel_batched_with_the_events_in_order(host: Host, widget: Any) -> None:
    """S4: the view sends what it refused in the same batches as events (a flood of refused
    messages costs the kernel no more comm messages than a flood of events); each reaches the
    agent and the history, in order with the events."""
    agent = host.connect_agent("a")
    got: list[Any] = []
    agent.on_event()(got.append)
    agent.open("w", html="<p>")
    refused = {
        "kind": "refused",
        "instance_id": "w",
        "code": "invalid",
        "rule": "U7",
        "path": "$.type",
        "message": "the only upward type is 'event'.",
    }
    view_sends(
        widget,
        {
            "kind": "events",
            "items": [
                {"kind": "event", "instance_id": "w", "message": event_message(n=1)},
                refused,
                {**refused, "kind": "close"},  # only events and refusals ride in a batch
            ],
        },
    )
    assert [e.data for e in got] == [{"n": 1}]
    assert [(e["code"], e["rule"], e["path"]) for e in agent.errors] == [
        ("invalid", "U7", "$.type")
    ]
    assert "w" in host.surfaces
    # the surface's refusal, and the close that had no business in a batch (H38)
    refusals = [r for r in host.history if r.kind == "refused"]
    assert len(refusals) == 2 and refusals[1].error is not None
    assert (refusals[1].error["rule"], refusals[1].error["path"]) == ("H38", "$.kind")


def test_close_button_closes_and_tells_the_agent(host: Host, widget: Any) -> None:
    """U10."""
    agent = host.connect_agent("a")
    got: list[Any] = []
    agent.on_event("close")(got.append)
    agent.open("w", html="<p>")
    view_sends(widget, {"kind": "close", "instance_id": "w"})
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
    view_sends(widget, report)
    assert agent.errors[-1]["code"] == "csp_violation" and agent.errors[-1]["rule"] == "S3"
    assert host.history[-2].kind == "refused"


def test_a_forged_report_cannot_inject_codes_or_rules(host: Host, widget: Any) -> None:
    """H3: codes and rules come from the known sets, whatever the page sends."""
    recorder = Recorder(host)
    view_sends(
        widget,
        {
            "kind": "refused",
            "instance_id": "w",
            "code": "pwned",
            "rule": "Z9",
            "path": "$" * 5000,
            "message": "x" * 10000,
        },
    )
    payload = recorder.last()["payload"]
    assert (payload["code"], payload["rule"]) == ("invalid", "S4")
    assert len(payload["path"]) <= 1024 and len(payload["message"]) <= 4096


@pytest.mark.parametrize(
    ("content", "path"),
    [
        (None, "$"),
        ([], "$"),
        ("x", "$"),
        ({"kind": "event"}, "$.instance_id"),
        ({"kind": "nope", "instance_id": "w"}, "$.kind"),
        ({"kind": "event", "instance_id": 5}, "$.instance_id"),
        (
            {"kind": "answer", "component_id": "q", "status": "answered", "value": 10**401},
            "$.value",
        ),
        ({"kind": "refused", "instance_id": "w", "code": []}, "$.code"),
    ],
)
def test_h38_malformed_browser_messages_are_refused_with_a_reason_and_change_nothing(
    host: Host, widget: Any, content: Any, path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """H38: a view message of the wrong shape is refused with its path and a sentence, on
    record and in the log; nothing changes, nothing raises."""
    agent = host.connect_agent("a")
    agent.open("w", html="<p>")
    agent.ask_input("n?", input_type="number", component_id="q")
    before = len(host.history)
    view_sends(widget, content)
    assert len(host.history) == before + 1 and "w" in host.surfaces
    record = host.history[-1]
    assert record.kind == "refused" and record.error is not None
    assert (record.error["code"], record.error["rule"], record.error["path"]) == (
        "invalid",
        "H38",
        path,
    )
    assert "[lineup] a view message was refused" in caplog.text
    question = host.components.get("q")
    assert question is not None and question.pending and agent.errors == []


# ---- the app center's view (docs/apps.md) -----------------------------------------------


@pytest.fixture
def center_view(host: Host) -> Any:
    view = host.apps.widget
    view.sent = []
    view.send = lambda content, buffers=None: view.sent.append(content)
    return view


def test_displaying_host_apps_displays_the_app_center_view(host: Host) -> None:
    bundle = host.apps._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert host.apps.widget is host.apps.widget


def test_the_app_center_view_follows_the_registry(host: Host, center_view: Any) -> None:
    """G2: every change made through Python shows in the view, with the bundle policy."""
    assert center_view.apps == [] and center_view.trust["mode"] == "dev"
    host.apps.install("com.lineup.svg-canvas")
    (row,) = center_view.apps
    assert (row["id"], row["version"], row["enabled"]) == ("com.lineup.svg-canvas", "1.0.0", True)
    host.apps.disable("com.lineup.svg-canvas")
    assert center_view.apps[0]["enabled"] is False


def test_the_app_center_views_buttons_act_through_the_kernel(
    host: Host, center_view: Any, lineup_home: Any
) -> None:
    """G2, H35, C1: disable from the view withdraws the app and sends a new inventory."""
    sent = Recorder(host)
    agent = host.connect_agent("a")
    host.apps.install("com.lineup.svg-canvas")
    agent.open_app("c", "com.lineup.svg-canvas", "canvas")
    view_sends(center_view, {"kind": "disable", "app_id": "com.lineup.svg-canvas"})
    assert "c" not in host.surfaces and center_view.apps[0]["enabled"] is False
    assert sent.types()[-1] == "client.inventory"
    view_sends(center_view, {"kind": "enable", "app_id": "com.lineup.svg-canvas"})
    assert host.apps.get("com.lineup.svg-canvas").enabled
    # nothing to roll back to: the view says why, in a sentence, and nothing changed
    view_sends(center_view, {"kind": "rollback", "app_id": "com.lineup.svg-canvas"})
    assert center_view.sent[-1]["kind"] == "notice"
    assert "nothing to roll back to" in center_view.sent[-1]["text"]
    assert not center_view.sent[-1]["text"].startswith("[lineup]")


def test_the_app_center_views_verify_names_a_damaged_bundle(
    host: Host, center_view: Any, lineup_home: Any
) -> None:
    """H32: a cached bundle changed on disk shows as a problem of its app."""
    host.apps.install("com.lineup.svg-canvas")
    (blob,) = host.apps.cache.iterdir()  # the canvas's one bundle, cached by its digest
    host.apps.install("com.lineup.state-chart")
    blob.write_bytes(blob.read_bytes() + b"<script>evil()</script>")
    view_sends(center_view, {"kind": "verify"})
    assert center_view.verification["com.lineup.state-chart"] == []
    (problem,) = center_view.verification["com.lineup.svg-canvas"]
    assert "canvas" in problem and "changed" in problem


def test_the_app_center_view_installs_shipped_apps_and_removes_apps(
    host: Host, center_view: Any
) -> None:
    """G2: the shipped apps not installed are offered; Install and Remove act in the kernel."""
    assert {app["id"] for app in center_view.available} == {
        "com.lineup.svg-canvas",
        "com.lineup.weather.dashboard",
        "com.lineup.state-chart",
    }
    view_sends(center_view, {"kind": "install", "app_id": "com.lineup.svg-canvas"})
    assert [app["id"] for app in center_view.apps] == ["com.lineup.svg-canvas"]
    assert "com.lineup.svg-canvas" not in {app["id"] for app in center_view.available}
    view_sends(center_view, {"kind": "remove", "app_id": "com.lineup.svg-canvas"})
    assert center_view.apps == [] and host.apps.list() == []
    assert len(center_view.available) == 3


def test_the_app_center_view_installs_nothing_but_a_shipped_app(
    host: Host, center_view: Any, tmp_path: Any
) -> None:
    """H30: a view names no source; a folder path sent as an app id is refused, in a sentence."""
    view_sends(center_view, {"kind": "install", "app_id": str(tmp_path)})
    assert center_view.apps == []
    assert center_view.sent[-1]["kind"] == "notice"
    assert "is not an app shipped with lineup-jupyter" in center_view.sent[-1]["text"]


def test_the_app_center_view_ignores_what_it_does_not_understand(
    host: Host, center_view: Any, caplog: pytest.LogCaptureFixture
) -> None:
    view_sends(center_view, {"kind": "format_disk", "app_id": "x"})
    view_sends(center_view, "not a dict")
    assert center_view.sent == []
    assert '[lineup] a view message was refused at $.kind: kind "format_disk"' in caplog.text  # H38


def test_h42_the_view_lists_agents_outside_the_kernel_and_how_they_ended(
    host: Host, widget: Any, tmp_path: Any
) -> None:
    """H42: a process agent is listed while it runs; once it crashes, its line says so, with
    the exit code and the end of its stderr (not only a log line); a clean exit is no
    problem; closing it shows 'closed'."""
    import sys
    import time

    crashing = tmp_path / "crash.py"
    crashing.write_text(
        "import sys\nsys.stdin.readline()\nprint('boom', file=sys.stderr)\nsys.exit(3)\n"
    )
    process = host.connect_process([sys.executable, str(crashing)], agent_id="agent_c")
    (line,) = widget.agents
    assert line["agent_id"] == "agent_c" and line["via"].startswith("process ")
    deadline = time.monotonic() + 30
    while widget.agents[0]["problem"] is None:
        assert time.monotonic() < deadline, widget.agents
        time.sleep(0.02)
    (line,) = widget.agents
    assert line["status"] == "ended" and process.returncode == 3
    assert "exited with code 3" in line["problem"] and "boom" in line["problem"]

    clean = tmp_path / "clean.py"
    clean.write_text("import sys\nsys.stdin.readline()\n")
    quiet = host.connect_process([sys.executable, str(clean)], agent_id="agent_q")
    while quiet.status != "ended":  # until its reader has reported the exit
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert quiet.status == "ended" and quiet.returncode == 0
    assert [(a["agent_id"], a["problem"]) for a in widget.agents][1] == ("agent_q", None)
    quiet.close()
    assert widget.agents[1]["status"] == "closed"


def test_a_waiting_line_that_asks_is_answered_live_and_nothing_else_is_taken() -> None:
    """js/waiting.js asks once (``sync``); a kernel that holds the wait answers ``live``, so a
    line restored from a saved notebook (no answer) can say it is a picture (issue 24)."""
    from lineup_jupyter.widgets._widget import WaitingWidget

    widget = WaitingWidget(kind="call", target="c1", label="artifact.save")
    sent: list[Any] = []
    widget.send = lambda content, buffers=None: sent.append(content)
    view_sends(widget, {"kind": "sync"})
    view_sends(widget, {"kind": "answer", "component_id": "x", "status": "answered"})
    assert sent == [{"kind": "live"}]
    widget.close()
