"""A loopback canary: an HTTP server and a UDP socket that record everything reaching them.

Security tests give a surface the canary's address and then assert that nothing arrived: 0
TCP connections, 0 HTTP requests, 0 UDP datagrams (docs/testing.md, docs/security.md). Both
listen on 127.0.0.1 only, on a port below the machine's ephemeral range, never one the OS
hands out: a port the OS picked for an earlier server (a Jupyter server, an MCP server, an
earlier canary) may still be the target of something that outlived it, and CI once counted 8
bare connections at a canary that nothing under test had been told of.
"""

from __future__ import annotations

import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]


@dataclass
class Canary:
    """What reached the canary so far. Lists only grow; read them after the action under test."""

    http_port: int = 0
    udp_port: int = 0
    connections: list[tuple[str, int]] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    datagrams: list[tuple[tuple[str, int], bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The HTTP base URL, without a trailing slash."""
        return f"http://127.0.0.1:{self.http_port}"

    def total(self) -> int:
        """Every sign of contact: TCP connections (even without a request) and datagrams."""
        return len(self.connections) + len(self.requests) + len(self.datagrams)

    def wait_for(self, condition: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Poll ``condition`` until true or ``timeout`` seconds: True if it came true."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def summary(self) -> str:
        return (
            f"{len(self.connections)} TCP connections, {len(self.requests)} HTTP requests "
            f"{[(r.method, r.path) for r in self.requests]}, {len(self.datagrams)} UDP datagrams"
        )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    canary: Canary

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.canary.connections.append(client_address)
        return True


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    # Close a connection that sends nothing for 1 s. Chromium opens a socket for a navigation
    # that CSP then blocks and keeps it idle for a while; a later attempt would reuse it, and
    # the canary would count nothing for that attempt.
    timeout = 1.0

    def _record(self) -> None:
        self.server.canary.requests.append(
            Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()})
        )
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        body = b"canary\n"
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _record

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


class CanaryServer:
    """Starts both listeners in daemon threads; ``stop()`` closes them."""

    def __init__(self) -> None:
        self.canary = Canary()
        self._http = _bound(lambda port: _Server(("127.0.0.1", port), _Handler))
        self._http.canary = self.canary
        self._udp = _bound(_udp_socket)
        self._udp.settimeout(0.2)
        self.canary.http_port = self._http.server_address[1]
        self.canary.udp_port = self._udp.getsockname()[1]
        self._stopping = threading.Event()
        self._threads = [
            threading.Thread(target=self._http.serve_forever, args=(0.1,), daemon=True),
            threading.Thread(target=self._receive, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _receive(self) -> None:
        while not self._stopping.is_set():
            try:
                data, address = self._udp.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            self.canary.datagrams.append((address, data))

    def stop(self) -> None:
        self._stopping.set()
        self._http.shutdown()
        self._http.server_close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._udp.close()


def _udp_socket(port: int) -> socket.socket:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.bind(("127.0.0.1", port))
    except OSError:
        udp.close()
        raise
    return udp


def _bound(bind: Callable[[int], T]) -> T:
    """``bind(port)`` on a free port below the ephemeral range (the module's docstring)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as ports:
            low = int(ports.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default
    for port in random.sample(range(max(1024, low - 12000), low), 200):
        try:
            return bind(port)
        except OSError:  # taken: another worker's canary, or any listener
            continue
    return bind(0)
