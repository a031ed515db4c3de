"""lineup_jupyter.testing.ScriptedUser with in-kernel agents: what agent authors test with."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import ProtocolError, UsageError
from lineup_jupyter.testing import ScriptedUser


def test_expect_returns_each_envelope_once_in_order() -> None:
    with ScriptedUser() as user:
        agent = user.connect_agent("agent_a")
        agent.open("s.1", html="<p>1</p>")
        agent.open("s.2", html="<p>2</p>")
        assert user.expect("ui.open")["payload"]["instance_id"] == "s.1"
        assert user.expect("lineup.v1.ui.open")["payload"]["instance_id"] == "s.2"
        agent.say("hello")
        assert user.expect("component.show", kind="markdown")["payload"]["markdown"] == "hello"
        assert [e["type"] for e in user.sent()] == ["lineup.v1.ui.open"] * 2 + [
            "lineup.v1.component.show"
        ]


def test_a_missing_envelope_fails_with_what_came_instead() -> None:
    with ScriptedUser(timeout=0.05) as user:
        agent = user.connect_agent("agent_a")
        agent.open("s.1", html="<p>1</p>")
        with pytest.raises(AssertionError) as failed:
            user.expect("ui.patch", instance_id="s.1")
    message = str(failed.value)
    assert message.startswith("[lineup] expected lineup.v1.ui.patch instance_id='s.1'")
    assert "ui.open instance_id='s.1'" in message


def test_the_user_clicks_answers_and_closes() -> None:
    """U8, H14, U10: the user's acts reach the agent as the widget's would."""
    with ScriptedUser() as user:
        agent = user.connect_agent("agent_a")
        events: list[Any] = []
        agent.on_event()(events.append)
        agent.open("s.1", html="<button>go</button>")
        user.click("s.1", "clicked", {"n": 1})
        assert [(e.event, e.data) for e in events] == [("clicked", {"n": 1})]

        question = agent.confirm("Sure?")
        shown = user.expect("component.show", kind="confirm")
        user.answer(shown["payload"]["component_id"], True)
        assert question.result() is True
        cancelled = agent.ask_input("Name?")
        user.cancel(cancelled.component_id)
        assert cancelled.status == "cancelled"
        assert user.expect_to_agent("component.answer", status="cancelled")

        user.close_surface("s.1")
        assert events[-1].event == "close"
        assert "s.1" not in user.host.surfaces


def test_the_user_allows_and_denies_calls() -> None:
    """C10: a waiting app.call is decided by the scripted user."""
    with ScriptedUser() as user:

        @user.host.capability("demo.greet", risk="user_confirmation")
        def greet(arguments: dict[str, Any]) -> dict[str, Any]:
            return {"greeting": "hello"}

        agent = user.connect_agent("agent_a")
        allowed = agent.call("demo.greet", reason="to greet")
        call = user.expect("app.call", capability="demo.greet")
        assert user.allow(call["payload"]["call_id"])["status"] == "completed"
        assert allowed.result().result == {"greeting": "hello"}
        denied = agent.call("demo.greet", reason="again")
        user.deny(user.expect("app.call")["payload"]["call_id"])
        assert denied.result().status == "rejected"


def test_a_refused_act_raises_the_refusal() -> None:
    with ScriptedUser() as user, pytest.raises(ProtocolError, match="not open") as refused:
        user.click("nowhere", "clicked")
    assert refused.value.code == "unknown_instance"


def test_the_host_lives_in_a_temporary_dir(lineup_home: Path) -> None:
    """Nothing touches the user's data dir (here the suite's LINEUP_JUPYTER_HOME)."""
    with ScriptedUser() as user:
        where = Path(user.host.audit.path).parent
        assert where != lineup_home and where.is_dir()
        assert user.host.artifacts_dir.parent == where
    assert not where.exists()
    assert os.listdir(lineup_home) == []


def test_expect_will_not_wait_on_a_running_event_loop() -> None:
    """In a notebook cell the loop that delivers envelopes is the one expect would block."""
    import asyncio

    async def cell() -> None:
        with ScriptedUser() as user, pytest.raises(UsageError, match="expect_async"):
            user.expect("ui.open")

    asyncio.run(cell())


def test_expect_async_waits_on_the_loop_that_delivers_a_process_agents_envelopes(
    tmp_path: Path,
) -> None:
    """In a notebook cell (here a coroutine on a running loop): a process agent's lines reach
    the host through that loop, so the user awaits them instead of blocking it (H40, U10)."""
    import asyncio
    import sys

    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    if m['type'] == 'lineup.v1.client.inventory':\n"
        "        app = {'id': 'com.example.t', 'version': '1.0.0', 'html': '<p>t</p>'}\n"
        "        print(json.dumps({'v': 1, 'id': 'm1', 'type': 'lineup.v1.ui.open',\n"
        "            'conversation_id': m['conversation_id'],\n"
        "            'sender': {'kind': 'agent', 'id': 'agent_t'},\n"
        "            'payload': {'instance_id': 't.1', 'app': app, 'state': {}}}), flush=True)\n"
        "    elif m['type'] == 'lineup.v1.ui.event':\n"
        "        sys.exit(0)\n"
    )

    async def cell() -> None:
        with ScriptedUser() as user:
            process = user.connect_process([sys.executable, str(agent)])
            opened = await user.expect_async("ui.open", instance_id="t.1")
            assert opened["sender"]["id"] == "agent_t"
            user.close_surface("t.1")
            await user.wait_for_async(lambda: process.status == "ended", "the agent to exit")
            assert process.returncode == 0
            with pytest.raises(AssertionError, match=r"expected lineup\.v1\.ui\.patch"):
                await user.expect_async("ui.patch", timeout=0.05)

    asyncio.run(cell())
