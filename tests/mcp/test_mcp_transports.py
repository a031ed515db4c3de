"""MCP servers over their real transports, and servers that get it wrong (docs/mcp-apps.md):
a process over stdio, streamable HTTP on 127.0.0.1 (a free port the server prints once it
listens: the test waits for that line, not a timer), and a hostile server: a 3 MiB app, a
wrong MIME type, a non-ui:// URI, a tool that never returns, a process that dies. Each ends
in a precise reason where the user looks, never in a hung kernel.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import StdioServerParameters

from lineup_jupyter import Host, McpServer, UsageError
from lineup_jupyter.core import _view_protocol as vp

from ..conftest import CONVERSATION
from ..mcp_helpers import DEADLINE, View
from ..widgets.test_view_protocol import declared

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "tests" / "mcp_servers" / "weather.py"


def hostile_process() -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "tests.mcp_servers.hostile"], cwd=str(ROOT)
    )


@pytest.fixture
def hostile(host: Host) -> Iterator[McpServer]:
    server = host.connect_mcp(hostile_process())
    yield server
    server.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Host, McpServer]]:
    """One host and hostile server for the tests that leave the server serving and read only
    what they add to the history: its process costs a second of CPU to start (the SDK's
    import). A test that ends the server, or needs a read the cache would spare, has its own."""
    data = tmp_path_factory.mktemp("shared-hostile")  # not the user's: lineup_home comes later
    with Host(CONVERSATION, data_dir=data) as host:
        yield host, host.connect_mcp(hostile_process())


def test_stdio_the_three_lines_of_the_docs(host: Host) -> None:
    view = View(host)
    server = host.connect_mcp([sys.executable, WEATHER])
    try:
        app = server.open("show_weather", {"city": "Paris"})
        assert app.wait(DEADLINE) is not None
        assert app.result is not None
        assert app.result["structuredContent"] == {"city": "Paris", "temperature": 21}
        assert [op["op"] for op in view.ops][:1] == ["mcp_open"]
    finally:
        server.close()
    assert server.status == "ended"
    assert server.view()["status"] == "closed" and server.view()["problem"] is None


def test_streamable_http_on_loopback(host: Host) -> None:
    with subprocess.Popen(
        [sys.executable, str(WEATHER), "http"], stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        port = int(process.stdout.readline())  # printed once the socket listens
        server = host.connect_mcp(f"http://127.0.0.1:{port}/mcp")
        try:
            assert server.name == "weather"
            app = server.open("show_weather", {"city": "Lyon"})
            assert app.wait(DEADLINE) is not None
            assert app.result is not None and not app.result["isError"]
        finally:
            server.close()
            process.terminate()


def test_a_url_where_nothing_listens_is_a_precise_error(host: Host) -> None:
    with socket.socket() as probe:  # a port that was free: nothing listens on it now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(UsageError, match="could not connect to the MCP server: the connection"):
        host.connect_mcp(f"http://127.0.0.1:{port}/mcp", timeout=10)


def test_a_url_that_is_not_http_is_refused_before_anything_starts(host: Host) -> None:
    with pytest.raises(UsageError, match=r"http\(s\):// URL"):
        host.connect_mcp("ftp://127.0.0.1/mcp")


def test_a_server_that_never_answers_its_handshake_is_a_precise_error(host: Host) -> None:
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    with pytest.raises(UsageError, match="did not answer within 1 s"):
        host.connect_mcp(silent, timeout=1)
    assert host.mcp_servers == []


def test_a_command_that_does_not_start_is_a_precise_error(host: Host) -> None:
    with pytest.raises(UsageError, match="could not connect"):
        host.connect_mcp(["/nonexistent/mcp-server"], timeout=5)


# ---- a hostile server --------------------------------------------------------------


def test_a_3_mib_app_over_the_bound_is_refused_with_a_card_recorded_and_shown(
    host: Host,
) -> None:
    """An app's HTML over the bound the user set: refused in the cell, recorded, a card in
    the host view where the app would be (what, the size, the bound, how to raise it; no
    frame, its tool not called) and a line of the host view's problems, never only the cell's
    error. The control: the same 3 MiB app under the default bound (8 MiB) opens."""
    view = View(host)
    small = host.connect_mcp(hostile_process(), name="small", max_html_bytes=2 * 1024 * 1024)
    try:
        with pytest.raises(UsageError, match=r"over this host's 2097152 \(2 MiB\); host"):
            small.open("huge")
        (refused,) = host.history.select(type="mcp.resource")
        assert refused.error is not None and "2 MiB" in refused.error["message"]
        (problem,) = [p for p in host.problems if p.source == "mcp"]
        assert "huge.html" in problem.where and "max_html_bytes" in problem.message
        (opened,) = view.wait(lambda op: op["op"] == "mcp_open")
        declared(opened, vp.FEED_OPS)
        spec = opened["spec"]
        assert (spec["tool"], spec["resource_uri"], spec["html"]) == (
            "huge",
            "ui://hostile/huge.html",
            "",
        )
        assert re.fullmatch(  # what, its size, the bound, and how to raise it
            r"'ui://hostile/huge\.html' is 31457\d\d bytes of HTML, over this host's 2097152 "
            r"\(2 MiB\); host\.connect_mcp\(\.\.\., max_html_bytes=\.\.\.\) allows more",
            spec["refused"],
        ), spec["refused"]
        assert [op["op"] for op in view.ops] == ["mcp_open"]  # no tool-input: nothing runs
        (card,) = small.apps
        assert card.wait(0) is None and card.cancelled == spec["refused"]
        assert not host.history.select(type="mcp.tools/call")  # its tool was not called
        card.close()  # the user's close, as any app's card
        view.wait(lambda op: op["op"] == "mcp_close")
        assert small.apps == []
    finally:
        small.close()
    default = host.connect_mcp(hostile_process())
    try:
        assert default.open("huge").wait(DEADLINE) is not None
    finally:
        default.close()


def test_an_app_served_with_the_wrong_mime_type_is_refused(
    shared: tuple[Host, McpServer],
) -> None:
    _, hostile = shared
    with pytest.raises(UsageError, match="served as 'text/html', not 'text/html;profile=mcp-app'"):
        hostile.open("wrong_mime")


def test_a_resource_that_is_not_ui_is_never_read(host: Host, hostile: McpServer) -> None:
    with pytest.raises(UsageError, match="is not a ui:// resource"):
        hostile.open("not_ui")
    reads = [r for r in host.history.select(kind="mcp") if r.type == "mcp.resources/read"]
    assert reads == []  # the control below reads one
    hostile.open("fine").wait(DEADLINE)
    assert [r for r in host.history.select(kind="mcp") if r.type == "mcp.resources/read"]


def test_a_tool_that_never_returns_is_cancelled_at_its_deadline(
    shared: tuple[Host, McpServer],
) -> None:
    host, hostile = shared
    view = View(host)
    app = hostile.open("hang", timeout=1)
    assert app.wait(DEADLINE) is None
    assert app.cancelled == "the server did not answer within 1 s; the host cancelled the request"
    (cancelled,) = view.wait(
        lambda op: op["op"] == "mcp_notify" and op["method"].endswith("tool-cancelled")
    )
    assert cancelled["params"] == {"reason": app.cancelled}
    assert hostile.status == "ready"  # one hung call, the server still serves
    assert hostile.open("fine").wait(DEADLINE) is not None


def test_a_server_that_dies_shows_why_and_cancels_its_apps(host: Host, hostile: McpServer) -> None:
    view = View(host)
    assert view.widget.agents == [hostile.view()]  # H42: its line, as an agent's
    assert view.widget.agents[0]["status"] == "ready"
    ended = threading.Event()
    view.widget.observe(
        lambda change: (
            ended.set() if [line["status"] for line in change["new"]] == ["ended"] else None
        ),
        names="agents",
    )
    shown = hostile.open("fine")
    shown.wait(DEADLINE)
    dying = hostile.open("die")
    assert dying.wait(DEADLINE) is None
    assert dying.cancelled == "the server's process exited with code 3"  # not "Connection closed"
    view.wait(lambda op: op["op"] == "mcp_note" and "ended" in op["text"])
    assert ended.wait(DEADLINE)  # the last the host does of an end: the agents line
    assert hostile.status == "ended"
    assert hostile.problem is not None
    assert "hostile: exiting on purpose" in hostile.problem  # its stderr, where the user looks
    (problem,) = host.problems  # the host view's problems line: seen with no app open too
    assert (problem.where, problem.source) == ("MCP server 'hostile'", "mcp")
    (line,) = view.widget.agents
    assert line["agent_id"] == "mcp.hostile" and line["via"].startswith("MCP over stdio, ")
    assert "exiting on purpose" in line["problem"]
    with pytest.raises(UsageError, match="the server is ended"):
        hostile.call("fine")


def test_a_tool_with_an_invalid_schema_is_refused_alone(shared: tuple[Host, McpServer]) -> None:
    """The connection stands; that tool is no capability (its apps may not call it), on
    record; the control: the other tools are declared."""
    host, hostile = shared
    assert hostile.tool("bad_schema").capability is None
    (refused,) = host.history.select(type="mcp.tool")
    assert refused.error is not None and refused.error["path"] == "$.inputSchema"
    assert hostile.tool("fine").capability == "mcp.hostile.fine"


def test_an_app_cannot_pull_a_huge_resource_through_the_comm(host: Host) -> None:
    view = View(host)
    hostile = host.connect_mcp(hostile_process(), max_html_bytes=2 * 1024 * 1024)
    app = hostile.open("fine")
    app.wait(DEADLINE)
    view.request(app.app_id, 1, "resources/read", {"uri": "ui://hostile/huge.html"})
    error = view.wait_response(app.app_id, 1)["error"]
    assert error["code"] == -32000 and "over this host's 2097152" in error["message"]
    view.request(app.app_id, 2, "resources/read", {"uri": "ui://hostile/fine.html"})  # control
    assert "result" in view.wait_response(app.app_id, 2)
    hostile.close()


def test_resources_list_passes_through_to_the_server(shared: tuple[Host, McpServer]) -> None:
    """hostCapabilities.serverResources is advertised: an app's resources/list is the
    server's own list (the conformance runner's capabilities/server-passthrough), recorded;
    a cursor that is not a string is -32602 and never reaches the server."""
    host, hostile = shared
    view = View(host)
    app = hostile.open("fine")
    app.wait(DEADLINE)
    view.request(app.app_id, 1, "resources/list", {})
    listed = view.wait_response(app.app_id, 1)["result"]["resources"]
    assert "ui://hostile/fine.html" in {resource["uri"] for resource in listed}
    view.request(app.app_id, 2, "resources/list", {"cursor": 5})
    assert view.wait_response(app.app_id, 2)["error"]["code"] == -32602
    sent = [
        r.envelope["jsonrpc"]
        for r in host.history.select(kind="mcp")
        if r.envelope.get("dir") == "to_server" and r.envelope["type"] == "mcp.resources/list"
    ]
    assert sent == [{"method": "resources/list", "params": {}}]


def test_a_5_mib_result_is_cancelled_with_its_size(shared: tuple[Host, McpServer]) -> None:
    host, hostile = shared
    app = hostile.open("flood")
    assert app.wait(DEADLINE) is None
    # 5 MiB as text and again as structuredContent: over the line limit, let go while read
    assert app.cancelled is not None and "over this host's 8388608" in app.cancelled
    calls = [r.envelope["jsonrpc"] for r in host.history.select(kind="mcp")]
    assert not [c for c in calls if "result" in c and len(str(c)) > 4 * 1024 * 1024]
    assert hostile.open("fine").wait(DEADLINE) is not None  # the control
