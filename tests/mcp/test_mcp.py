"""MCP Apps, the kernel's side (docs/mcp-apps.md), with a real server written with the SDK
(tests/mcp_servers/weather.py) connected in-process: the transport is not what these test
(tests/mcp/test_mcp_transports.py runs stdio, HTTP and hostile servers). The view is driven
through the widget's comm, as the browser drives it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lineup_jupyter import Host, McpServer, UsageError
from lineup_jupyter.core import _view_protocol as vp

from ..mcp_helpers import View
from ..mcp_servers import weather
from ..widgets.test_view_protocol import declared


@pytest.fixture
def view(host: Host) -> View:
    return View(host)


@pytest.fixture
def server(host: Host, view: View) -> Iterator[McpServer]:
    weather.ALARMS.clear()
    connected = host.connect_mcp(weather.build())
    yield connected
    connected.close()


def opened(server: McpServer, view: View, tool: str = "show_weather", **arguments: Any) -> str:
    app = server.open(tool, arguments or {"city": "Paris"})
    view.wait(lambda op: op["op"] == "mcp_notify" and op["method"].endswith("tool-result"))
    return app.app_id


def pending(host: Host, capability: str) -> str:
    (call,) = [c for c in host.pending_calls if c.capability.name == capability]
    return call.call_id


# ---- connecting: tools, visibility, annotations -------------------------------------


def test_connecting_lists_tools_and_declares_those_apps_may_call(
    host: Host, server: McpServer
) -> None:
    """Tools with app visibility (absent = model and app) become mcp.<name>.<tool>, with a
    risk from their annotations; a model-only tool is no capability at all."""
    assert (server.name, server.version, server.agent_id) == ("weather", "1.2.0", "mcp.weather")
    tools = {tool.name: tool for tool in server.tools}
    assert tools["show_weather"].resource_uri == weather.WEATHER_URI
    assert tools["refresh_weather"].visibility == ("app",)
    assert tools["forecast_text"].visibility == ("model",)
    assert tools["forecast_text"].capability is None
    assert tools["plain_echo"].resource_uri is None
    risks = {
        name: host.capabilities.get(f"mcp.weather.{name}").risk  # type: ignore[union-attr]
        for name in ("show_weather", "refresh_weather", "set_alarm", "clock", "plain_echo")
    }
    assert risks == {
        "show_weather": "user_confirmation",
        "refresh_weather": "user_confirmation",
        "set_alarm": "system_permission",  # destructiveHint: asked every time
        "clock": "system_permission",  # no annotations: the spec's default is destructive
        "plain_echo": "system_permission",
    }
    assert "mcp.weather.forecast_text" not in host.capabilities
    assert server.status == "ready"


def test_a_name_is_made_to_fit_and_name_replaces_the_servers(host: Host) -> None:
    server = host.connect_mcp(weather.build(), name="My Weather!")
    try:
        assert server.agent_id == "mcp.my-weather"
        assert "mcp.my-weather.show_weather" in host.capabilities
    finally:
        server.close()
    assert "mcp.my-weather.show_weather" not in host.capabilities  # withdrawn on close


def test_the_same_name_twice_is_refused_with_the_way_out(host: Host, server: McpServer) -> None:
    with pytest.raises(UsageError, match=r"connected as .mcp\.weather. already"):
        host.connect_mcp(weather.build())


# ---- opening an app: the user's act --------------------------------------------------


def test_open_shows_the_app_at_once_then_its_result_in_order(
    host: Host, server: McpServer, view: View
) -> None:
    """mcp_open (the checked resource, its CSP as declared, nothing granted), tool-input,
    then tool-result; every op as _view_protocol declares it; a reload gets it whole."""
    app = server.open("show_weather", {"city": "Paris"})
    assert app.wait(30) is not None
    view.wait(lambda op: op["op"] == "mcp_notify" and op["method"].endswith("tool-result"))
    kinds = [(op["op"], op.get("method")) for op in view.ops]
    assert kinds == [
        ("mcp_open", None),
        ("mcp_notify", "ui/notifications/tool-input"),
        ("mcp_notify", "ui/notifications/tool-result"),
    ]
    for op in view.ops:
        declared(op, vp.FEED_OPS)
    spec = view.ops[0]["spec"]
    assert spec.keys() == vp.McpAppSpec.__annotations__.keys()
    assert spec["html"] == weather.WEATHER_HTML
    assert spec["csp"] == {
        "connectDomains": ["https://api.weather.example"],
        "resourceDomains": ["https://cdn.weather.example"],
    }
    assert spec["granted"] == {"connectDomains": [], "resourceDomains": []}  # zero egress
    assert spec["refused_csp"][0]["directive"] == "frameDomains"
    assert (spec["prefers_border"], spec["agent"], spec["generation"]) == (True, "mcp.weather", 1)
    assert view.ops[1]["params"] == {"arguments": {"city": "Paris"}}
    assert view.ops[2]["params"]["structuredContent"] == {"city": "Paris", "temperature": 21}
    view.send({"kind": "sync"})
    snapshot = view.sent[-1]
    assert snapshot["kind"] == "snapshot"
    declared(snapshot, vp.HOST_SENDS)
    (shown,) = snapshot["mcp_apps"]
    assert shown["result"] == app.result and shown["cancelled"] is None


def test_the_resource_is_read_once_per_server_version_and_uri(
    host: Host, server: McpServer, view: View
) -> None:
    opened(server, view)
    server.open("show_weather", {"city": "Oslo"}).wait(30)
    reads = [r for r in host.history.select(kind="mcp") if r.type == "mcp.resources/read"]
    assert len(reads) == 1


def test_the_user_opens_only_what_a_model_may_call(server: McpServer) -> None:
    with pytest.raises(UsageError, match="for its app only"):
        server.open("refresh_weather", {"city": "Paris"})
    with pytest.raises(UsageError, match="has no app"):
        server.open("plain_echo", {"text": "x"})
    with pytest.raises(UsageError, match="no tool 'nope'"):
        server.open("nope")
    assert server.call("plain_echo", {"text": "hi"})["structuredContent"] == {"result": "hi"}


# ---- an app's tools/call: through the broker -----------------------------------------


def test_an_apps_tools_call_waits_for_the_user_then_runs_once(
    host: Host, server: McpServer, view: View
) -> None:
    """The consent path: a waiting call shown by the broker, decided, the server's tool
    runs, exactly one mcp_response; the audit has the call, from the server's agent."""
    app_id = opened(server, view, "clock")
    view.request(app_id, 7, "tools/call", {"name": "set_alarm", "arguments": {"time": "07:00"}})
    call_id = pending(host, "mcp.weather.set_alarm")
    assert view.responses(app_id, 7) == [] and weather.ALARMS == []  # nothing ran yet
    view.send({"kind": "consent_sync"})
    cards = next(m for m in reversed(view.sent) if m["kind"] == "consent")["pending"]
    assert [c["agent"] for c in cards] == ["mcp.weather"]
    assert cards[0]["risk"] == "system_permission" and not cards[0]["remember_allowed"]
    # Issue 22 §2: the tool's description is the server's words, the reason the host's summary
    # with the server's names in JSON quotes; the card says whose each is.
    assert (cards[0]["description"], cards[0]["description_by"]) == ("Set an alarm", "requester")
    assert cards[0]["reason_by"] == "host"
    assert cards[0]["reason"].endswith('calls the tool "set_alarm"')
    host.decide(call_id, "allow")
    response = view.wait_response(app_id, 7)
    assert response["result"]["structuredContent"] == {"result": "alarm set for 07:00"}
    assert weather.ALARMS == ["07:00"]
    (row,) = host.audit.query(call_id=call_id)
    assert (row["agent"], row["status"], row["decided_by"]) == (
        "mcp.weather",
        "completed",
        "user",
    )
    assert len(view.responses(app_id, 7)) == 1
    # The kernel records the server's side of the call; the app's side is the page's to record
    # (mcp_traffic), once: nothing of it here, so the inspector shows no row twice.
    legs = [r.to_json()["envelope"]["dir"] for r in host.history.select(kind="mcp")]
    assert "to_server" in legs and "from_server" in legs
    assert "from_app" not in legs and "to_app" not in legs


def test_a_denied_call_never_reaches_the_server(host: Host, server: McpServer, view: View) -> None:
    app_id = opened(server, view, "clock")
    view.request(app_id, 1, "tools/call", {"name": "set_alarm", "arguments": {"time": "07:00"}})
    host.decide(pending(host, "mcp.weather.set_alarm"), "deny")
    error = view.wait_response(app_id, 1)["error"]
    assert error["code"] == -32000 and error["data"]["rule"] == "C10"
    assert error["data"]["status"] == "rejected"
    assert weather.ALARMS == []


def test_c12_the_same_request_again_is_answered_from_the_ledger(
    host: Host, server: McpServer, view: View
) -> None:
    """A request sent again under its JSON-RPC id is a repeat (the same call_id): the tool
    ran once; other arguments under that id are a conflict, refused (C12)."""
    app_id = opened(server, view, "clock")
    params = {"name": "set_alarm", "arguments": {"time": "07:00"}}
    view.request(app_id, 1, "tools/call", params)
    view.request(app_id, 1, "tools/call", params)  # while the first waits
    host.decide(pending(host, "mcp.weather.set_alarm"), "allow")
    first, second = view.wait(
        lambda op: op["op"] == "mcp_response" and op["id"] == 1 and "result" in op, count=2
    )
    assert first["result"] == second["result"]
    view.request(app_id, 1, "tools/call", params)  # after: the recorded answer
    view.wait(lambda op: op["op"] == "mcp_response" and op["id"] == 1, count=3)
    assert weather.ALARMS == ["07:00"]
    view.request(app_id, 1, "tools/call", {"name": "set_alarm", "arguments": {"time": "08:00"}})
    (conflict,) = [op for op in view.responses(app_id, 1) if "error" in op]
    assert conflict["error"]["data"]["rule"] == "C12"
    assert weather.ALARMS == ["07:00"]


def test_a_read_only_tool_may_be_allowed_by_policy_a_destructive_one_not(
    host: Host, server: McpServer, view: View
) -> None:
    host.policy.allow("mcp.weather.refresh_weather")
    with pytest.raises(UsageError, match="system_permission"):
        host.policy.allow("mcp.weather.set_alarm")
    app_id = opened(server, view)
    view.request(app_id, 3, "tools/call", {"name": "refresh_weather", "arguments": {"city": "X"}})
    assert host.pending_calls == []  # no card
    result = view.wait_response(app_id, 3)["result"]
    assert result["structuredContent"] == {"city": "X", "temperature": 22}
    (row,) = host.audit.query(capability="mcp.weather.refresh_weather", status="completed")
    assert row["decided_by"] == "policy"


def test_visibility_an_app_calls_app_tools_never_model_only_ones(
    host: Host, server: McpServer, view: View
) -> None:
    """refresh_weather (app only) asks the user; forecast_text (model only) is unsupported
    (C3), on record in the audit, and never reaches the server."""
    app_id = opened(server, view)
    view.request(app_id, 1, "tools/call", {"name": "refresh_weather", "arguments": {"city": "X"}})
    assert pending(host, "mcp.weather.refresh_weather")
    view.request(app_id, 2, "tools/call", {"name": "forecast_text", "arguments": {"city": "X"}})
    error = view.wait_response(app_id, 2)["error"]
    assert (error["code"], error["data"]["rule"], error["data"]["status"]) == (
        -32000,
        "C3",
        "unsupported",
    )
    calls = [r for r in host.history.select(kind="mcp") if r.type == "mcp.tools/call"]
    assert all(
        r.envelope["jsonrpc"]["params"]["name"] != "forecast_text"
        for r in calls
        if r.envelope["dir"] == "to_server"
    )
    (row,) = host.audit.query(capability="mcp.weather.forecast_text")
    assert row["status"] == "unsupported"


def test_callers_another_agent_cannot_call_a_servers_tool_nor_see_it(
    host: Host, server: McpServer
) -> None:
    """The control: the server's own agent gets a card; another agent's app.call of the same
    capability is unsupported (C3), and no inventory or app.list shows it."""
    other = host.connect_agent("other")
    handle = other.call("mcp.weather.show_weather", {"city": "Paris"}, reason="try")
    assert handle.result().status == "unsupported"
    assert host.pending_calls == []
    names = [c["name"] for c in host.inventory["capabilities"]]
    assert not [name for name in names if name.startswith("mcp.")]
    assert "app.open_url" in names  # the control: the lists still list the rest
    listed = host.send_app_list()["payload"]["capabilities"]
    assert not [c for c in listed if c["name"].startswith("mcp.")]


def test_unknown_tools_methods_and_params_get_precise_errors(
    host: Host, server: McpServer, view: View
) -> None:
    app_id = opened(server, view)
    view.request(app_id, 1, "tools/call", {"name": "nope", "arguments": {}})
    view.request(app_id, 2, "tools/call", {"name": "clock", "arguments": "x"})
    view.request(app_id, 3, "sampling/createMessage", {})
    view.request("mcp-999", 4, "tools/call", {"name": "clock"})
    codes = {
        n: view.wait_response(a, n)["error"]["code"]
        for a, n in ((app_id, 1), (app_id, 2), (app_id, 3), ("mcp-999", 4))
    }
    assert codes == {1: -32602, 2: -32602, 3: -32601, 4: -32602}
    assert host.pending_calls == []


# ---- the other requests ------------------------------------------------------------


def test_open_link_is_app_open_url_from_the_servers_agent(
    host: Host, server: McpServer, view: View
) -> None:
    app_id = opened(server, view)
    view.request(app_id, 5, "ui/open-link", {"url": "https://example.org/a"})
    (call,) = host.pending_calls
    assert (call.capability.name, call.agent) == ("app.open_url", "mcp.weather")
    # The host's summary, the app's strings in JSON quotes (issue 22 §2).
    assert call.reason.endswith('asks to open the link "https://example.org/a"')
    host.decide(call.call_id, "allow", outcome={"ok": True, "result": {"opened": True}})
    assert view.wait_response(app_id, 5)["result"] == {}
    view.request(app_id, 6, "ui/open-link", {"url": "javascript:alert(1)"})
    assert view.wait_response(app_id, 6)["error"]["data"]["rule"] == "C7"


def test_messages_and_model_context_are_kept_and_shown(
    host: Host, server: McpServer, view: View
) -> None:
    app_id = opened(server, view)
    message = {"role": "user", "content": [{"type": "text", "text": "Paris is sunny"}]}
    view.request(app_id, 1, "ui/message", message)
    view.request(app_id, 2, "ui/update-model-context", {"structuredContent": {"city": "Paris"}})
    assert view.wait_response(app_id, 1)["result"] == {}
    assert view.wait_response(app_id, 2)["result"] == {}
    app = server.apps[0]
    assert app.messages == [message]
    assert app.model_context == {"structuredContent": {"city": "Paris"}}
    notes = [op["text"] for op in view.ops if op["op"] == "mcp_note"]
    assert notes[0] == "message: Paris is sunny"
    assert "Paris" in notes[1]


def test_resources_read_reads_its_own_server(host: Host, server: McpServer, view: View) -> None:
    app_id = opened(server, view)
    view.request(app_id, 1, "resources/read", {"uri": weather.CLOCK_URI})
    contents = view.wait_response(app_id, 1)["result"]["contents"]
    assert contents[0]["text"] == weather.CLOCK_HTML
    view.request(app_id, 2, "resources/read", {})
    assert view.wait_response(app_id, 2)["error"]["code"] == -32602


# ---- traffic, refusals, grants, close ----------------------------------------------


def test_traffic_and_refusals_are_recorded_for_the_inspector(
    host: Host, server: McpServer, view: View
) -> None:
    app_id = opened(server, view)
    big = {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"x": "y" * 9000}}
    view.send(
        {
            "kind": "mcp_traffic",
            "app_id": app_id,
            "items": [
                {
                    "dir": "from_app",
                    "message": {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize"},
                },
                {"dir": "to_app", "message": big},
                {"dir": "sideways", "message": {}},
            ],
        }
    )
    view.send({"kind": "mcp_refused", "app_id": app_id, "code": "forged_id", "message": "id 9"})
    records = [r.to_json() for r in host.history.select(kind="mcp")]
    from_app = [r for r in records if r["envelope"]["dir"] == "from_app"]
    assert from_app[-1]["type"] == "mcp.ui/initialize"
    to_app = [r for r in records if r["envelope"]["type"] == "mcp.ui/notifications/size-changed"]
    assert to_app[0]["envelope"]["jsonrpc"]["size"] > 9000  # a preview, not 9 KB
    assert not [r for r in records if r["envelope"]["dir"] == "sideways"]
    (refused,) = host.history.select(type="mcp.refused")
    assert refused.error == {"code": "forged_id", "rule": "MCP", "path": "$", "message": "id 9"}
    assert view.ops[-1] == {"op": "mcp_note", "app_id": app_id, "text": "refused (forged_id): id 9"}
    inspector = host.inspector
    inspector.sent = []
    inspector.send = lambda content, buffers=None: inspector.sent.append(content)
    from ..conftest import view_sends

    view_sends(inspector, {"kind": "sync"})
    (reset,) = inspector.sent
    assert any(r["kind"] == "mcp" for r in reset["records"])  # the inspector shows it
    # The saved notebook's line counts the refusal, not the traffic, as refused or failed.
    text = host.inspector._repr_mimebundle_()[0]["text/plain"]
    assert text.endswith(", 1 refused or failed"), text


def test_a_grant_is_the_users_audited_and_rebuilds_the_frame(
    host: Host, server: McpServer, view: View
) -> None:
    app_id = opened(server, view)
    grant = {"kind": "mcp_grant", "app_id": app_id, "directive": "connectDomains"}
    view.send({**grant, "domain": "https://evil.example", "allow": True})  # not declared
    view.send(
        {**grant, "directive": "frameDomains", "domain": "https://frames.example", "allow": True}
    )
    assert [op["op"] for op in view.ops].count("mcp_open") == 1  # nothing granted
    view.send({**grant, "domain": "https://api.weather.example", "allow": True})
    reopened = view.wait(lambda op: op["op"] == "mcp_open", count=2)[-1]["spec"]
    assert reopened["generation"] == 2
    assert reopened["granted"] == {
        "connectDomains": ["https://api.weather.example"],
        "resourceDomains": [],
    }
    assert reopened["result"] is not None  # replayed by the new frame
    (row,) = host.audit.query(capability="mcp.weather.csp")
    assert (row["decision"], row["decided_by"], row["agent"]) == ("allow", "user", "mcp.weather")
    assert server.identity is not None and row["session"] == str(server.identity.session)
    # A second app of the same resource has the grant (kept for the kernel's life).
    second = server.open("show_weather", {"city": "Oslo"})
    assert second.spec()["granted"]["connectDomains"] == ["https://api.weather.example"]
    view.send({**grant, "domain": "https://api.weather.example", "allow": False})
    last = view.wait(lambda op: op["op"] == "mcp_open" and op["spec"]["app_id"] == app_id, 3)
    assert last[-1]["spec"]["granted"]["connectDomains"] == []


def test_closing_an_app_cancels_its_call_and_answers_nothing_more(
    host: Host, server: McpServer, view: View
) -> None:
    app_id = opened(server, view)
    view.request(app_id, 1, "tools/call", {"name": "refresh_weather", "arguments": {"city": "X"}})
    view.send({"kind": "mcp_close", "app_id": app_id})
    assert view.ops[-1] == {"op": "mcp_close", "app_id": app_id}
    assert server.apps == []
    host.decide(pending(host, "mcp.weather.refresh_weather"), "allow")
    assert view.responses(app_id, 1) == []  # closed: nobody to answer
    view.send({"kind": "sync"})
    assert view.sent[-1]["mcp_apps"] == []


def test_without_the_sdk_connect_says_how_to_install_it(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(UsageError, match=r"pip install 'lineup-jupyter\[mcp\]'"):
        host.connect_mcp(["python", "server.py"])


def test_every_mcp_op_the_kernel_sends_is_declared(
    host: Host, server: McpServer, view: View
) -> None:
    """The MCP half of test_view_protocol's check: every op is one FEED_OPS declares, with
    the fields its TypedDict says, as a view gets it (JSON round trip)."""
    app_id = opened(server, view)
    view.request(app_id, 1, "ui/message", {"content": [{"type": "text", "text": "hi"}]})
    view.wait_response(app_id, 1)
    view.request(app_id, 2, "nope/nope")
    view.wait_response(app_id, 2)
    view.send({"kind": "mcp_close", "app_id": app_id})
    for op in view.ops:
        declared(op, vp.FEED_OPS)
        if "error" in op:
            assert op["error"].keys() <= vp.McpError.__annotations__.keys()
    assert {op["op"] for op in view.ops} == {op for op in vp.FEED_OPS if op.startswith("mcp_")}


def test_a_view_made_after_an_app_opened_gets_it_in_the_snapshot(host: Host) -> None:
    """The host displayed after server.open (its widget made then): the app is there."""
    server = host.connect_mcp(weather.build())
    app = server.open("show_weather", {"city": "Paris"})
    app.wait(30)
    view = View(host)
    view.send({"kind": "sync"})
    (shown,) = view.sent[-1]["mcp_apps"]
    assert (shown["app_id"], shown["result"]) == (app.app_id, app.result)
    server.close()


def test_a_request_id_must_be_what_json_rpc_allows(server: McpServer, view: View) -> None:
    app_id = opened(server, view)
    view.request(app_id, {"forged": True}, "ui/message", {})
    error = view.wait_response(app_id, {"forged": True})["error"]
    assert error["code"] == -32602 and "string or an integer" in error["message"]
    assert server.apps[0].messages == []  # the control below is kept
    view.request(app_id, "m1", "ui/message", {"content": []})
    view.wait_response(app_id, "m1")
    assert server.apps[0].messages == [{"content": []}]


def test_closing_the_host_closes_its_servers(host: Host) -> None:
    """Host.close ends every MCP session it started; a server is also a context manager."""
    with host.connect_mcp(weather.build(), name="first") as first:
        assert first.status == "ready"
    assert first.status == "ended"
    second = host.connect_mcp(weather.build(), name="second")
    host.close()
    assert second.status == "ended"
    assert "mcp.second.show_weather" not in host.capabilities
