"""Agents on a WebSocket the host dials: ``host.connect_websocket(url)`` (H40, H42).

websockets' threading client (``websockets.sync``) on one daemon thread per agent, which
reads, and reconnects when the connection drops or cannot be made, after ``FIRST_RETRY``
seconds, then twice as long each time up to ``LAST_RETRY``; every connection starts with a
fresh ``client.inventory`` (C1, the session's). One text frame carries one envelope; a binary
frame is refused with a reason and the connection goes on; a frame over the host's message
limit ends the connection with close code 1009 before it is read (websockets refuses it from
its header, ``max_size``), and the refusal is recorded in the history. What both WebSocket
transports share (these frames, the reasons a connection ended) is here too; agents that
connect to the host are _listener.py's.
"""

from __future__ import annotations

import logging
import ssl
import threading
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from websockets.exceptions import ConnectionClosed, InvalidURI, WebSocketException
from websockets.frames import CloseCode
from websockets.sync.client import ClientConnection, connect
from websockets.uri import parse_uri

from ..protocol._errors import ProtocolError, UsageError
from ._remote import RemoteAgent, SessionHost
from ._transport import Gate, Sink, Writer

__all__ = ["WebSocketAgent", "WebSocketTransport"]

logger = logging.getLogger("lineup_jupyter")

FIRST_RETRY = 0.25  # seconds before the first reconnection attempt
LAST_RETRY = 10.0  # the longest wait between two attempts
OPEN_TIMEOUT = 5.0  # seconds for a connection's opening handshake
CLOSE_TIMEOUT = 1.0  # seconds for its closing handshake

BINARY = ProtocolError(
    "invalid",
    "H40",
    "$",
    "a binary frame is not an envelope: send each envelope as one text frame of UTF-8 JSON.",
)


def binary_frame(size: int) -> str:
    """How a refused binary frame is shown in the history."""
    return f"<a binary frame of {size} bytes>"


def too_big(limit: int) -> ProtocolError:
    """The refusal of a frame over the host's message limit (closed with 1009 unread)."""
    return ProtocolError(
        "too_large",
        "H2",
        "$",
        f"a message was over the limit of {limit} bytes; it was not read, and the "
        "connection was closed with code 1009 (H40).",
    )


def why_closed(exc: ConnectionClosed | None, sink: Sink, limit: int) -> str:
    """Why a connection ended, in words; a frame over the limit is refused to ``sink``."""
    if exc is None:
        return "the agent closed the connection"
    if exc.sent is not None and exc.sent.code == CloseCode.MESSAGE_TOO_BIG:
        sink.refused("<a frame over the limit>", too_big(limit))
        return f"it sent a message over {limit} bytes, so the connection was closed (1009)"
    if exc.rcvd is not None:
        reason = f": {exc.rcvd.reason}" if exc.rcvd.reason else ""
        return f"the agent closed the connection (code {exc.rcvd.code}{reason})"
    return "the connection was lost"


class WebSocketTransport:
    """A WebSocket the host dials, and dials again (``_transport.Transport``)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
        max_bytes: int,
    ) -> None:
        try:
            secure = parse_uri(url).secure
        except (InvalidURI, TypeError, ValueError):
            raise UsageError(
                f"[lineup] {url!r} is not a WebSocket URL (ws://host:port/path or wss://...)"
            ) from None
        if ssl_context is not None and not secure:
            raise UsageError(f"[lineup] ssl_context is for wss:// URLs; {url!r} is not TLS")
        self.url = url
        self.describe = f"WebSocket {_without_query(url)}"
        self.connections = 0
        self._ssl = ssl_context
        self._headers = dict(headers or {})
        self._max_bytes = max_bytes
        self._closed = threading.Event()
        self._gate = Gate()
        self._ws: ClientConnection | None = None
        self._writer: Writer | None = None

    def start(self, sink: Sink) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(sink,), name="lineup ws client", daemon=True
        )
        self._thread.start()

    def send(self, text: str) -> bool:
        writer = self._writer
        return writer is None or writer.put(text)  # none: lost meanwhile, as if written

    def pause_reading(self) -> None:
        self._gate.pause()

    def resume_reading(self) -> None:
        self._gate.resume()

    def hang_up(self, why: str, *, refused: bool = False) -> None:
        # Only this connection ends: the next one starts afresh from a new inventory.
        ws, writer = self._ws, self._writer
        if ws is None or writer is None:
            return
        if refused:
            writer.end(lambda: ws.close(CloseCode.POLICY_VIOLATION, why[:120]))
        else:
            writer.stop()
            _close_soon(ws)

    def close(self) -> None:
        self._closed.set()
        self._gate.resume()
        if self._writer is not None:
            self._writer.stop()
        _close_soon(self._ws)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _run(self, sink: Sink) -> None:
        delay = FIRST_RETRY
        while not self._closed.is_set():
            try:
                ws = connect(
                    self.url,
                    ssl=self._ssl,  # None: the default context for wss://, nothing for ws://
                    additional_headers=self._headers,
                    max_size=self._max_bytes,
                    open_timeout=OPEN_TIMEOUT,
                    close_timeout=CLOSE_TIMEOUT,
                )
            except (OSError, WebSocketException) as exc:
                sink.trouble(f"cannot connect ({exc}); trying again")
                self._closed.wait(delay)
                delay = min(2 * delay, LAST_RETRY)
                continue
            delay = FIRST_RETRY
            with ws:  # closed on the way out (and websockets 17.1+ wants connect() so used)
                self._ws = ws
                if self._closed.is_set():  # close() ran while connecting
                    return
                self.connections += 1
                self._writer = Writer(f"lineup {self.describe}", ws.send)
                sink.opened()
                why = self._pump(ws, sink)
                self._writer.stop()
                self._ws = None
            sink.lost(f"{why}; reconnecting", final=False)
            self._closed.wait(delay)

    def _pump(self, ws: ClientConnection, sink: Sink) -> str:
        """Hand each message to the sink until the connection ends; says why it did."""
        try:
            for message in ws:
                self._gate.wait()
                if self._closed.is_set():
                    return "closed by the host"
                if isinstance(message, str):
                    sink.message(message)
                else:
                    sink.refused(binary_frame(len(message)), BINARY)
        except ConnectionClosed as exc:
            return why_closed(exc, sink, self._max_bytes)
        return why_closed(None, sink, self._max_bytes)


class WebSocketAgent(RemoteAgent):
    """An agent the host reaches at a WebSocket URL; made by ``host.connect_websocket(url)``:
    the session (``RemoteAgent``) over a ``WebSocketTransport``.

    It reconnects whenever the connection drops (``status`` is ``disconnected`` meanwhile),
    and each connection hears a fresh ``client.inventory``; ``connections`` counts them.
    """

    def __init__(
        self,
        host: SessionHost,
        url: str,
        *,
        agent_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._socket = WebSocketTransport(
            url, headers=headers, ssl_context=ssl_context, max_bytes=host.limits.max_message_bytes
        )
        self.url = url
        super().__init__(host, self._socket, agent_id=agent_id)

    @property
    def connections(self) -> int:
        """How many connections were made (the first, and every reconnection)."""
        return self._socket.connections

    def close(self, timeout: float = 2.0) -> None:
        """Close the connection and stop reconnecting."""
        super().close()
        self._socket.join(timeout)


def _close_soon(ws: ClientConnection | None) -> None:
    """Close a connection without waiting for its closing handshake."""
    if ws is not None:
        threading.Thread(target=ws.close, daemon=True).start()


def _without_query(url: str) -> str:
    """The URL as shown in messages: a token in its query is not repeated."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
