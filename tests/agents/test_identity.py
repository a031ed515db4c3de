"""H41 as attacks: one endpoint per agent id, with real processes and loopback WebSockets.

Each attacker tries to act as, or hear for, an agent whose id belongs to another endpoint (an
in-kernel agent, another process, another WebSocket). Each test asserts the victim's surface
is unchanged, the attacker got none of the victim's events, and the refusal reached the
attacker (and only it). A "barrier" is an envelope sent to every agent after the victim's
event: an agent reads its pipe or socket in order, so once it has the barrier it would have
had the event too.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from lineup_jupyter import UsageError
from lineup_jupyter.testing import ScriptedUser

from .test_transports import GUARD, OPEN, AgentServer, agent

VICTIM_OPEN = {**OPEN, "instance_id": "v.1", "state": {"owner": "victim"}}


@pytest.fixture
def user() -> Iterator[ScriptedUser]:
    with ScriptedUser(conversation_id="conv_01") as scripted:
        yield scripted


@pytest.fixture
def agent_server() -> Iterator[AgentServer]:
    server = AgentServer()
    yield server
    server.server.shutdown()


def as_agent(sender: str, type_: str, payload: dict[str, Any], id_: str) -> str:
    return json.dumps(
        {
            "v": 1,
            "id": id_,
            "type": "lineup.v1." + type_,
            "conversation_id": "conv_01",
            "sender": {"kind": "agent", "id": sender},
            "payload": payload,
        }
    )


def frames(ws: ClientConnection) -> Iterator[dict[str, Any]]:
    """What a test-side agent hears, until the host closes its connection."""
    try:
        while True:
            yield json.loads(ws.recv(timeout=GUARD))
    except ConnectionClosed:
        return


def kinds(heard: list[dict[str, Any]]) -> list[str]:
    return [e["type"].removeprefix("lineup.v1.") for e in heard]


ATTACK = """
send("ui.patch", {"instance_id": "%(id)s", "state": {"owner": "x"}}, "m1", sender="%(victim)s")
send("ui.close", {"instance_id": "%(id)s", "reason": "taken"}, "m2", sender="%(victim)s")
listen()
"""


def test_h41_a_process_cannot_speak_or_hear_for_an_in_kernel_agent(
    user: ScriptedUser, tmp_path: Path
) -> None:
    """H41: a process started without an agent id sends as the kernel's agent_k: refused
    (agent_conflict, $.sender.id) to the process alone, the surface unchanged, the process
    unbound, its line in the view saying why, and agent_k's event never reaches it."""
    kernel = user.connect_agent("agent_k")
    kernel.open("k.1", html="<p>mine</p>", state={"owner": "victim"})
    events: list[Any] = []
    kernel.on_event()(events.append)
    attacker = user.connect_process(agent(tmp_path, ATTACK % {"id": "k.1", "victim": "agent_k"}))
    user.wait_for(
        lambda: attacker.stderr_tail.count("got lineup.v1.error agent_conflict null") == 2,
        "the two refusals, to the attacker and untargeted (it has no id)",
    )
    refusals = [r.error for r in user.host.history if r.kind == "refused"]
    assert [(e["code"], e["rule"], e["path"]) for e in refusals if e] == [
        ("agent_conflict", "H41", "$.sender.id")
    ] * 2
    assert user.host.surfaces["k.1"].state == {"owner": "victim"}
    assert attacker.agent_id is None and kernel.errors == []
    (line,) = [a for a in user.host.widget.agents if a["via"] == attacker.describe]
    assert "'agent_k'" in line["problem"] and "H41" in line["problem"]

    user.click("k.1", "clicked")
    assert [e.event for e in events] == ["clicked"]
    user.host.send_inventory()  # the barrier
    user.wait_for(lambda: "got lineup.v1.client.inventory" in attacker.stderr_tail, "the barrier")
    assert "ui.event" not in attacker.stderr_tail


def test_h41_a_process_cannot_take_another_processs_id(user: ScriptedUser, tmp_path: Path) -> None:
    """H41: agent_v is a process's; a second process claiming it (by envelope, or asked for
    with agent_id=) is refused, and agent_v's events reach the first process only."""
    victim = user.connect_process(
        agent(tmp_path, f"send('ui.open', {VICTIM_OPEN!r}, 'm1', sender='agent_v')\nlisten()\n")
    )
    user.expect("ui.open", instance_id="v.1")
    assert victim.agent_id == "agent_v"
    with pytest.raises(UsageError, match=r"agent_v.*another connection"):
        user.connect_process(agent(tmp_path, "listen()\n"), agent_id="agent_v")
    with pytest.raises(UsageError, match="another connection"):
        user.connect_agent("agent_v")
    attacker = user.connect_process(agent(tmp_path, ATTACK % {"id": "v.1", "victim": "agent_v"}))
    user.wait_for(
        lambda: attacker.stderr_tail.count("got lineup.v1.error agent_conflict") == 2, "refusals"
    )
    assert user.host.surfaces["v.1"].state == {"owner": "victim"}
    assert "error" not in victim.stderr_tail

    user.click("v.1", "clicked")
    user.host.send_inventory()  # the barrier
    for process in (victim, attacker):
        user.wait_for(lambda p=process: "got lineup.v1.client.inventory" in p.stderr_tail, "it")
    assert victim.stderr_tail.count("got lineup.v1.ui.event") == 1
    assert "ui.event" not in attacker.stderr_tail


def test_h41_a_second_listener_connection_with_the_same_agent_id_is_refused(
    user: ScriptedUser,
) -> None:
    """H41, H43: a second connection with ?agent_id=agent_v hears one lineup.v1.error
    (agent_conflict) and a close (1008); it never gets the first one's surface or events."""
    listener = user.listen_websocket()
    bearer = {"Authorization": f"Bearer {listener.token}"}
    url = listener.url + "?agent_id=agent_v"
    with connect(url, additional_headers=bearer) as victim:
        assert json.loads(victim.recv(timeout=GUARD))["type"] == "lineup.v1.client.inventory"
        victim.send(as_agent("agent_v", "ui.open", VICTIM_OPEN, "m1"))
        user.expect("ui.open", instance_id="v.1")
        with connect(url, additional_headers=bearer) as attacker:
            close = as_agent("agent_v", "ui.close", {"instance_id": "v.1", "reason": "x"}, "a1")
            with contextlib.suppress(ConnectionClosed):  # the host may have closed it already
                attacker.send(close)
            heard = list(frames(attacker))
            assert attacker.close_code == 1008
        assert kinds(heard) == ["error"]
        (error,) = heard
        assert "target" not in error  # it has no agent id: to this connection alone
        payload = error["payload"]
        assert (payload["code"], payload["rule"], payload["path"]) == (
            "agent_conflict",
            "H41",
            "$.sender.id",
        )
        assert "v.1" in user.host.surfaces
        assert user.host.surfaces["v.1"].state == {"owner": "victim"}
        (refused_line,) = [a for a in user.host.remote_agents if a.problem and "H41" in a.problem]
        user.wait_for(lambda: refused_line.status == "closed", "its line to say closed")

        user.click("v.1", "clicked")
        assert json.loads(victim.recv(timeout=GUARD))["type"] == "lineup.v1.ui.event"
    user.wait_for(lambda: listener.agents == [], "the victim to be gone")
    with connect(url, additional_headers=bearer) as again:  # its id is free once it left
        assert json.loads(again.recv(timeout=GUARD))["type"] == "lineup.v1.client.inventory"
        again.send(as_agent("agent_v", "ui.patch", {"instance_id": "v.1", "state": {}}, "m2"))
        user.expect("ui.patch", instance_id="v.1")


def test_h41_an_unnamed_listener_connection_cannot_claim_taken_ids(user: ScriptedUser) -> None:
    """H41: a connection without ?agent_id sends as the kernel's agent and as another
    connection's: both refused to it alone; it then names itself with a free id."""
    kernel = user.connect_agent("agent_k")
    kernel.open("k.1", html="<p>k</p>", state={"owner": "victim"})
    listener = user.listen_websocket()
    bearer = {"Authorization": f"Bearer {listener.token}"}
    with (
        connect(listener.url + "?agent_id=agent_v", additional_headers=bearer) as victim,
        connect(listener.url, additional_headers=bearer) as attacker,
    ):
        assert json.loads(victim.recv(timeout=GUARD))["type"] == "lineup.v1.client.inventory"
        assert json.loads(attacker.recv(timeout=GUARD))["type"] == "lineup.v1.client.inventory"
        victim.send(as_agent("agent_v", "ui.open", VICTIM_OPEN, "m1"))
        user.expect("ui.open", instance_id="v.1")
        attacker.send(as_agent("agent_k", "ui.patch", {"instance_id": "k.1", "state": {}}, "a1"))
        attacker.send(as_agent("agent_v", "ui.patch", {"instance_id": "v.1", "state": {}}, "a2"))
        for _ in range(2):
            error = json.loads(attacker.recv(timeout=GUARD))
            assert (error["payload"]["code"], error["payload"]["path"]) == (
                "agent_conflict",
                "$.sender.id",
            )
            assert "target" not in error
        user.click("k.1", "k")
        user.click("v.1", "v")
        assert json.loads(victim.recv(timeout=GUARD))["payload"]["event"] == "v"
        attacker.send(as_agent("agent_a", "ui.open", {**OPEN, "instance_id": "a.1"}, "a3"))
        user.expect("ui.open", instance_id="a.1")
        user.host.send_inventory()  # the barrier
        assert json.loads(attacker.recv(timeout=GUARD))["type"] == "lineup.v1.client.inventory"
        assert victim.recv(timeout=GUARD) and kernel.errors == []
    assert user.host.surfaces["k.1"].state == {"owner": "victim"}
    assert user.host.surfaces["v.1"].state == {"owner": "victim"}


def test_h41_a_dialled_websocket_cannot_speak_for_an_in_kernel_agent(
    user: ScriptedUser, agent_server: AgentServer
) -> None:
    """H41: an agent the host dialled (connect_websocket) is held to the same rule."""
    kernel = user.connect_agent("agent_k")
    kernel.open("k.1", html="<p>k</p>", state={"owner": "victim"})
    with pytest.raises(UsageError, match=r"agent_k.*in the kernel"):
        user.connect_websocket(agent_server.url, agent_id="agent_k")
    remote = user.connect_websocket(agent_server.url)
    agent_server.next("client.inventory")
    agent_server.send(as_agent("agent_k", "ui.close", {"instance_id": "k.1", "reason": "x"}, "a1"))
    error = agent_server.next("error")
    assert (error["payload"]["code"], error["payload"]["rule"]) == ("agent_conflict", "H41")
    assert "k.1" in user.host.surfaces and remote.agent_id is None
    user.click("k.1", "clicked")
    user.host.send_inventory()  # the barrier: everything the attacker heard before it
    heard = [agent_server.heard.get(timeout=GUARD)]
    while heard[-1]["type"] != "lineup.v1.client.inventory":
        heard.append(agent_server.heard.get(timeout=GUARD))
    assert "ui.event" not in kinds(heard)


def test_h41_kernel_code_cannot_speak_for_a_connections_agent(
    user: ScriptedUser, tmp_path: Path
) -> None:
    """H41 both ways: Host.receive (the kernel) naming a process's agent id is refused, and
    the refusal goes to the kernel, not to that process."""
    victim = user.connect_process(
        agent(tmp_path, f"send('ui.open', {VICTIM_OPEN!r}, 'm1', sender='agent_v')\nlisten()\n")
    )
    user.expect("ui.open", instance_id="v.1")
    error = user.host.receive(
        as_agent("agent_v", "ui.close", {"instance_id": "v.1", "reason": "x"}, "k1")
    )
    assert error is not None and (error.code, error.path) == ("agent_conflict", "$.sender.id")
    assert "v.1" in user.host.surfaces
    user.host.send_inventory()  # the barrier
    user.wait_for(lambda: "got lineup.v1.client.inventory" in victim.stderr_tail, "it")
    assert "error" not in victim.stderr_tail


# ---- the same rules, on the in-memory transport (the session's, whatever the transport) -----


def heard_until_barrier(outside: Any) -> list[str]:
    """What an in-memory agent heard up to the barrier (a fresh inventory)."""
    heard = [outside.receive()["type"]]
    while heard[-1] != "lineup.v1.client.inventory":
        heard.append(outside.receive()["type"])
    return [kind.removeprefix("lineup.v1.") for kind in heard]


def test_h41_in_memory_an_unnamed_agent_cannot_speak_or_hear_for_the_kernels(
    user: ScriptedUser,
) -> None:
    """H41: an unnamed connection sends as the kernel's agent_k: refused to it alone,
    untargeted (it has no id), the surface unchanged, its line saying why; agent_k's event
    never reaches it; it then names itself with a free id."""
    kernel = user.connect_agent("agent_k")
    kernel.open("k.1", html="<p>k</p>", state={"owner": "victim"})
    attacker = user.connect_memory()
    assert attacker.receive()["type"] == "lineup.v1.client.inventory"
    attacker.send(json.loads(as_agent("agent_k", "ui.close", {"instance_id": "k.1"}, "a1")))
    error = attacker.expect("error")
    assert (error["payload"]["code"], error["payload"]["path"]) == ("agent_conflict", "$.sender.id")
    assert "target" not in error and attacker.session.agent_id is None
    assert user.host.surfaces["k.1"].state == {"owner": "victim"} and kernel.errors == []
    assert "'agent_k'" in str(attacker.session.problem)
    user.click("k.1", "clicked")
    user.host.send_inventory()  # the barrier
    assert "ui.event" not in heard_until_barrier(attacker)
    attacker.send(json.loads(as_agent("agent_a", "ui.open", {**OPEN, "instance_id": "a.1"}, "a2")))
    user.expect("ui.open", instance_id="a.1")
    assert attacker.session.agent_id == "agent_a"


def test_h41_in_memory_a_second_claim_at_the_opening_is_refused_and_hung_up(
    user: ScriptedUser,
) -> None:
    """H41: an id asked for when the connection opens (a listener's ?agent_id) that another
    connection speaks for: one lineup.v1.error to the claimant alone, then the host hangs
    up; its line says closed and why; the first keeps its surface and its events."""
    from lineup_jupyter.agents._memory import connect_memory
    from lineup_jupyter.host._host import session_port

    victim = user.connect_memory(agent_id="agent_v")
    victim.expect("client.inventory")
    victim.send(json.loads(as_agent("agent_v", "ui.open", VICTIM_OPEN, "m1")))
    user.expect("ui.open", instance_id="v.1")
    attacker = connect_memory(session_port(user.host), requested="agent_v")
    reason = attacker.wait_until_hung_up()
    error = attacker.receive()  # what was written before the hang-up stays readable
    assert (error["payload"]["code"], error["payload"]["rule"]) == ("agent_conflict", "H41")
    assert "target" not in error
    with pytest.raises(ConnectionError):
        attacker.receive()
    user.wait_for(lambda: attacker.session.status == "closed", "its line to say closed")
    assert "H41" in reason and "H41" in str(attacker.session.problem)
    user.click("v.1", "clicked")
    assert victim.expect("ui.event")["payload"]["event"] == "clicked"
    victim.leave()
    again = connect_memory(session_port(user.host), requested="agent_v")  # free once it left
    assert again.receive()["target"] == {"kind": "agent", "id": "agent_v"}


def test_h41_in_memory_a_named_connection_carries_one_agent(user: ScriptedUser) -> None:
    """H41: bound to agent_m, a connection naming another (free) id is refused 'invalid' at
    $.sender.id, to agent_m; the other id stays free."""
    outside = user.connect_memory(agent_id="agent_m")
    outside.expect("client.inventory")
    outside.send(json.loads(as_agent("agent_x", "ui.open", OPEN, "m1")))
    error = outside.expect("error")
    assert (error["payload"]["code"], error["payload"]["rule"]) == ("invalid", "H41")
    assert error["target"] == {"kind": "agent", "id": "agent_m"}
    user.connect_agent("agent_x")  # free: the kernel may take it
