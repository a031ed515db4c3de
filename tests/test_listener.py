"""H44 at the listener, with real loopback sockets: bounded handshakes, connections and
unnamed connections, cheap refusals, an accept loop that outlives failures, and one
inventory per connection (H42: not one to every other agent each time one connects)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import ClientConnection, connect

from lineup_jupyter import Limits
from lineup_jupyter import WebSocketListener
from lineup_jupyter.testing import ScriptedUser

GUARD = 30  # seconds: a guard against a hang, never a measure


@pytest.fixture
def limited() -> Iterator[ScriptedUser]:
    limits = Limits(max_connections=4, max_unnamed_connections=2, max_handshakes=3)
    with ScriptedUser("conv_01", limits=limits) as user:
        yield user


_OPEN = contextlib.ExitStack()  # every test's connections, closed after it (see `closing`)


@pytest.fixture(autouse=True)
def closing() -> Iterator[None]:
    with _OPEN:
        yield


def join(listener: WebSocketListener, agent_id: str | None = None) -> ClientConnection:
    """A connection that got its first envelope (the inventory): it is admitted."""
    query = f"?token={listener.token}" + (f"&agent_id={agent_id}" if agent_id else "")
    ws = _OPEN.enter_context(connect(listener.url + query, open_timeout=GUARD))
    assert json.loads(ws.recv(timeout=GUARD))["type"] == "lineup.v1.client.inventory"
    return ws


def refused_status(listener: WebSocketListener, agent_id: str | None = None) -> int:
    with pytest.raises(InvalidStatus) as refused:
        join(listener, agent_id)
    return refused.value.response.status_code


def lineup_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "lineup ws connection"]


def test_h44_unnamed_connections_are_bounded(limited: ScriptedUser) -> None:
    """H44, H41: past max_unnamed_connections an unnamed connection is refused 503 at its
    handshake; one naming itself is not; an unnamed one that names itself makes room."""
    listener = limited.listen_websocket()
    first, second = join(listener), join(listener)
    assert refused_status(listener) == 503
    named = join(listener, "agent_n")
    first.send(
        json.dumps(
            {
                "v": 1,
                "id": "m1",
                "type": "lineup.v1.component.show",
                "conversation_id": "conv_01",
                "sender": {"kind": "agent", "id": "agent_first"},
                "payload": {"component_id": "c1", "kind": "text", "text": "hi"},
            }
        )
    )
    limited.expect("component.show")
    third = join(listener)  # first is agent_first now: room for one more without a name
    for ws in (first, second, named, third):
        ws.close()
    assert listener.refused == 1


def test_h44_connections_are_bounded(limited: ScriptedUser) -> None:
    """H44: past max_connections a connection is refused 503; one that leaves makes room."""
    listener = limited.listen_websocket()
    connected = [join(listener, f"agent_{n}") for n in range(4)]
    assert refused_status(listener, "agent_4") == 503
    connected.pop().close()
    limited.wait_for(lambda: len(listener.agents) == 3, "the agent to be gone")
    connected.append(join(listener, "agent_4"))
    for ws in connected:
        ws.close()


def test_h44_stalled_handshakes_hold_no_thread_past_the_bound(limited: ScriptedUser) -> None:
    """H44: 40 sockets that never send their request hold at most max_handshakes threads;
    the others are answered 503 and closed at once, without a thread; a real agent still
    connects once the stalled sockets go."""
    listener = limited.listen_websocket()
    stalled = [socket.create_connection(("127.0.0.1", listener.port), GUARD) for _ in range(40)]
    answers = []
    for sock in stalled[3:]:
        sock.settimeout(GUARD)
        answers.append(sock.recv(64))  # the 503, then the close
    assert all(a.startswith(b"HTTP/1.1 503 Service Unavailable") for a in answers)
    assert len(lineup_threads()) <= 3
    assert listener.refused == 37
    for sock in stalled:
        sock.close()
    limited.wait_for(lambda: not lineup_threads(), "the stalled handshakes to end")
    join(listener, "agent_after").close()


def test_h44_the_accept_loop_outlives_a_failed_thread_start_and_a_failed_accept(
    limited: ScriptedUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """H44: a thread that cannot start (RuntimeError, as with too many threads) turns one
    connection away; an accept that fails (EMFILE) is counted; after both, agents connect."""
    listener = limited.listen_websocket()
    spawn, accept = listener._spawn, listener._accept
    failures: list[str] = []

    def spawn_once_failing(target: Any, *args: Any) -> None:
        if not failures:
            failures.append("spawn")
            raise RuntimeError("can't start new thread")
        spawn(target, *args)

    monkeypatch.setattr(listener, "_spawn", spawn_once_failing)
    with socket.create_connection(("127.0.0.1", listener.port), GUARD) as turned_away:
        turned_away.settimeout(GUARD)
        assert turned_away.recv(64).startswith(b"HTTP/1.1 503")  # at once, without a thread
    join(listener, "agent_b").close()

    def accept_once_failing() -> tuple[socket.socket, Any]:
        if failures == ["spawn"]:
            failures.append("accept")
            raise OSError(24, "Too many open files")
        return accept()

    monkeypatch.setattr(listener, "_accept", accept_once_failing)
    join(listener, "agent_c").close()  # the pending socket is accepted on the next try
    assert failures == ["spawn", "accept"] and listener.accept_errors == 1


def test_h42_a_new_connection_does_not_resend_the_inventory_to_the_others(
    user: ScriptedUser,
) -> None:
    """H42, C1: 8 unnamed connections (the default bound) in turn: 8 inventories in all, one
    each (it was one to every connected agent each time: 36)."""
    listener = user.listen_websocket()
    connections = [join(listener) for _ in range(8)]
    sent = user.host.history.select(type="lineup.v1.client.inventory", direction="to_agent")
    assert len(sent) == 8
    user.host.send_app_list()  # the barrier: each one's next envelope
    for ws in connections:
        assert json.loads(ws.recv(timeout=GUARD))["type"] == "lineup.v1.app.list"
        ws.close()


@pytest.fixture
def user() -> Iterator[ScriptedUser]:
    with ScriptedUser("conv_01") as scripted:
        yield scripted
