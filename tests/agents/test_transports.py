"""Agents outside the kernel: real child processes over stdio, real loopback WebSockets.

Each agent here is a few lines of stdlib Python (``PRELUDE`` below) or a test-side WebSocket
server; the user is lineup_jupyter.testing.ScriptedUser. Timeouts only guard against a hang.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import signal
import socket
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect
from websockets.sync.server import Server, ServerConnection, serve

from lineup_jupyter import Host, Limits, UsageError
from lineup_jupyter.host._host import session_port
from lineup_jupyter.testing import ScriptedUser

EXAMPLES = Path(__file__).parents[2] / "examples"
GUARD = 30  # seconds: a guard against a hang on a loaded machine, never a measure
AGENT = "agent_p"
OPEN = {
    "instance_id": "p.1",
    "app": {"id": "com.example.puppet", "version": "1.0.0", "html": "<button>go</button>"},
    "state": {"n": 0},
}

# What every test agent starts with: read the inventory, then helpers to speak and to tell
# the test (on stderr) what it heard.
PRELUDE = """
import json, sys, time

def read():
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)

def log(*parts):
    print(*parts, file=sys.stderr, flush=True)

inventory = read()
CONVERSATION = inventory["conversation_id"]
log("inventory", inventory["payload"]["revision"], json.dumps(inventory.get("target")))

def send(kind, payload, id_, sender="agent_p"):
    envelope = {"v": 1, "id": id_, "type": "lineup.v1." + kind,
                "conversation_id": CONVERSATION, "sender": {"kind": "agent", "id": sender},
                "payload": payload}
    raw(json.dumps(envelope))

def raw(text):
    sys.stdout.write(text + "\\n")
    sys.stdout.flush()

def listen():
    for line in sys.stdin:
        envelope = json.loads(line)
        log("got", envelope["type"], envelope["payload"].get("code", ""),
            json.dumps(envelope.get("target")))
"""

OPENS_AND_LISTENS = f"send('ui.open', {OPEN!r}, 'm1')\nlisten()\n"


def agent(tmp_path: Path, body: str) -> list[str]:
    """The argv of a test agent: PRELUDE, then ``body``."""
    script = tmp_path / f"agent_{len(list(tmp_path.iterdir()))}.py"
    script.write_text(PRELUDE + textwrap.dedent(body), "utf-8")
    return [sys.executable, str(script)]


@pytest.fixture
def user() -> Iterator[ScriptedUser]:
    with ScriptedUser(conversation_id="conv_01") as scripted:
        yield scripted


# ---- stdio ---------------------------------------------------------------------------------


def test_inventory_comes_first_and_envelopes_flow_both_ways(
    user: ScriptedUser, tmp_path: Path
) -> None:
    """C1, H40: the inventory is the first line; the agent's lines reach the host, and the
    events of its surface reach the agent."""
    process = user.connect_process(agent(tmp_path, OPENS_AND_LISTENS), agent_id=AGENT)
    inventory = user.expect_to_agent("client.inventory")
    assert inventory["target"] == {"kind": "agent", "id": AGENT}
    user.expect("ui.open", instance_id="p.1")
    assert user.host.surfaces["p.1"].owner == AGENT
    user.click("p.1", "clicked", {"n": 1})
    user.wait_for(lambda: "got lineup.v1.ui.event" in process.stderr_tail, "the event")
    assert f"inventory {inventory['payload']['revision']} " in process.stderr_tail
    assert process.status == "connected" and process.returncode is None
    assert process.agent_id == AGENT


def test_without_agent_id_the_first_envelope_names_the_agent(
    user: ScriptedUser, tmp_path: Path
) -> None:
    """H41: unbound, the inventory goes to every agent; the first sender.id binds."""
    process = user.connect_process(agent(tmp_path, OPENS_AND_LISTENS))
    assert "target" not in user.expect_to_agent("client.inventory")
    user.expect("ui.open")
    assert process.agent_id == AGENT
    user.click("p.1", "clicked")
    user.wait_for(lambda: "got lineup.v1.ui.event" in process.stderr_tail, "the event")


def test_a_line_that_is_not_json_is_refused_and_the_stream_goes_on(
    user: ScriptedUser, tmp_path: Path
) -> None:
    """H2, H3: a log line on stdout is refused like any bad message; the agent hears why,
    and its next envelope is taken."""
    body = f"raw('print debugging')\nraw('')\nsend('ui.open', {OPEN!r}, 'm1')\nlisten()"
    process = user.connect_process(agent(tmp_path, body), agent_id=AGENT)
    error = user.expect_to_agent("error", code="invalid_json")
    assert error["payload"]["rule"] == "H2"
    assert "target" not in error  # no sender could be read: H3 tells every agent
    user.expect("ui.open")  # the blank line was skipped, the envelope after it taken
    user.wait_for(lambda: "got lineup.v1.error invalid_json" in process.stderr_tail, "the error")
    assert len(user.refused()) == 1


def test_an_envelope_that_breaks_a_rule_is_refused_as_in_the_kernel(
    user: ScriptedUser, tmp_path: Path
) -> None:
    """U1, H6, H3: the host's own checks, the host's own answers, nothing changed."""
    body = """
    send("ui.patch", {"instance_id": "nowhere", "state": {}}, "m1")
    send("ui.open", {"instance_id": "bad id", "app": {}, "state": {}}, "m2")
    listen()
    """
    process = user.connect_process(agent(tmp_path, body), agent_id=AGENT)
    assert user.expect_to_agent("error", code="unknown_instance")["payload"]["rule"] == "H6"
    assert user.expect_to_agent("error", code="invalid")["payload"]["refused_id"] == "m2"
    user.wait_for(lambda: process.stderr_tail.count("got lineup.v1.error") == 2, "two errors")
    assert list(user.host.surfaces) == []


def test_a_line_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    """H2, H40: a 1 MB line against a 4 KiB limit is skipped, counted, refused; the next
    line is read normally."""
    body = f"raw('x' * 1_000_000)\nsend('ui.open', {OPEN!r}, 'm1')\nlisten()"
    with ScriptedUser("conv_01", limits=Limits(max_message_bytes=4096)) as user:
        process = user.connect_process(agent(tmp_path, body), agent_id=AGENT)
        error = user.expect_to_agent("error", code="too_large")
        assert error["payload"]["rule"] == "H2"
        assert "1000000 bytes; the limit is 4096" in error["payload"]["message"]
        user.expect("ui.open")
        refused = [r for r in user.host.history if r.kind == "refused"]
        assert [r.envelope for r in refused] == [{"raw": "<a line of 1000000 bytes>"}]
        user.wait_for(lambda: "got lineup.v1.error too_large" in process.stderr_tail, "it")


def test_an_envelope_for_another_agent_is_refused(user: ScriptedUser, tmp_path: Path) -> None:
    """H41, H8: a process bound to agent_p cannot act as the kernel's agent_k (whose id is
    the kernel's: agent_conflict, to the process alone)."""
    kernel_agent = user.connect_agent("agent_k")
    kernel_agent.open("k.1", html="<p>mine</p>", state={"v": 1})
    body = """
    send("ui.patch", {"instance_id": "k.1", "state": {"v": 666}}, "m1", sender="agent_k")
    listen()
    """
    process = user.connect_process(agent(tmp_path, body), agent_id=AGENT)
    error = user.expect_to_agent("error", code="agent_conflict")
    assert (error["payload"]["rule"], error["payload"]["path"]) == ("H41", "$.sender.id")
    assert error["target"] == {"kind": "agent", "id": AGENT}  # to the process, not agent_k
    assert user.host.surfaces["k.1"].state == {"v": 1}
    assert kernel_agent.errors == []
    user.wait_for(lambda: "got lineup.v1.error agent_conflict" in process.stderr_tail, "it")


def test_host_close_ends_its_agent_processes_and_listeners(tmp_path: Path) -> None:
    """Host.close() closes what the host started (a process, a listener) and its files;
    closing again does nothing. ``with Host(...)`` closes it at the end of the block."""
    with Host(conversation_id="conv_01", data_dir=tmp_path / "data") as host:
        process = host.connect_process(agent(tmp_path, OPENS_AND_LISTENS), agent_id=AGENT)
        listener = host.listen_websocket(token="t0ken")
        assert process.status == "connected"
    assert process.status == "closed"
    with pytest.raises(ConnectionRefusedError):  # the listener's port is closed
        socket.create_connection(("127.0.0.1", listener.port), timeout=2).close()
    host.close()  # twice: nothing


def test_an_agent_that_exits_cleanly_is_logged_as_info_not_warned(
    user: ScriptedUser, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """H42: code 0 is the agent's way of saying goodbye (it left when
    its surface closed, say): an info record, not a warning in red in the notebook."""
    body = f"""
    send("ui.open", {OPEN!r}, "m1")
    read()
    sys.exit(0)
    """
    process = user.connect_process(agent(tmp_path, body), agent_id=AGENT)
    user.expect("ui.open")
    with caplog.at_level(logging.INFO, logger="lineup_jupyter"):
        user.click("p.1", "clicked")
        user.wait_for(lambda: "exited" in caplog.text, "the report of the exit")
    assert process.returncode == 0
    (record,) = [r for r in caplog.records if "exited" in r.getMessage()]
    assert record.levelno == logging.INFO and "code 0" in record.getMessage()


def test_an_agent_crashing_mid_conversation_is_reported_not_raised(
    user: ScriptedUser, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """H42: the exit is a [lineup] warning with the end of its stderr; the kernel goes on."""
    body = f"""
    send("ui.open", {OPEN!r}, "m1")
    read()
    log("Traceback: boom")
    sys.exit(3)
    """
    process = user.connect_process(agent(tmp_path, body), agent_id=AGENT)
    user.expect("ui.open")
    with caplog.at_level(logging.WARNING, logger="lineup_jupyter"):
        user.click("p.1", "clicked")
        user.wait_for(lambda: "exited" in caplog.text, "the report of the exit")
    assert process.status == "ended" and process.returncode == 3
    assert "boom" in process.stderr_tail
    assert f"[lineup] agent '{AGENT}'" in caplog.text and "code 3" in caplog.text
    assert "boom" in caplog.text
    user.click("p.1", "clicked")  # its surface stays; the event reaches no one, nothing raises
    user.connect_agent("agent_k").open("k.1", html="<p>still here</p>")


def test_an_agent_that_never_reads_does_not_block_the_host(
    user: ScriptedUser, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """H42: what it does not read waits in a bounded queue; past the bound the connection is
    closed (and reported) rather than the host blocking or messages being lost."""
    body = f"send('ui.open', {OPEN!r}, 'm1')\ntime.sleep(60)\n"
    process = user.connect_process(agent(tmp_path, body), agent_id=AGENT)
    user.expect("ui.open")
    data = {"text": "x" * 15_000}  # U9: under 16 KiB
    with caplog.at_level(logging.WARNING, logger="lineup_jupyter"):
        for _ in range(2_000):  # 30 MB of events, far past the 8 Mi characters of the queue
            user.click("p.1", "typed", data)
            if process.status != "connected":  # hung up: "disconnected", then "closed"
                break
        # The hang-up is at once; "closed" comes when the transport reports the end (the
        # process terminated), from its own thread.
        user.wait_for(lambda: process.status == "closed", "the connection to be closed")
    assert "did not read what the host sent" in caplog.text
    user.wait_for(lambda: process.returncode is not None, "the process to be terminated")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM can be ignored on POSIX only")
def test_close_terminates_then_kills(user: ScriptedUser, tmp_path: Path) -> None:
    """close() terminates the process and kills it when it ignores that."""
    body = """
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    log("ready")
    time.sleep(60)
    """
    process = user.connect_process(agent(tmp_path, body), agent_id=AGENT)
    user.wait_for(lambda: "ready" in process.stderr_tail, "the agent to start")
    process.close(timeout=0.2)
    assert process.returncode == -signal.SIGKILL and process.status == "closed"


def test_close_ends_a_process_quietly(
    user: ScriptedUser, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A close asked for is not a crash: no warning; the agent hears nothing more."""
    process = user.connect_process(agent(tmp_path, OPENS_AND_LISTENS))
    user.expect("ui.open")
    with caplog.at_level(logging.WARNING, logger="lineup_jupyter"):
        process.close()
        process.close()  # twice is harmless
    assert process.status == "closed" and process.returncode is not None
    assert caplog.text == ""
    user.click("p.1", "clicked")  # no longer delivered, never raises


def test_a_bad_command_is_a_usage_error(user: ScriptedUser) -> None:
    with pytest.raises(UsageError, match=r"^\[lineup\] could not start"):
        user.connect_process(["/nonexistent/agent"])
    with pytest.raises(UsageError, match="as a list"):
        user.connect_process("python my_agent.py")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="must match"):
        user.connect_process([sys.executable, "-c", "pass"], agent_id="bad id")


def test_messages_are_handed_to_the_host_on_the_event_loop(tmp_path: Path) -> None:
    """The reader thread hands each message to the loop that was running where the agent was
    connected (a notebook cell), never touching the host from its own thread."""
    host = Host("conv_01")
    threads: list[int] = []
    port = session_port(host)  # what a connection is given of the host
    receive = port.receive  # what it calls: Host.receive for one endpoint (H41)

    def spy(raw: str | bytes, endpoint: object) -> None:
        threads.append(threading.get_ident())
        receive(raw, endpoint)

    port.receive = spy  # type: ignore[method-assign]

    async def cell() -> int:
        process = host.connect_process(agent(tmp_path, OPENS_AND_LISTENS))
        for _ in range(100 * GUARD):  # a guard, not a measure
            if "p.1" in host.surfaces:
                break
            await asyncio.sleep(0.01)
        process.close()
        return threading.get_ident()

    loop_thread = asyncio.run(cell())
    assert threads == [loop_thread]


def test_a_listeners_agents_reach_the_host_on_the_event_loop(tmp_path: Path) -> None:
    """A listener made in a cell (a running loop) makes its sessions and hands their messages
    to that loop, never touching the host from its own I/O thread; it adds one thread (its
    loop), no worker."""
    host = Host("conv_01", data_dir=tmp_path / "data")
    threads: list[int] = []
    port = session_port(host)  # what a connection is given of the host
    receive = port.receive  # what it calls: Host.receive for one endpoint (H41)

    def spy(raw: str | bytes, endpoint: object) -> None:
        threads.append(threading.get_ident())
        receive(raw, endpoint)

    port.receive = spy  # type: ignore[method-assign]

    async def cell() -> int:
        before = threading.active_count()
        listener = host.listen_websocket()
        added = threading.active_count() - before
        heard: list[str] = []

        def agent() -> None:
            url = f"{listener.url}?token={listener.token}&agent_id=agent_ws"
            with connect(url, open_timeout=GUARD) as ws:
                heard.append(json.loads(ws.recv(timeout=GUARD))["type"])
                ws.send(envelope("ui.open", OPEN, "m1"))
                heard.append(json.loads(ws.recv(timeout=GUARD))["type"])  # the barrier

        outside = threading.Thread(target=agent)
        outside.start()
        for _ in range(100 * GUARD):  # a guard, not a measure
            if "p.1" in host.surfaces:
                break
            await asyncio.sleep(0.01)
        host.send_app_list()  # the barrier: the agent leaves once it has it
        while outside.is_alive():
            await asyncio.sleep(0.01)
        listener.close()
        assert heard == ["lineup.v1.client.inventory", "lineup.v1.app.list"]
        assert added == 1
        return threading.get_ident()

    loop_thread = asyncio.run(cell())
    host.close()
    assert threads == [loop_thread]


# ---- WebSocket: the host connects to an agent -----------------------------------------------


class AgentServer:
    """An agent serving WebSocket on 127.0.0.1, driven by the test: it records what it hears
    and sends what it is told on its latest connection."""

    def __init__(self) -> None:
        self.heard: queue.Queue[dict[str, Any]] = queue.Queue()
        self.connections: list[ServerConnection] = []
        self.server: Server = serve(self._handle, "127.0.0.1", 0)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"ws://127.0.0.1:{self.server.socket.getsockname()[1]}/agent"

    def _handle(self, ws: ServerConnection) -> None:
        self.connections.append(ws)
        for message in ws:
            self.heard.put(json.loads(message))

    def next(self, type_: str) -> dict[str, Any]:
        while True:
            envelope = self.heard.get(timeout=GUARD)
            if envelope["type"] == "lineup.v1." + type_:
                return envelope

    def send(self, message: str | bytes) -> None:
        self.connections[-1].send(message)


def envelope(type_: str, payload: dict[str, Any], id_: str) -> str:
    return json.dumps(
        {
            "v": 1,
            "id": id_,
            "type": "lineup.v1." + type_,
            "conversation_id": "conv_01",
            "sender": {"kind": "agent", "id": "agent_ws"},
            "payload": payload,
        }
    )


@pytest.fixture
def agent_server() -> Iterator[AgentServer]:
    server = AgentServer()
    yield server
    server.server.shutdown()


def test_websocket_reconnects_with_a_fresh_inventory(
    user: ScriptedUser, agent_server: AgentServer
) -> None:
    """C1, C2, H42: every connection starts with client.inventory, of the same or a higher
    revision; the surface's events go to the agent's current connection."""
    remote = user.connect_websocket(agent_server.url, agent_id="agent_ws")
    first = agent_server.next("client.inventory")
    assert first["target"] == {"kind": "agent", "id": "agent_ws"}
    agent_server.send(envelope("ui.open", {**OPEN, "instance_id": "w.1"}, "m1"))
    user.expect("ui.open", instance_id="w.1")
    assert remote.status == "connected"

    agent_server.connections[-1].close()  # the agent drops the connection
    second = agent_server.next("client.inventory")
    assert int(second["payload"]["revision"]) >= int(first["payload"]["revision"])
    user.wait_for(lambda: remote.status == "connected", "the reconnection")
    assert remote.connections == 2
    user.click("w.1", "clicked")
    assert agent_server.next("ui.event")["payload"]["event"] == "clicked"


def test_a_binary_frame_is_refused_and_the_connection_goes_on(
    user: ScriptedUser, agent_server: AgentServer
) -> None:
    """H40: one envelope per text frame; a binary frame gets a refusal saying so."""
    user.connect_websocket(agent_server.url, agent_id="agent_ws")
    agent_server.next("client.inventory")
    agent_server.send(envelope("ui.open", OPEN, "m1").encode())
    error = agent_server.next("error")
    assert (error["payload"]["code"], error["payload"]["rule"]) == ("invalid", "H40")
    assert "text frame" in error["payload"]["message"]
    assert list(user.host.surfaces) == []
    agent_server.send(envelope("ui.open", OPEN, "m2"))
    user.expect("ui.open")


def test_a_frame_over_the_limit_closes_the_connection(agent_server: AgentServer) -> None:
    """H2, H40: websockets refuses it from its header (1009) without reading it; the refusal
    is recorded, and the host connects again."""
    with ScriptedUser("conv_01", limits=Limits(max_message_bytes=4096)) as user:
        remote = user.connect_websocket(agent_server.url, agent_id="agent_ws")
        agent_server.next("client.inventory")
        agent_server.send("x" * 10_000)
        agent_server.next("client.inventory")  # the next connection
        assert remote.connections == 2
        refusal = user.refused()[0]
        assert (refusal["code"], refusal["rule"]) == ("too_large", "H2")


def test_connect_websocket_needs_a_websocket_url(user: ScriptedUser) -> None:
    with pytest.raises(UsageError, match="not a WebSocket URL"):
        user.connect_websocket("http://127.0.0.1:1/")


# ---- WebSocket: agents connect to the host ----------------------------------------------------


def test_the_listener_binds_loopback_only(user: ScriptedUser) -> None:
    """H43: 127.0.0.1 and nothing else: another loopback address finds no one."""
    listener = user.listen_websocket()
    assert listener.url == f"ws://127.0.0.1:{listener.port}/"
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.2", listener.port), GUARD),
    ):
        pass


def test_the_listener_turns_away_what_lacks_the_token(user: ScriptedUser) -> None:
    """H43: no token, a wrong token, a web page (Origin) with the right one, or a bad agent
    id: refused at the handshake, and nothing reaches host.receive."""
    calls: list[Any] = []
    port = session_port(user.host)  # what a connection is given of the host
    receive = port.receive  # what it calls (Host.receive for one endpoint)

    def spy(raw: str | bytes, endpoint: object) -> None:
        calls.append(raw)
        receive(raw, endpoint)

    port.receive = spy  # type: ignore[method-assign]
    listener = user.listen_websocket()
    attempts: list[dict[str, Any]] = [
        {"uri": listener.url},
        {"uri": listener.url + "?token=wrong"},
        {"uri": listener.url, "additional_headers": {"Authorization": "Bearer wrong"}},
        {"uri": listener.url + "?token=" + listener.token, "origin": "http://127.0.0.1:8888"},
    ]
    statuses = []
    for attempt in attempts:
        with pytest.raises(InvalidStatus) as refused:
            connect(**attempt, open_timeout=GUARD)
        statuses.append(refused.value.response.status_code)
    with pytest.raises(InvalidStatus) as named_badly:  # M1: the token is right, the id is not
        connect(f"{listener.url}?token={listener.token}&agent_id=bad%20id", open_timeout=GUARD)
    assert named_badly.value.response.status_code == 400
    assert statuses == [401, 401, 401, 403]
    assert listener.refused == 5 and listener.agents == []
    assert calls == [] and len(user.host.history) == 0


def test_an_agent_connects_with_the_token_and_again_after_leaving(user: ScriptedUser) -> None:
    """H41, H43, C1: a bearer token and ?agent_id= name it; each connection hears a fresh
    inventory; an agent that leaves is gone from the listener."""
    listener = user.listen_websocket()
    bearer = {"Authorization": f"Bearer {listener.token}"}
    ws: ClientConnection
    with connect(listener.url + "?agent_id=agent_ws", additional_headers=bearer) as ws:
        first = json.loads(ws.recv(timeout=GUARD))
        assert first["type"] == "lineup.v1.client.inventory"
        assert first["target"] == {"kind": "agent", "id": "agent_ws"}
        ws.send(envelope("ui.open", OPEN, "m1"))
        user.expect("ui.open")
        assert [a.agent_id for a in listener.agents] == ["agent_ws"]
        # Its thread, like every one of ours, is a daemon: it cannot keep a kernel alive.
        assert [t for t in threading.enumerate() if not t.daemon] == [threading.main_thread()]
    user.wait_for(lambda: listener.agents == [], "the agent to be gone")
    with connect(f"{listener.url}?token={listener.token}") as ws:  # unnamed, by query token
        second = json.loads(ws.recv(timeout=GUARD))
        assert "target" not in second
        assert int(second["payload"]["revision"]) >= int(first["payload"]["revision"])
        ws.send(envelope("ui.patch", {"instance_id": "p.1", "state": {"n": 2}}, "m2"))
        user.expect("ui.patch")
        user.click("p.1", "clicked")
        assert json.loads(ws.recv(timeout=GUARD))["type"] == "lineup.v1.ui.event"
    listener.close()
    assert listener.agents == []


# ---- the examples, end to end ----------------------------------------------------------------


def test_the_echo_example(user: ScriptedUser) -> None:
    """examples/echo_agent.py: open, echo a click with a patch, confirm a reset, and exit
    when the user closes its surface."""
    echo = user.connect_process([sys.executable, str(EXAMPLES / "echo_agent.py")])
    opened = user.expect("ui.open", instance_id="echo.main")
    assert opened["sender"]["id"] == "agent_echo" == echo.agent_id
    user.click("echo.main", "echo", {"text": "hi"})
    user.expect("ui.patch", state={"count": 1, "last": "hi"}, merge=True)
    user.click("echo.main", "reset")
    question = user.expect("component.show", kind="confirm")
    user.answer(question["payload"]["component_id"], True)
    user.expect("ui.patch", state={"count": 0, "last": ""})
    user.expect("component.show", kind="text", text="Reset.")
    user.close_surface("echo.main")
    user.wait_for(lambda: echo.status == "ended", "the agent to exit")
    assert echo.returncode == 0 and user.refused() == []


def test_the_plain_json_example(user: ScriptedUser) -> None:
    """examples/plain_json_agent.py, stdlib only: a choice, a surface whose hand-computed
    integrity the host verifies (H4, S7), a patch, and a goodbye."""
    plain = user.connect_process([sys.executable, str(EXAMPLES / "plain_json_agent.py")])
    question = user.expect("component.show", kind="choice")
    user.answer(question["payload"]["component_id"], ["blue"])
    opened = user.expect("ui.open", instance_id="plain.swatch")
    assert opened["payload"]["app"]["integrity"].startswith("sha256-")
    user.expect("component.show", kind="status", state="done")
    user.click("plain.swatch", "darker")
    user.expect("ui.patch", state={"shade": 1})
    user.close_surface("plain.swatch")
    user.expect("component.show", kind="markdown")
    user.wait_for(lambda: plain.status == "ended", "the agent to exit")
    assert plain.returncode == 0 and user.refused() == []


def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 signed by its own key: a private agent's wss:// server."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "lineup test agent")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "agent.crt", tmp_path / "agent.key"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def test_wss_with_a_private_certificate_needs_the_ssl_context_that_trusts_it(
    user: ScriptedUser, tmp_path: Path
) -> None:
    """H42 over TLS: the agent's self-signed certificate is refused by default (its line in
    the view says why), and accepted with an ssl_context that trusts it."""
    import ssl

    cert_file, key_file = self_signed(tmp_path)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_file, key_file)
    heard: queue.Queue[dict[str, Any]] = queue.Queue()

    def handle(ws: ServerConnection) -> None:
        for message in ws:
            heard.put(json.loads(message))

    server = serve(handle, "127.0.0.1", 0, ssl=server_context)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"wss://127.0.0.1:{server.socket.getsockname()[1]}/agent"
    try:
        untrusted = user.connect_websocket(url, agent_id="agent_tls")
        user.wait_for(lambda: untrusted.problem is not None, "the refused certificate")
        assert "CERTIFICATE_VERIFY_FAILED" in str(untrusted.problem)
        assert untrusted.status == "connecting" and heard.empty()
        untrusted.close()

        trusting = ssl.create_default_context(cafile=str(cert_file))
        trusted = user.connect_websocket(url, agent_id="agent_tls", ssl_context=trusting)
        assert heard.get(timeout=GUARD)["type"] == "lineup.v1.client.inventory"  # C1
        user.wait_for(lambda: trusted.status == "connected", "the TLS connection")
        assert trusted.problem is None
        with pytest.raises(UsageError, match="ssl_context is for wss"):
            user.connect_websocket(url.replace("wss:", "ws:"), ssl_context=trusting)
    finally:
        server.shutdown()


# ---- in memory: the session's rules without a process or a socket ----------------------------


def as_memory_agent(
    type_: str, payload: dict[str, Any], id_: str, sender: str = AGENT
) -> dict[str, Any]:
    return {
        "v": 1,
        "id": id_,
        "type": "lineup.v1." + type_,
        "conversation_id": "conv_01",
        "sender": {"kind": "agent", "id": sender},
        "payload": payload,
    }


def test_memory_the_inventory_comes_first_and_the_first_envelope_names_the_agent(
    user: ScriptedUser,
) -> None:
    """C1, H41, H42: the session over an in-memory transport: the inventory first, to this
    connection alone (it has no id yet); its first sender.id binds it; its surface's events
    reach it; the statuses are the shared words."""
    outside = user.connect_memory()
    session = outside.session
    assert session.status == "connected" and session in user.host.remote_agents
    inventory = outside.receive()
    assert inventory["type"] == "lineup.v1.client.inventory" and "target" not in inventory
    outside.send(as_memory_agent("ui.open", OPEN, "m1"))
    user.expect("ui.open", instance_id="p.1")
    assert session.agent_id == AGENT and user.host.surfaces["p.1"].owner == AGENT
    user.click("p.1", "clicked", {"n": 1})
    event = outside.expect("ui.event")
    assert event["target"] == {"kind": "agent", "id": AGENT}
    assert event["payload"]["data"] == {"n": 1}
    outside.leave()
    user.wait_for(lambda: session.status == "ended", "the end to be reported")
    assert session.problem is None  # it meant to leave
    assert [a["status"] for a in user.host.widget.agents] == ["ended"]


def test_memory_what_is_not_json_is_refused_and_the_stream_goes_on(user: ScriptedUser) -> None:
    """H2, H3: a message that is not JSON is refused to this connection alone (no sender
    could be read: untargeted); the next envelope is taken."""
    outside = user.connect_memory(agent_id=AGENT)
    outside.expect("client.inventory")
    outside.send("print debugging")
    outside.send(b"\xff\xfe not utf-8")
    for code in ("invalid_json", "invalid_json"):
        error = outside.expect("error")
        assert error["payload"]["code"] == code and error["payload"]["rule"] == "H2"
        assert "target" not in error
    outside.send(as_memory_agent("ui.open", OPEN, "m1"))
    user.expect("ui.open")
    assert len(user.refused()) == 2


def test_memory_an_envelope_that_breaks_a_rule_is_refused_as_in_the_kernel(
    user: ScriptedUser,
) -> None:
    """U1, H6, H3: the host's own checks and answers, to this agent; nothing changed."""
    outside = user.connect_memory(agent_id=AGENT)
    outside.expect("client.inventory")
    outside.send(as_memory_agent("ui.patch", {"instance_id": "nowhere", "state": {}}, "m1"))
    outside.send(
        as_memory_agent("ui.open", {"instance_id": "bad id", "app": {}, "state": {}}, "m2")
    )
    unknown, invalid = outside.expect("error"), outside.expect("error")
    assert (unknown["payload"]["code"], unknown["payload"]["rule"]) == ("unknown_instance", "H6")
    assert (invalid["payload"]["code"], invalid["payload"]["refused_id"]) == ("invalid", "m2")
    assert unknown["target"] == {"kind": "agent", "id": AGENT}
    assert list(user.host.surfaces) == []


def test_memory_an_agent_that_never_reads_is_hung_up_on(
    user: ScriptedUser, caplog: pytest.LogCaptureFixture
) -> None:
    """H42: what it does not read waits in a bounded queue (8 Mi characters); past it the
    session hangs up, says why on its line, and the host never blocked; what came after
    is counted as dropped, never queued without bound."""
    outside = user.connect_memory(agent_id=AGENT)
    outside.send(as_memory_agent("ui.open", OPEN, "m1"))
    user.expect("ui.open")
    session = outside.session
    data = {"text": "x" * 15_000}  # U9: under 16 KiB
    with caplog.at_level(logging.WARNING, logger="lineup_jupyter"):
        for _ in range(2_000):  # 30 MB of events, far past the bound
            user.click("p.1", "typed", data)
            if session.status != "connected":
                break
    assert session.status == "closed"
    assert outside.wait_until_hung_up().startswith("it did not read what the host sent")
    assert "(H42)" in str(session.problem) and "did not read" in caplog.text
    unread = outside.unread
    assert unread * 15_000 <= 8 * 1024 * 1024  # bounded: at most the queue
    user.click("p.1", "typed", data)  # no longer delivered, never raises
    assert outside.unread == unread
    assert [a["status"] for a in user.host.widget.agents] == ["closed"]


def test_memory_a_flooding_agent_waits_for_the_kernel(tmp_path: Path) -> None:
    """H42: in a notebook the session hands messages to the kernel's event loop; while the
    loop is busy (a long cell), 64 messages wait and then the agent's sends wait too (as on a
    full pipe) instead of the kernel's memory growing; once the loop is free they all arrive,
    in order, on the loop's thread."""
    from lineup_jupyter.agents._memory import connect_memory

    with Host("conv_01", data_dir=tmp_path / "data") as host:
        held: list[int] = []

        async def cell() -> None:
            outside = connect_memory(session_port(host), agent_id=AGENT)  # on this loop
            sent: list[int] = []

            def flood() -> None:
                try:
                    for n in range(200):
                        outside.send(
                            as_memory_agent("component.show", _text(n), f"m{n}"), timeout=0.5
                        )
                        sent.append(n)
                except TimeoutError:
                    held.append(len(sent))

            flooding = threading.Thread(target=flood)
            flooding.start()
            flooding.join()  # the loop is blocked meanwhile: nothing is handed over
            await asyncio.sleep(0)
            for n in range(held[0] if held else 200, 200):
                outside.send(as_memory_agent("component.show", _text(n), f"m{n}"))
            for _ in range(100 * GUARD):  # a guard, not a measure
                if len(host.components) == 200:
                    break
                await asyncio.sleep(0.01)

        asyncio.run(cell())
        assert held == [64]  # the inbox's bound; the 65th send waited
        shown = [r.envelope["id"] for r in host.history if r.type == "lineup.v1.component.show"]
        assert shown == [f"m{n}" for n in range(200)]


def _text(n: int) -> dict[str, Any]:
    return {"component_id": f"c{n}", "kind": "text", "text": str(n)}


KERNEL_CELLS = [
    """
import json, threading
from lineup_jupyter import Host
from lineup_jupyter.host._host import session_port
from websockets.sync.client import connect

host = Host("conv_01", data_dir=DATA)
threads = []
port = session_port(host)  # what a connection is given of the host
receive = port.receive  # what it calls: Host.receive for one endpoint (H41)

def spy(raw, endpoint):
    threads.append(threading.get_ident())
    return receive(raw, endpoint)

port.receive = spy
listener = host.listen_websocket()
cell_thread = threading.get_ident()
OPEN = {"v": 1, "id": "m1", "type": "lineup.v1.ui.open", "conversation_id": "conv_01",
        "sender": {"kind": "agent", "id": "agent_ws"},
        "payload": {"instance_id": "p.1", "state": {},
                    "app": {"id": "com.example.a", "version": "1.0.0", "html": "<p>hi</p>"}}}

def agent():
    with connect(f"{listener.url}?token={listener.token}&agent_id=agent_ws") as ws:
        ws.recv(timeout=30)  # the inventory
        ws.send(json.dumps(OPEN))
        ws.recv(timeout=30)  # the barrier

outside = threading.Thread(target=agent)
outside.start()
""",
    """
import asyncio
for _ in range(3000):  # a guard, not a measure
    if "p.1" in host.surfaces:
        break
    await asyncio.sleep(0.01)
host.send_app_list()  # the barrier: the agent leaves once it has it
while outside.is_alive():
    await asyncio.sleep(0.01)
print("on the cell's thread:", threads == [cell_thread])
listener.close()
host.close()
""",
]


@pytest.mark.kernel
def test_in_a_kernel_a_listeners_agent_reaches_the_host_on_the_kernels_thread(
    tmp_path: Path,
) -> None:
    """In a real ipykernel: a listener made in a cell hands its agent's messages to the
    kernel's thread (the widget's traits and comm messages belong there)."""
    import nbformat
    from nbclient import NotebookClient

    cells = [KERNEL_CELLS[0].replace("DATA", repr(str(tmp_path / "data"))), KERNEL_CELLS[1]]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(notebook, timeout=60, kernel_name="python3").execute()
    text = "".join(str(o.get("text", "")) for cell in notebook.cells for o in cell.outputs)
    assert "on the cell's thread: True" in text
