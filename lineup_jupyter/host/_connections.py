"""The host's connections outside the kernel: the agents (processes, WebSockets, a listener's),
the listeners, the MCP servers. The Host's thin calls make them; this holds them, keeps the
ended ones the view still lists (the last few), tells the view's agents line of each change,
and closes them all with the host."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ..agents._remote import ENDED
from ..protocol._errors import UsageError
from ..runtime._watchers import Watchers

if TYPE_CHECKING:
    from ..agents._listener import WebSocketListener
    from ..agents._remote import RemoteAgent
    from ..mcp._server import McpServer

__all__ = ["CLOSED_AGENTS_SHOWN", "Connections"]

CLOSED_AGENTS_SHOWN = 10  # ended connections still listed in the view, the latest

ListenerT = TypeVar("ListenerT", bound="WebSocketListener")


class Connections:
    """Every connection a host made or accepted, under the host's lock."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._agents: list[RemoteAgent] = []
        self._listeners: list[WebSocketListener] = []
        self._servers: list[McpServer] = []
        self._watchers: Watchers[[]] = Watchers("connection")

    @property
    def agents(self) -> list[RemoteAgent]:
        return list(self._agents)

    @property
    def mcp_servers(self) -> list[McpServer]:
        return list(self._servers)

    def track(self, session: RemoteAgent) -> None:
        """A new session of an agent outside the kernel (from a listener's thread too)."""
        with self._lock:
            ended = [a for a in self._agents if a.status in ENDED]
            for gone in ended[: max(0, len(ended) - CLOSED_AGENTS_SHOWN)]:
                self._agents.remove(gone)
            self._agents.append(session)
        self.changed()

    def mcp_room(self, limit: int) -> None:
        """Refuse a server past ``limit`` before its process starts (H44: each connected
        server costs threads and pipes, docs/mcp-apps.md "Limits")."""
        with self._lock:
            live = sum(s.status != "ended" for s in self._servers)
        if live >= limit:
            raise UsageError(
                f"[lineup] {live} MCP servers are connected, this host's limit "
                "(Limits.max_mcp_servers); close one (server.close()) first"
            )

    def add_mcp(self, server: McpServer) -> McpServer:
        with self._lock:
            ended = [s for s in self._servers if s.status == "ended"]
            dropped = ended[: max(0, len(ended) + 1 - CLOSED_AGENTS_SHOWN)]
            for gone in dropped:
                self._servers.remove(gone)
            self._servers.append(server)
        for gone in dropped:  # no longer listed: what it still holds is let go
            gone.close()
        self.changed()
        return server

    def add_listener(self, listener: ListenerT) -> ListenerT:
        with self._lock:
            self._listeners.append(listener)
        return listener

    def watch(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call ``watcher()`` when a connection starts, is named, or ends."""
        return self._watchers.add(watcher)

    def changed(self) -> None:
        if self._watchers:
            self._watchers.notify()

    def close(self) -> None:
        """Close them all; an ended agent's close does nothing more."""
        with self._lock:
            agents, self._agents = self._agents, []
            listeners, self._listeners = self._listeners, []
            servers, self._servers = self._servers, []
        for server in servers:
            server.close()
        for agent in agents:
            agent.close()
        for listener in listeners:
            listener.close()
