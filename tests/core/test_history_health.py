"""Health checks never evict the conversation (issue 24): the MCP apps' watchdog pings each app
every few seconds and both the ping and its answer are recorded; an idle notebook made 67 of
81 records of them a minute, so a 1 000-record history lost the real conversation in about
15 minutes. History keeps them in a smaller ring of their own (core/_bus.py), and the
inspector hides them unless asked (js/inspector_model.js, its own test)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lineup_jupyter import Host, McpServer
from lineup_jupyter.core._bus import HEALTH_RECORDS

from ..conftest import view_sends
from ..mcp_helpers import View
from ..mcp_servers import weather

SIZE = 60


@pytest.fixture
def host() -> Host:
    return Host(conversation_id="conv_health", history_size=SIZE)


@pytest.fixture
def view(host: Host) -> View:
    return View(host)


@pytest.fixture
def server(host: Host, view: View) -> Iterator[McpServer]:
    weather.ALARMS.clear()
    connected = host.connect_mcp(weather.build())
    yield connected
    connected.close()


def pings(app_id: str, first: int, count: int) -> dict[str, Any]:
    """What the page sends for ``count`` watchdog rounds: the host's ping, the app's answer."""
    items = []
    for n in range(first, first + count):
        items.append(
            {"dir": "to_app", "message": {"jsonrpc": "2.0", "id": f"host-{n}", "method": "ping"}}
        )
        items.append(
            {"dir": "from_app", "message": {"jsonrpc": "2.0", "id": f"host-{n}", "result": {}}}
        )
    return {"kind": "mcp_traffic", "app_id": app_id, "items": items}


def test_a_day_of_watchdog_pings_leaves_the_conversation_whole(
    host: Host, server: McpServer, view: View
) -> None:
    agent = host.connect_agent("agent_health")
    agent.open("note.1", html="<p>kept</p>", state={"n": 0})
    agent.patch("note.1", {"n": 1})
    app = server.open("show_weather", {"city": "Paris"})
    view.wait(lambda op: op["op"] == "mcp_notify" and op["method"].endswith("tool-result"))
    conversation = [r.seq for r in host.history if not r.health]
    assert len(conversation) < SIZE  # all of it still there before the pings

    for first in range(0, 2000, 25):  # 2 000 rounds: 4 000 records, 50 items a message
        view_sends(view.widget, pings(app.app_id, first, 25))

    kept = [r.seq for r in host.history if not r.health]
    assert kept == conversation  # not one conversation record lost
    health = [r for r in host.history if r.health]
    assert 0 < len(health) <= min(SIZE, HEALTH_RECORDS)
    assert {r.type for r in health} == {"mcp.ping", "mcp.response"}
    assert host.history.dropped == 4000 - len(health)
    # In order, as one history: since() and iteration merge both rings.
    seqs = [r.seq for r in host.history]
    assert seqs == sorted(seqs)
    assert [r.seq for r in host.history.since(conversation[-1])] == seqs[len(conversation) :]


def test_only_a_ping_and_its_own_answer_are_health_checks(
    host: Host, server: McpServer, view: View
) -> None:
    app = server.open("show_weather", {"city": "Paris"})
    view.wait(lambda op: op["op"] == "mcp_notify" and op["method"].endswith("tool-result"))
    answer = {"jsonrpc": "2.0", "id": "host-1", "result": {}}
    traffic = {
        "kind": "mcp_traffic",
        "app_id": app.app_id,
        "items": [
            {"dir": "from_app", "message": answer},  # an answer to no ping: conversation
            {"dir": "from_app", "message": {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}},
            {"dir": "to_app", "message": {"jsonrpc": "2.0", "id": 7, "result": {}}},
        ],
    }
    view_sends(view.widget, traffic)
    recorded = host.history.select(kind="mcp")[-3:]
    assert [r.health for r in recorded] == [False, False, False]
    assert all(r.to_json()["health"] is False for r in recorded)
