"""Downloading an app archive over http(s) for an install (H31), bounded in every way.

- One overall deadline (``InstallLimits.timeout_seconds``) for connecting, every redirect,
  the headers and the body together: a watchdog shuts the socket down when it passes, so a
  server that sends one byte at a time cannot hold the kernel past it (a per-read timeout
  would restart at every byte).
- At most ``max_download_bytes``, refused from ``Content-Length`` first, then while reading.
- Redirects: at most ``max_redirects``, only to http(s) on the same host and port (and from
  http to https of the same host). Anything else is refused with the target named, so the
  user can install from it directly if they trust it (docs/apps.md).
- Every failure, a malformed response included, is a :class:`UsageError` with the reason.

http.client is used directly (not urllib) because the watchdog needs the connection's socket.
No proxy is used.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from urllib.parse import urljoin, urlsplit

from ..protocol._errors import UsageError

__all__ = ["download"]

_REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 64 * 1024


class _Deadline:
    """Shuts the current connection's socket down when the overall deadline passes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.passed = False
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def remaining(self) -> float:
        left = self.end - time.monotonic()
        if left <= 0:
            self.passed = True
        return left

    def guard(self, sock: socket.socket | None) -> None:
        """The socket to shut down when the deadline passes (None: no connection now)."""
        with self._lock:
            self._socket = sock
            if self.passed and sock is not None:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.passed = True
            if self._socket is not None:
                _shut(self._socket)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    # Wakes a recv blocked in another thread; the read there then fails or ends.
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port


def _connect(url: str, deadline: _Deadline) -> http.client.HTTPConnection:
    scheme, host, port = _origin(url)
    timeout = max(deadline.remaining(), 0.001)
    connection: http.client.HTTPConnection
    if scheme == "https":
        connection = http.client.HTTPSConnection(
            host, port, timeout=timeout, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(host, port, timeout=timeout)
    connection.connect()
    deadline.guard(connection.sock)
    return connection


def download(url: str, *, max_bytes: int, timeout_seconds: float, max_redirects: int) -> bytes:
    """The bytes at ``url``, or a UsageError saying why not (H31)."""
    where = f"downloading {url}"
    deadline = _Deadline(timeout_seconds)
    try:
        return _fetch(url, where, deadline, max_bytes, max_redirects)
    except UsageError:
        raise
    except (http.client.HTTPException, OSError, ValueError, UnicodeError) as exc:
        if deadline.passed:
            raise _late(where, deadline) from None
        reason = getattr(exc, "reason", None) or exc or type(exc).__name__
        raise UsageError(
            f"[lineup] {where}: the download failed: {type(exc).__name__}: {reason}"
        ) from None
    finally:
        deadline.cancel()


def _late(where: str, deadline: _Deadline) -> UsageError:
    return UsageError(
        f"[lineup] {where}: not finished within {deadline.seconds:g} s, the overall time "
        "limit for connecting, redirects and reading (InstallLimits.timeout_seconds); "
        "nothing was installed (H31)"
    )


def _fetch(url: str, where: str, deadline: _Deadline, max_bytes: int, max_redirects: int) -> bytes:
    current = url
    for _ in range(max_redirects + 1):
        scheme, host, _ = _origin(current)
        if scheme not in ("http", "https") or not host:
            raise UsageError(f"[lineup] {where}: {current!r} is not an http(s) URL (H31)")
        connection = _connect(current, deadline)
        try:
            parts = urlsplit(current)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            connection.request("GET", target, headers={"User-Agent": "lineup-jupyter"})
            response = connection.getresponse()
            if response.status in _REDIRECTS:
                location = response.getheader("Location")
                if not location:
                    raise UsageError(
                        f"[lineup] {where}: a {response.status} redirect without a Location"
                    )
                following = urljoin(current, location.strip())
                _check_redirect(where, current, following)
                current = following
                continue
            if response.status != 200:
                raise UsageError(
                    f"[lineup] {where}: the server answered {response.status} "
                    f"{response.reason}; nothing was installed (H31)"
                )
            return _body(response, where, deadline, max_bytes)
        finally:
            deadline.guard(None)
            connection.close()
    raise UsageError(f"[lineup] {where}: more than {max_redirects} redirects (H31)")


def _check_redirect(where: str, current: str, following: str) -> None:
    (was_scheme, was_host, was_port), (scheme, host, port) = _origin(current), _origin(following)
    if scheme not in ("http", "https"):
        raise UsageError(
            f"[lineup] {where}: the server redirects to {following!r}; only http(s) is "
            "followed (H31)"
        )
    same = (scheme, host, port) == (was_scheme, was_host, was_port)
    upgrade = (
        (was_scheme, scheme) == ("http", "https")
        and host == was_host
        and (port == was_port or (was_port, port) == (80, 443))
    )
    if not (same or upgrade):
        raise UsageError(
            f"[lineup] {where}: the server redirects to {following!r}: another host or port, "
            "or https to http. Redirects are followed only on the same host and port (http "
            "may become https); install from that URL directly if you trust it (H31)"
        )


def _body(
    response: http.client.HTTPResponse, where: str, deadline: _Deadline, max_bytes: int
) -> bytes:
    declared = response.getheader("Content-Length")
    if declared is not None and declared.strip().isdigit() and int(declared) > max_bytes:
        raise UsageError(
            f"[lineup] {where}: the server announces {declared.strip()} bytes; the limit is "
            f"{max_bytes} (H31)"
        )
    data = bytearray()
    while True:
        if deadline.remaining() <= 0:
            raise _late(where, deadline)
        chunk = response.read1(_CHUNK)
        if deadline.passed:  # the watchdog cut the read short: what came is not the file
            raise _late(where, deadline)
        if not chunk:
            break
        data += chunk
        if len(data) > max_bytes:
            raise UsageError(f"[lineup] {where}: more than {max_bytes} bytes; refused (H31)")
    if declared is not None and declared.strip().isdigit() and len(data) != int(declared):
        raise UsageError(
            f"[lineup] {where}: the server announced {declared.strip()} bytes and sent "
            f"{len(data)}; nothing was installed (H31)"
        )
    return bytes(data)
