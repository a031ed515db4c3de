"""One MCP server's session, on an asyncio loop thread of its own (docs/mcp-apps.md).

The official SDK's ``mcp.Client`` (imported here, on first use: it is an optional extra)
runs on a ``LoopThread``, never on the kernel's loop, so a server that hangs stalls that
thread and nothing else. The session is one long task (the client is entered and left in
the same task, as anyio wants); each request is another task on the same loop with a
deadline. Whoever asks waits on a concurrent future with that deadline, or adds a callback:
no call ever waits longer than it said. The client advertises the MCP Apps extension
(``io.modelcontextprotocol/ui``), so servers send their UI-enabled tools.

A server that ends (its process exits, its HTTP endpoint goes) makes every request fail at
once with "Connection closed"; the connection then ends with the reason, and for a process,
the end of what it wrote to stderr.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import os
import tempfile
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from ..protocol._errors import UsageError
from ..runtime._threads import LoopThread

__all__ = ["INSTALL", "McpConnection", "McpFailure", "sdk"]

T = TypeVar("T")
INSTALL = "pip install 'lineup-jupyter[mcp]'"
EXTENSION = "io.modelcontextprotocol/ui"
APP_SETTINGS = {"mimeTypes": ["text/html;profile=mcp-app"]}
_STDERR_TAIL = 2000  # characters of a process's stderr shown when it ends


class McpFailure(Exception):
    """A request to the server did not get an answer: the reason, for the user."""


def sdk() -> Any:
    """The ``mcp`` package, or a UsageError that says how to install it."""
    try:
        import mcp
        import mcp.client
    except ImportError:
        raise UsageError(
            f"[lineup] MCP servers need the official MCP SDK: {INSTALL} (or pip install mcp)"
        ) from None
    return mcp


class McpConnection:
    """A live session with one MCP server; ``status`` is connecting, ready or ended."""

    def __init__(self, server: Any, *, timeout: float, on_end: Callable[[str], None]) -> None:
        self._sdk = sdk()
        self.timeout = timeout
        self._on_end = on_end
        self._target, self._stderr = self._transport(server)
        self.via = _via(server)
        self.status = "connecting"
        self.problem: str | None = None
        self.server_info: dict[str, Any] = {}
        self._client: Any = None
        self._ready = threading.Event()
        self._closing: asyncio.Event | None = None
        self._user_closed = False
        self._lock = threading.Lock()
        self._loop = LoopThread("lineup-mcp")
        self._session: Future[None] = self._loop.submit(self._run())
        self._session.add_done_callback(self._session_done)

    def _transport(self, server: Any) -> tuple[Any, Any]:
        """What ``mcp.Client`` connects to: a URL (streamable HTTP), a process (stdio: its
        stderr kept in a file, for the reason it ended), or a server object in-process."""
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.server import Server
        from mcp.server.mcpserver import MCPServer

        if isinstance(server, str):
            if not server.startswith(("http://", "https://")):
                raise UsageError(
                    f"[lineup] {server!r}: an MCP server is an http(s):// URL (streamable HTTP), "
                    "a command as a list (stdio), StdioServerParameters or a server object"
                )
            return server, None
        if isinstance(server, Sequence) and not isinstance(server, (str, bytes)):
            if not server:
                raise UsageError("[lineup] the command of an MCP server is empty")
            argv = [os.fspath(part) for part in server]
            server = StdioServerParameters(command=argv[0], args=argv[1:])
        if isinstance(server, StdioServerParameters):
            # Closed when the connection ends (_end), not at the end of this block.
            stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            return stdio_client(server, errlog=stderr), stderr
        if isinstance(server, (Server, MCPServer)):
            return server, None
        raise UsageError(
            f"[lineup] cannot connect to {type(server).__name__}: an MCP server is an http(s):// "
            "URL, a command as a list, StdioServerParameters or a server object"
        )

    # ---- the session ---------------------------------------------------------------

    async def _run(self) -> None:
        from mcp import Client
        from mcp.client import advertise
        from mcp_types import Implementation

        client = Client(
            self._target,
            extensions=[advertise(EXTENSION, APP_SETTINGS)],
            client_info=Implementation(name="lineup-jupyter", version=_our_version()),
        )
        async with client:
            info = client.server_info
            self.server_info = {} if info is None else info.model_dump(exclude_none=True)
            self._closing = asyncio.Event()
            self._client = client
            self.status = "ready"
            self._ready.set()
            await self._closing.wait()

    def _session_done(self, future: Future[None]) -> None:
        if future.cancelled():
            self._end("the connection was cancelled")
            return
        error = future.exception()
        if error is None:
            self._end("closed by the user" if self._user_closed else "closed")
        else:
            self._end(f"the connection failed: {_describe(error)}")

    def wait_ready(self) -> None:
        """Block until the server answered its handshake, at most ``timeout`` seconds."""
        if not self._ready.wait(self.timeout):
            self._end(f"the server did not answer within {self.timeout:g} s")
        if self.status == "ready":
            return
        raise UsageError(f"[lineup] could not connect to the MCP server: {self.problem}")

    def _end(self, reason: str) -> None:
        with self._lock:
            if self.status == "ended":
                return
            self.status = "ended"
            tail = self._stderr_tail()
            self.problem = reason + (f"; its stderr ends with: {tail}" if tail else "")
        self._ready.set()
        # The session's cleanup (ending a process, closing HTTP) runs on the loop: the loop
        # stops once it is done, and the stderr file closes then.
        self._session.add_done_callback(lambda _: self._stop())
        self._session.cancel()
        self._on_end(self.problem)

    def _stop(self) -> None:
        self._loop.stop()
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - _STDERR_TAIL))
            return str(self._stderr.read()).strip()
        except (OSError, ValueError):
            return ""

    # ---- requests ------------------------------------------------------------------

    def request(
        self, make: Callable[[Any], Awaitable[T]], timeout: float | None = None
    ) -> Future[T]:
        """Run ``make(client)`` on the session's loop with a deadline; the future fails with
        McpFailure (the reason) when the server is gone, errs or does not answer in time."""
        deadline = self.timeout if timeout is None else timeout
        result: Future[T] = Future()
        if self.status != "ready":
            result.set_exception(McpFailure(f"the server is {self.status}: {self.problem}"))
            return result

        async def run() -> T:
            try:
                return await asyncio.wait_for(make(self._client), deadline)
            except asyncio.TimeoutError:
                raise McpFailure(f"the server did not answer within {deadline:g} s") from None

        try:
            running = self._loop.submit(run())
        except RuntimeError:  # the loop closed since the status was read: it ended
            result.set_exception(McpFailure(f"the server is ended: {self.problem}"))
            return result

        def done(future: Future[T]) -> None:
            if future.cancelled():
                result.set_exception(McpFailure("cancelled"))
                return
            error = future.exception()
            if error is None:
                result.set_result(future.result())
                return
            reason = error if isinstance(error, McpFailure) else McpFailure(_describe(error))
            result.set_exception(reason)
            if _closed(error):
                self._end(f"the server closed the connection ({_describe(error)})")

        running.add_done_callback(done)
        result.add_done_callback(lambda f: running.cancel() if f.cancelled() else None)
        return result

    def call(self, make: Callable[[Any], Awaitable[T]], timeout: float | None = None) -> T:
        """``request``, waited for here (never on the session's own thread)."""
        if self._loop.on_thread():
            raise UsageError("[lineup] an MCP request cannot wait on its own loop's thread")
        future = self.request(make, timeout)
        try:
            return future.result((self.timeout if timeout is None else timeout) + 5)
        except FutureTimeout:
            future.cancel()
            raise McpFailure("no answer in time") from None

    def close(self) -> None:
        self._user_closed = True
        closing = self._closing
        if closing is not None and self.status == "ready":
            with contextlib.suppress(RuntimeError):  # the loop is closed already
                self._loop.loop.call_soon_threadsafe(closing.set)
            with contextlib.suppress(Exception):
                self._session.result(self.timeout)
        self._end("closed by the user")


def _our_version() -> str:
    try:
        return importlib.metadata.version("lineup-jupyter")
    except importlib.metadata.PackageNotFoundError:  # a checkout on sys.path, not installed
        return "0"


def _via(server: Any) -> str:
    """How the host reaches the server, in a few words (the host view's agents line)."""
    if isinstance(server, str):
        return f"MCP over HTTP, {server[:200]}"
    command = getattr(server, "command", None)
    if isinstance(command, str):
        args = [str(arg) for arg in getattr(server, "args", [])]
        return "MCP over stdio, " + " ".join([command, *args])[:200]
    if isinstance(server, Sequence):
        return "MCP over stdio, " + " ".join(os.fspath(part) for part in server)[:200]
    return "MCP in-process"


def _closed(error: BaseException) -> bool:
    return "Connection closed" in str(error) or isinstance(error, (EOFError, BrokenPipeError))


def _describe(error: BaseException) -> str:
    """An exception as one line for the user (an ExceptionGroup: its first leaf)."""
    while leaves := getattr(error, "exceptions", None):  # an ExceptionGroup (3.11+)
        error = leaves[0]
    message = getattr(error, "error", None)
    text = getattr(message, "message", None) or str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}"[:500]
