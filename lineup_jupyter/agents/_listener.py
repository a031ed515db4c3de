"""Where agents connect to the host: ``host.listen_websocket()`` (H41, H43, H44).

One daemon thread runs one asyncio event loop with websockets' asyncio server; every socket,
whether in its opening handshake or connected, is a coroutine on that loop, not a thread. So
the thread count does not grow with connections, and a client that opens a socket and drips
its request a byte at a time (slowloris) holds a few kilobytes and, for at most
``OPEN_TIMEOUT`` seconds, one of ``Limits.max_handshakes`` places, never a thread or the loop.

The listener binds 127.0.0.1 and nothing else, and admits a connection only with its token
(``Authorization: Bearer TOKEN`` or ``?token=TOKEN``, compared in constant time) and only
from a program, not a web page (a request with an ``Origin`` header is refused). Bounded
(H44): past ``max_handshakes`` sockets in their handshake a socket is answered 503 and closed
as soon as it is accepted; past ``max_connections`` connected, or ``max_unnamed_connections``
without an agent id, its handshake is answered 503. asyncio's accept outlives a failed accept
(no file descriptor left: it pauses a second and goes on) and a failure while setting up one
connection; both are counted in ``accept_errors``.

Each admitted connection is a session (``RemoteAgent``) over a ``ListenerTransport``. The
sessions' work runs where the host may be used (the kernel's event loop, if one ran where
the listener was made; else one worker thread): the I/O loop never waits for the host's lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import http
import logging
import secrets
import socket
import threading
from functools import partial
from typing import Any, cast
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, ConnectionClosedOK
from websockets.frames import CloseCode
from websockets.http11 import Request, Response

from ..protocol import rules
from ..protocol._errors import UsageError
from ..protocol._validate import readable_id
from ..runtime._threads import HostThread, LoopThread, Worker
from ._remote import RemoteAgent, SessionHost
from ._transport import OUTBOX_CHARS, Sink
from ._websocket import BINARY, CLOSE_TIMEOUT, OPEN_TIMEOUT, binary_frame, why_closed

__all__ = ["ListenerTransport", "WebSocketListener"]

logger = logging.getLogger("lineup_jupyter")

STOP_TIMEOUT = 5.0  # seconds close() gives the connections to end before it stops the loop
# What asyncio says when it could not take a connection (its accept loop goes on).
_ACCEPT_FAILURES = ("socket.accept() out of system resource", "Error on transport creation")


class WebSocketListener:
    """Where agents connect to this host: ``ws://127.0.0.1:PORT/``, with the token (H43).

    Made by ``host.listen_websocket(port=0, token=None)``; ``url``, ``port`` and ``token`` say
    how to connect, ``agents`` lists the agents connected now, ``refused`` counts the
    connections turned away, ``accept_errors`` the connections that could not be taken (no
    file descriptor left, say). An agent may name itself with ``?agent_id=ID`` (H41).
    """

    def __init__(self, host: SessionHost, port: int = 0, *, token: str | None = None) -> None:
        if token is None:
            token = secrets.token_urlsafe(32)
        elif not isinstance(token, str) or not token:
            raise UsageError("[lineup] the listener's token must be a non-empty string")
        self.token = token
        self.refused = 0
        self.accept_errors = 0
        self._host = host
        here = HostThread()  # the event loop running here, if any: the agents' host thread
        self._worker = None if here.loop is not None else Worker("lineup listener sessions")
        self._host_thread = HostThread(self._worker) if self._worker else here
        self._lock = threading.Lock()
        self._agents: dict[ListenerTransport, RemoteAgent] = {}
        self._opening = [0, 0]  # admitted, no session yet: [all, without an agent id]
        self._handshakes: set[ServerConnection] = set()  # accepted, handshake not over
        self._closing = False
        try:
            # 127.0.0.1, never "" or 0.0.0.0: other machines must not reach the kernel.
            listening = socket.create_server(("127.0.0.1", port))
        except OSError as exc:
            raise UsageError(
                f"[lineup] cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}"
            ) from None
        self.port: int = listening.getsockname()[1]
        self._io = LoopThread("lineup ws listener")
        self._io.loop.set_exception_handler(self._loop_error)
        self._listening = listening
        self._server: Server | None = None
        try:
            self._io.submit(self._start()).result()
        except Exception as exc:
            self._io.stop()
            listening.close()
            if self._worker is not None:
                self._worker.stop()
            raise UsageError(f"[lineup] cannot listen on 127.0.0.1:{port}: {exc}") from None

    @property
    def url(self) -> str:
        """The address agents connect to (the token goes in a header or ``?token=``)."""
        return f"ws://127.0.0.1:{self.port}/"

    @property
    def agents(self) -> list[RemoteAgent]:
        """The agents connected now."""
        with self._lock:
            return list(self._agents.values())

    def close(self) -> None:
        """Stop listening and close every connected agent."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            agents = list(self._agents.values())
        for agent in agents:  # first: a closed agent hands nothing more to the host
            agent.close()
        if self._io.loop.is_running():
            with contextlib.suppress(Exception):
                self._io.submit(self._stop()).result(STOP_TIMEOUT + 1)
        self._io.stop()
        self._io.join(2.0)
        if self._worker is not None:
            self._worker.stop()

    def __enter__(self) -> WebSocketListener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"WebSocketListener(url={self.url!r}, agents={len(self.agents)})"

    # ---- the I/O thread ------------------------------------------------------------------

    async def _start(self) -> None:
        self._server = await serve(
            self._serve,
            sock=self._listening,
            process_request=self._admit,
            max_size=self._host.limits.max_message_bytes,
            open_timeout=OPEN_TIMEOUT,
            close_timeout=CLOSE_TIMEOUT,
            create_connection=cast("type[ServerConnection]", self._connection),
        )

    async def _stop(self) -> None:
        if self._server is None:
            return
        self._server.close()  # the listening socket first, then every connection
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), STOP_TIMEOUT)

    def _loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """asyncio reports here what went wrong outside a coroutine: a failed accept is
        counted (the loop goes on), anything else logged as asyncio would."""
        message = str(context.get("message", ""))
        if not message.startswith(_ACCEPT_FAILURES):
            loop.default_exception_handler(context)
            return
        self._accept_failed(f"{message}: {context.get('exception')!r}")

    def _accept_failed(self, why: str) -> None:
        """A connection could not be taken: counted, logged once, and the loop goes on."""
        with self._lock:
            self.accept_errors += 1
            first = self.accept_errors == 1
        if first:
            logger.warning(
                "[lineup] the agent listener on %s could not take a connection (%s); it goes "
                "on (failures are counted in listener.accept_errors)",
                self.url,
                why,
            )

    def _connection(self, *args: Any, **kwargs: Any) -> ServerConnection:
        """websockets' connection for one accepted socket, which reports to this listener."""
        return _Connection(self, *args, **kwargs)

    def _knocked(self, connection: ServerConnection, transport: asyncio.BaseTransport) -> None:
        """A socket was accepted: a place among the handshakes, or a 503 and a close."""
        with self._lock:
            busy = len(self._handshakes) >= self._host.limits.max_handshakes
            if not (busy or self._closing):
                self._handshakes.add(connection)
                return
            count = len(self._handshakes)
        why = (
            "the listener is closing"
            if not busy
            else f"{count} connections are in their opening handshake, this listener's "
            "limit (Limits.max_handshakes); try again later"
        )
        self._count_refusal(why)
        body = f"[lineup] {why}.\n".encode()
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        if isinstance(transport, asyncio.WriteTransport):
            transport.write(head + body)  # buffered: never waits on a client that does not read
        transport.close()

    def _handshake_over(self, connection: ServerConnection) -> None:
        with self._lock:
            self._handshakes.discard(connection)

    def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        """The opening handshake's check: the token, no browser, a readable agent id."""
        query = parse_qs(urlsplit(request.path).query)
        agent_id = _first(query.get("agent_id"))
        if request.headers.get("Origin") is not None:
            return self._turn_away(
                connection,
                http.HTTPStatus.FORBIDDEN,
                "web pages may not connect to a kernel's agent port (the request has an Origin "
                "header); connect from a program",
            )
        supplied = _bearer(request.headers.get("Authorization")) or _first(query.get("token"))
        if supplied is None or not hmac.compare_digest(
            supplied.encode("utf-8"), self.token.encode("utf-8")
        ):
            return self._turn_away(
                connection,
                http.HTTPStatus.UNAUTHORIZED,
                "this host admits agents with its token: send the header "
                "'Authorization: Bearer TOKEN' (or ?token=TOKEN in the URL)",
            )
        if agent_id is not None and readable_id(agent_id) is None:
            return self._turn_away(
                connection,
                http.HTTPStatus.BAD_REQUEST,
                f"agent_id {agent_id[:200]!r} must match {rules.ID_PATTERN} (M1)",
            )
        with self._lock:
            full = self._full(agent_id)
        if full is not None:  # early and cheap; _serve decides again, exactly
            return self._turn_away(connection, http.HTTPStatus.SERVICE_UNAVAILABLE, full)
        return None

    def _full(self, agent_id: str | None) -> str | None:
        """Why one more connection (named ``agent_id``) is past a bound (H44); under the lock."""
        if self._closing:
            return "the listener is closing"
        limits = self._host.limits
        connected = len(self._agents) + self._opening[0]
        if connected >= limits.max_connections:
            return (
                f"{connected} agents are connected, this listener's limit "
                "(Limits.max_connections); try again later"
            )
        unnamed = self._opening[1] + sum(
            1 for t, a in self._agents.items() if a.agent_id is None and t.requested is None
        )
        if agent_id is None and unnamed >= limits.max_unnamed_connections:
            return (
                f"{unnamed} connections have no agent id yet, this listener's limit "
                "(Limits.max_unnamed_connections); connect with ?agent_id=ID"
            )
        return None

    def _turn_away(
        self, connection: ServerConnection, status: http.HTTPStatus, why: str
    ) -> Response:
        self._count_refusal(why)
        return connection.respond(status, f"[lineup] {why}.\n")

    def _count_refusal(self, why: str) -> None:
        with self._lock:
            self.refused += 1
            first = self.refused == 1
        if first:  # once: a flood of attempts must not flood the notebook
            logger.warning(
                "[lineup] the agent listener on %s turned a connection away: %s (further ones "
                "are counted in listener.refused)",
                self.url,
                why,
            )

    async def _serve(self, ws: ServerConnection) -> None:
        """One admitted agent, until it disconnects: its session is made on the host's
        thread, its messages read here."""
        self._handshake_over(ws)
        path = ws.request.path if ws.request is not None else ""  # _admit read it already
        agent_id = _first(parse_qs(urlsplit(path).query).get("agent_id"))
        with self._lock:  # the bounds, exactly: _admit's look was before others were counted
            full = self._full(agent_id)
            if full is None:
                self._opening[0] += 1
                self._opening[1] += agent_id is None
        if full is not None:
            self._count_refusal(full)
            await ws.close(CloseCode.TRY_AGAIN_LATER, f"[lineup] {full}"[:120])
            return
        address = ws.remote_address
        describe = "WebSocket from " + ":".join(str(part) for part in address[:2])
        transport = ListenerTransport(ws, describe, requested=agent_id)
        self._host_thread.call(partial(self._begin, transport, agent_id))
        try:
            await transport.serve(self._host.limits.max_message_bytes)
        finally:
            with self._lock:
                transport.finished = True
                self._agents.pop(transport, None)

    def _begin(self, transport: ListenerTransport, agent_id: str | None) -> None:
        """On the host's thread: the session of one admitted connection."""
        try:
            agent: RemoteAgent | None = RemoteAgent(
                self._host, transport, host_thread=self._host_thread
            )
        except Exception:  # a bug of ours, or no memory: this connection alone is lost
            logger.exception("[lineup] the agent listener could not set up a connection")
            agent = None
        with self._lock:
            self._opening[0] -= 1
            self._opening[1] -= agent_id is None
            if agent is not None and not transport.finished:
                self._agents[transport] = agent
            closing = self._closing
        if agent is None or closing:
            transport.close()
            if agent is not None:
                agent.close()


class _Connection(ServerConnection):
    """websockets' connection, reporting to the listener when its socket is accepted and
    when it goes (a place among the handshakes)."""

    def __init__(self, listener: WebSocketListener, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lineup_listener = listener

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        try:
            self.lineup_listener._knocked(self, transport)
        except Exception as exc:  # no memory, say: this socket alone is dropped
            if isinstance(transport, asyncio.Transport):
                transport.abort()
            self.lineup_listener._accept_failed(repr(exc))

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.lineup_listener._handshake_over(self)


class ListenerTransport:
    """One connection to the listener, as a transport (``_transport.Transport``); lives on
    the listener's event loop, and is told what to do from any thread."""

    def __init__(self, ws: ServerConnection, describe: str, *, requested: str | None) -> None:
        self.describe = describe
        self.requested = requested  # the ?agent_id it asked for (H41)
        self.finished = False  # its connection ended (guarded by the listener's lock)
        self._ws = ws
        self._loop = asyncio.get_running_loop()
        self._sink: Sink | None = None
        self._gone = False  # it left before its session began
        self._begin_lock = threading.Lock()
        self._began = asyncio.Event()
        self._reading = asyncio.Event()
        self._reading.set()
        self._outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self._chars = 0
        self._chars_lock = threading.Lock()
        self._refusal: str | None = None
        self._closed = False
        self._closing: asyncio.Future[None] | None = None

    # ---- from any thread -------------------------------------------------------------

    def start(self, sink: Sink) -> None:
        with self._begin_lock:
            self._sink = sink
            gone = self._gone
        if gone:  # it left while its session was being made
            sink.lost("the agent closed the connection", final=True)
        else:
            self._soon(self._began.set)

    def send(self, text: str) -> bool:
        with self._chars_lock:
            if self._chars + len(text) > OUTBOX_CHARS:
                return False
            self._chars += len(text)
        self._soon(self._outbox.put_nowait, text)
        return True

    def pause_reading(self) -> None:
        self._soon(self._reading.clear)

    def resume_reading(self) -> None:
        self._soon(self._reading.set)

    def hang_up(self, why: str, *, refused: bool = False) -> None:
        if refused:
            self._refusal = why
            self._soon(self._outbox.put_nowait, None)  # after what is queued: the refusal
        else:
            self._soon(self._drop)

    def close(self) -> None:
        self._closed = True
        self._soon(self._drop)

    def _soon(self, callback: Any, *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: the connection is gone
            self._loop.call_soon_threadsafe(callback, *args)

    # ---- on the loop -----------------------------------------------------------------

    async def serve(self, limit: int) -> None:
        """Wait for the session to start, then read until the connection ends."""
        began = asyncio.ensure_future(self._began.wait())
        gone = asyncio.ensure_future(self._ws.wait_closed())
        try:
            await asyncio.wait({began, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            began.cancel()
            gone.cancel()
        with self._begin_lock:
            sink = self._sink
            self._gone = sink is None
        if sink is None:  # it left before its session began: start() reports it
            return
        sink.opened(self.requested)
        writer = asyncio.ensure_future(self._write())
        try:
            why = await self._read(sink, limit)
        finally:
            writer.cancel()
        sink.lost(why, final=True)

    async def _read(self, sink: Sink, limit: int) -> str:
        ws = self._ws
        try:
            while True:
                await self._reading.wait()  # the session's inbox has room
                message = await ws.recv()
                if self._closed:
                    return "closed by the host"
                if isinstance(message, str):
                    sink.message(message)
                else:
                    sink.refused(binary_frame(len(message)), BINARY)
        except ConnectionClosedOK:
            return why_closed(None, sink, limit)
        except ConnectionClosed as exc:
            return why_closed(exc, sink, limit)

    async def _write(self) -> None:
        while True:
            text = await self._outbox.get()
            if text is None:  # hang_up(refused=True): everything before it is written
                await self._ws.close(CloseCode.POLICY_VIOLATION, (self._refusal or "")[:120])
                return
            try:
                await self._ws.send(text)
            except ConnectionClosed:
                return
            with self._chars_lock:
                self._chars -= len(text)

    def _drop(self) -> None:
        self._reading.set()
        self._closing = asyncio.ensure_future(self._ws.close())  # kept: a task must be held


def _bearer(header: str | None) -> str | None:
    if header is None:
        return None
    scheme, _, credentials = header.partition(" ")
    return credentials.strip() or None if scheme.lower() == "bearer" else None


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None
