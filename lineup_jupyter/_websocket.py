"""Agents on a WebSocket: the host connects to an agent's URL, or listens for agents (H40, H43).

websockets' threading API (``websockets.sync``): each connection is read on a daemon thread,
like a process's stdout (``_remote`` says why threads). One text frame carries one envelope;
a binary frame is refused with a reason and the connection goes on; a frame over the host's
message limit ends the connection with close code 1009 before it is read (websockets refuses
it from its header, ``max_size``), and the refusal is recorded in the history.

``WebSocketAgent`` (``host.connect_websocket``) reconnects when its connection drops or cannot
be made, after ``FIRST_RETRY`` seconds, then twice as long each time up to ``LAST_RETRY``;
every connection starts with a fresh ``client.inventory`` (C1). ``WebSocketListener``
(``host.listen_websocket``) binds 127.0.0.1 and nothing else, and admits a connection only
with its token (``Authorization: Bearer TOKEN`` or ``?token=TOKEN``, compared in constant
time) and only from a program, not a web page (a request with an ``Origin`` header is
refused). Its own accept loop runs on a daemon thread and starts a daemon thread per socket
only within the listener's bounds (H44); a connected agent never keeps the kernel from
exiting.
"""

from __future__ import annotations

import contextlib
import hmac
import http
import logging
import secrets
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

from websockets.exceptions import ConnectionClosed, InvalidURI, WebSocketException
from websockets.frames import CloseCode
from websockets.http11 import Request, Response
from websockets.sync.client import ClientConnection, connect
from websockets.sync.connection import Connection
from websockets.sync.server import ServerConnection, serve
from websockets.uri import parse_uri

from ._errors import ProtocolError, UsageError
from ._remote import HostThread, Link, RemoteAgent
from .protocol import rules
from .protocol._validate import readable_id

if TYPE_CHECKING:
    from ._host import Host

__all__ = ["WebSocketAgent", "WebSocketListener"]

logger = logging.getLogger("lineup_jupyter")

FIRST_RETRY = 0.25  # seconds before the first reconnection attempt
LAST_RETRY = 10.0  # the longest wait between two attempts
OPEN_TIMEOUT = 5.0  # seconds for a connection's opening handshake
CLOSE_TIMEOUT = 1.0  # seconds for its closing handshake
ACCEPT_POLL = 0.25  # seconds the accept loop waits before it looks whether it was closed
ACCEPT_PAUSE = 0.05  # seconds it pauses after a failed accept (no descriptor left, say)

_BINARY = ProtocolError(
    "invalid",
    "H40",
    "$",
    "a binary frame is not an envelope: send each envelope as one text frame of UTF-8 JSON.",
)


class WebSocketAgent(RemoteAgent):
    """An agent the host reaches at a WebSocket URL; made by ``host.connect_websocket(url)``.

    It reconnects whenever the connection drops, and each connection hears a fresh
    ``client.inventory``. ``status`` is ``connecting``, ``connected``, ``disconnected``
    (waiting to reconnect) or ``closed``; ``connections`` counts the connections made.
    """

    def __init__(
        self,
        host: Host,
        url: str,
        *,
        agent_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        try:
            secure = parse_uri(url).secure
        except (InvalidURI, TypeError, ValueError):
            raise UsageError(
                f"[lineup] {url!r} is not a WebSocket URL (ws://host:port/path or wss://...)"
            ) from None
        if ssl_context is not None and not secure:
            raise UsageError(f"[lineup] ssl_context is for wss:// URLs; {url!r} is not TLS")
        self._ssl = ssl_context
        super().__init__(host, agent_id=agent_id, describe=f"WebSocket {_without_query(url)}")
        self.url = url
        self.connections = 0
        self._headers = dict(headers or {})
        self._ws: ClientConnection | None = None
        self._thread = threading.Thread(target=self._run, name="lineup ws client", daemon=True)
        self._thread.start()
        host._track(self)  # the host's view lists it, once it is whole

    def close(self, timeout: float = 2.0) -> None:
        """Close the connection and stop reconnecting."""
        self._shut()
        self._thread.join(timeout)

    def _close_transport(self) -> None:
        _close_soon(self._ws)

    def _abort(self, why: str) -> None:
        # Only this connection ends: the next one starts afresh from a new inventory.
        logger.warning("[lineup] %s: %s", self._name(), why)
        _close_soon(self._ws)

    def _run(self) -> None:
        delay = FIRST_RETRY
        failing = False
        while not self._closed.is_set():
            try:
                ws = connect(
                    self.url,
                    ssl=self._ssl,  # None: the default context for wss://, nothing for ws://
                    additional_headers=self._headers,
                    max_size=self.host.limits.max_message_bytes,
                    open_timeout=OPEN_TIMEOUT,
                    close_timeout=CLOSE_TIMEOUT,
                )
            except (OSError, WebSocketException) as exc:
                if not failing:  # once per outage, not once per attempt
                    self.problem = f"cannot connect ({exc}); trying again"
                    self.host._connection_changed()
                    logger.warning(
                        "[lineup] %s: cannot connect (%s); trying again, less and less often, "
                        "until it answers or close() is called",
                        self._name(),
                        exc,
                    )
                failing = True
                self._closed.wait(delay)
                delay = min(2 * delay, LAST_RETRY)
                continue
            if failing:
                logger.warning("[lineup] %s: connected", self._name())
            failing, delay = False, FIRST_RETRY
            with ws:  # closed on the way out (and websockets 17.1+ wants connect() so used)
                self._ws = ws
                if self._closed.is_set():  # close() ran while connecting
                    return
                self.connections += 1
                link = Link(f"lineup {self.describe}", ws.send)
                self._feed(partial(self._opened, link))
                why = _pump(self, ws)
                self._ws = None
            self._feed(partial(self._lost, link, f"{why}; reconnecting", final=False))
            self._closed.wait(delay)


class WebSocketListener:
    """Where agents connect to this host: ``ws://127.0.0.1:PORT/``, with the token (H43).

    Made by ``host.listen_websocket(port=0, token=None)``; ``url``, ``port`` and ``token`` say
    how to connect, ``agents`` lists the agents connected now, ``refused`` counts the
    connections turned away, ``accept_errors`` the failed accepts. An agent may name itself
    with ``?agent_id=ID`` (H41).

    Bounded (H44): one accept loop on a thread of its own, and a thread per socket only while
    there is room for it (``Limits.max_handshakes`` sockets in their opening handshake,
    ``max_connections`` connected, ``max_unnamed_connections`` of those without an agent id);
    past a bound a socket is answered 503 and closed at once, before any thread is started.
    A failed accept (no file descriptor left) or a thread that cannot start turns one
    connection away and the loop goes on.
    """

    def __init__(self, host: Host, port: int = 0, *, token: str | None = None) -> None:
        if token is None:
            token = secrets.token_urlsafe(32)
        elif not isinstance(token, str) or not token:
            raise UsageError("[lineup] the listener's token must be a non-empty string")
        self.token = token
        self.refused = 0
        self.accept_errors = 0
        self._host = host
        self._host_thread = HostThread()  # the agents' messages go to the host there
        self._lock = threading.Lock()
        self._agents: list[_Accepted] = []
        self._opening = [0, 0]  # admitted, not yet listed: [all, without an agent id]
        self._handshakes: set[socket.socket] = set()  # accepted, handshake not over
        self._local = threading.local()  # the socket a connection thread is handshaking
        self._closing = False
        try:
            # 127.0.0.1, never "" or 0.0.0.0: other machines must not reach the kernel.
            self._server = serve(
                self._serve,
                "127.0.0.1",
                port,
                process_request=self._admit,
                max_size=host.limits.max_message_bytes,
                open_timeout=OPEN_TIMEOUT,
                close_timeout=CLOSE_TIMEOUT,
            )
        except OSError as exc:
            raise UsageError(
                f"[lineup] cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}"
            ) from None
        self.port: int = self._server.socket.getsockname()[1]
        # Our accept loop, not serve_forever: that one dies for good on the first failed
        # accept or thread start, and starts a thread for every socket without bound.
        self._thread = threading.Thread(
            target=self._accept_loop, name="lineup ws listener", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """The address agents connect to (the token goes in a header or ``?token=``)."""
        return f"ws://127.0.0.1:{self.port}/"

    @property
    def agents(self) -> list[RemoteAgent]:
        with self._lock:
            return list(self._agents)

    def close(self) -> None:
        """Stop listening and close every connected agent."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            agents = list(self._agents)
            handshaking = list(self._handshakes)
        for agent in agents:  # first: a closed agent's thread hands nothing more to the host
            agent.close()
        self._server.socket.close()  # the accept loop ends
        # websockets' Server has a socket pair to wake serve_forever (not on Windows); it
        # wakes our loop instead, and is closed with it.
        notifier = getattr(self._server, "shutdown_notifier", None)
        if notifier is not None:
            with contextlib.suppress(OSError):
                notifier.send(b"x")
            notifier.close()
        for sock in handshaking:  # their threads end at once
            with contextlib.suppress(OSError):
                sock.close()
        self._thread.join(2.0)

    def __enter__(self) -> WebSocketListener:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"WebSocketListener(url={self.url!r}, agents={len(self.agents)})"

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
        limits = self._host.limits
        connected = len(self._agents) + self._opening[0]
        if connected >= limits.max_connections:
            return (
                f"{connected} agents are connected, this listener's limit "
                "(Limits.max_connections); try again later"
            )
        unnamed = self._opening[1] + sum(
            1 for a in self._agents if a.agent_id is None and a._requested is None
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

    # ---- the accept loop (H44) --------------------------------------------------------

    def _accept_loop(self) -> None:
        listening = self._server.socket
        watcher = getattr(self._server, "shutdown_watcher", None)  # close() writes to it
        with contextlib.ExitStack() as stack:
            selector = stack.enter_context(selectors.DefaultSelector())
            if watcher is not None:
                stack.callback(watcher.close)
                selector.register(watcher, selectors.EVENT_READ)
            try:
                selector.register(listening, selectors.EVENT_READ)
            except (OSError, ValueError):  # closed before the loop started
                return
            while not self._closing:
                try:
                    if not selector.select(ACCEPT_POLL):
                        continue
                    sock, address = self._accept()
                except (OSError, ValueError) as exc:
                    if self._closing:
                        return
                    self._accept_failed(exc)
                    continue
                self._start(sock, address)

    def _accept(self) -> tuple[socket.socket, Any]:
        return self._server.socket.accept()

    def _accept_failed(self, exc: BaseException) -> None:
        """An accept failed (no descriptor left, say): counted, logged once, and the loop
        goes on after a short pause, so a connection that could not be taken is retried."""
        self.accept_errors += 1
        if self.accept_errors == 1:
            logger.warning(
                "[lineup] the agent listener on %s could not accept a connection (%s); it "
                "goes on (failures are counted in listener.accept_errors)",
                self.url,
                exc,
            )
        time.sleep(ACCEPT_PAUSE)

    def _start(self, sock: socket.socket, address: Any) -> None:
        """A thread for this socket's handshake if there is room; else a 503 and a close."""
        with self._lock:
            busy = len(self._handshakes) >= self._host.limits.max_handshakes
            if not busy:
                self._handshakes.add(sock)
        if busy:
            self._refuse_socket(
                sock,
                f"{len(self._handshakes)} connections are in their opening handshake, this "
                "listener's limit (Limits.max_handshakes); try again later",
            )
            return
        try:
            self._spawn(self._handle, sock, address)
        except RuntimeError as exc:  # "can't start new thread": this one is turned away
            with self._lock:
                self._handshakes.discard(sock)
            self._refuse_socket(sock, f"the kernel could not start a thread for it ({exc})")

    def _spawn(self, target: Callable[..., None], *args: Any) -> None:
        threading.Thread(target=target, args=args, name="lineup ws connection", daemon=True).start()

    def _handle(self, sock: socket.socket, address: Any) -> None:
        """One socket, on its own thread: websockets' handshake, then _serve if admitted."""
        self._local.sock = sock
        try:
            self._server.handler(sock, address)
        finally:
            self._handshake_over()

    def _handshake_over(self) -> None:
        sock = getattr(self._local, "sock", None)
        if sock is not None:
            self._local.sock = None
            with self._lock:
                self._handshakes.discard(sock)

    def _refuse_socket(self, sock: socket.socket, why: str) -> None:
        """Turn a socket away before its handshake, without a thread: 503 if it can take it."""
        self._count_refusal(why)
        body = f"[lineup] {why}.\n".encode()
        head = (
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        with contextlib.suppress(OSError):
            sock.setblocking(False)  # never wait on a client that does not read
            sock.send(head + body)
            sock.shutdown(socket.SHUT_WR)
        sock.close()

    def _serve(self, ws: ServerConnection) -> None:
        """One admitted agent, on its connection's thread, until it disconnects."""
        self._handshake_over()
        path = ws.request.path if ws.request is not None else ""  # _admit read it already
        agent_id = _first(parse_qs(urlsplit(path).query).get("agent_id"))
        with self._lock:  # the bounds, exactly: _admit's look was before others were counted
            full = "the listener is closing" if self._closing else self._full(agent_id)
            if full is None:
                self._opening[0] += 1
                self._opening[1] += agent_id is None
        if full is not None:
            self._count_refusal(full)
            ws.close(CloseCode.TRY_AGAIN_LATER, f"[lineup] {full}"[:120])
            return
        agent = _Accepted(self._host, ws, agent_id=agent_id, host_thread=self._host_thread)
        with self._lock:
            self._opening[0] -= 1
            self._opening[1] -= agent_id is None
            if self._closing:
                agent.close()
                return
            self._agents.append(agent)
        link = Link(f"lineup {agent.describe}", ws.send)
        agent._feed(partial(agent._opened, link))
        why = _pump(agent, ws)
        agent._feed(partial(agent._lost, link, why, final=True))
        with self._lock:
            self._agents.remove(agent)


class _Accepted(RemoteAgent):
    """An agent that connected to a listener: when it disconnects, it is gone (it may connect
    again, as a new connection with a new inventory).

    Its ``?agent_id`` is claimed when the connection opens, on the host's thread (H41): an id
    the kernel or another connection speaks for is refused, with a ``lineup.v1.error`` to
    this connection alone, a line in the host's view, and a close (1008) after it; nothing
    it sends meanwhile is read.
    """

    def __init__(
        self, host: Host, ws: ServerConnection, *, agent_id: str | None, host_thread: HostThread
    ) -> None:
        super().__init__(
            host,
            agent_id=None,
            describe="WebSocket from " + ":".join(str(part) for part in ws.remote_address[:2]),
            host_thread=host_thread,
        )
        self._requested = agent_id
        self._refused = False
        self._ws = ws
        host._track(self)

    def _opened(self, link: Link) -> None:
        requested = self._requested
        if requested is not None and not self._closed.is_set():
            with self.host._lock:
                try:
                    self.host._identities.claim(requested, self)
                except ProtocolError as error:
                    self._refused = True
                    self._link = link
                    self._state = "connected"
                    self._refuse_claim({}, requested, error)
                    link.end(self._close_refused)  # once the refusal is written
                    return
                self._agent_id = requested
        super()._opened(link)

    def _message(self, raw: str | bytes) -> None:
        if not self._refused:
            super()._message(raw)

    def _close_refused(self) -> None:
        # On the writer's thread, before _shut marks it closed: until this close frame is
        # sent, the reader goes on (ignoring what it reads), so the handler cannot end first
        # and close the connection with 1000 instead.
        self._ws.close(CloseCode.POLICY_VIOLATION, "agent id in use (H41)")
        self._shut()

    def _close_transport(self) -> None:
        _close_soon(self._ws)


def _pump(agent: RemoteAgent, ws: Connection) -> str:
    """Hand each message to the agent's session until the connection ends; says why it did."""
    try:
        for message in ws:
            if isinstance(message, str):
                fed = agent._feed(partial(agent._message, message))
            else:
                shown = {"raw": f"<a binary frame of {len(message)} bytes>"}
                fed = agent._feed(partial(agent._refuse, shown, _BINARY))
            if not fed:
                return "closed by the host"
    except ConnectionClosed as exc:
        if exc.sent is not None and exc.sent.code == CloseCode.MESSAGE_TOO_BIG:
            limit = agent.host.limits.max_message_bytes
            error = ProtocolError(
                "too_large",
                "H2",
                "$",
                f"a message was over the limit of {limit} bytes; it was not read, and the "
                "connection was closed with code 1009 (H40).",
            )
            agent._feed(partial(agent._refuse, {"raw": "<a frame over the limit>"}, error))
            return f"it sent a message over {limit} bytes, so the connection was closed (1009)"
        if exc.rcvd is not None:
            reason = f": {exc.rcvd.reason}" if exc.rcvd.reason else ""
            return f"the agent closed the connection (code {exc.rcvd.code}{reason})"
        return "the connection was lost"
    return "the agent closed the connection"


def _close_soon(ws: Connection | None) -> None:
    """Close a connection without waiting for its closing handshake."""
    if ws is not None:
        threading.Thread(target=ws.close, daemon=True).start()


def _bearer(header: str | None) -> str | None:
    if header is None:
        return None
    scheme, _, credentials = header.partition(" ")
    return credentials.strip() or None if scheme.lower() == "bearer" else None


def _first(values: list[str] | None) -> str | None:
    return values[0] if values else None


def _without_query(url: str) -> str:
    """The URL as shown in messages: a token in its query is not repeated."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
