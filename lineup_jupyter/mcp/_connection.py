"""One MCP server's session, on an asyncio loop thread of its own (docs/mcp-apps.md).

The official SDK's ``mcp.Client`` (imported here, on first use: it is an optional extra)
runs on a ``LoopThread``, never on the kernel's loop, so a server that hangs stalls that
thread and nothing else. The session is one long task (the client is entered and left in
the same task, as anyio wants); each request is another task on the same loop with a
deadline. Whoever asks waits on a concurrent future with that deadline, or adds a callback:
no call ever waits longer than it said. The client advertises the MCP Apps extension
(``io.modelcontextprotocol/ui``), so servers send their UI-enabled tools.

A process (stdio) runs over ``_stdio.StdioProcess``: its lines bounded and checked, its
stderr's tail kept, and its exit (or the end of its stdout) ends the connection at once, idle
or not, with the exit code and that tail. An HTTP server that goes makes every request fail
at once with "Connection closed"; the connection then ends with the reason. Whatever ends
it, ``close`` waits a bounded time for the session's cleanup, then kills the process and
joins the loop's thread: nothing the connection started outlives it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import os
import threading
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from ..protocol._errors import ProtocolError, UsageError
from ..protocol._json import loads
from ..runtime._threads import LoopThread
from ._stdio import STOP_GRACE, StdioProcess

__all__ = ["INSTALL", "McpConnection", "McpFailure", "json_of", "sdk"]

T = TypeVar("T")
INSTALL = "pip install 'lineup-jupyter[mcp]'"
EXTENSION = "io.modelcontextprotocol/ui"
APP_SETTINGS = {"mimeTypes": ["text/html;profile=mcp-app"]}
_STDERR_SHOWN = 2000  # characters of a process's stderr's tail shown when it ends
# What close waits for the session's own cleanup (stdin closed, SIGTERM, SIGKILL: STOP_GRACE
# each) before it kills the process itself, and then for the loop's thread to end.
_CLOSE_WAIT = 3 * STOP_GRACE + 1.0
PING_EVERY = 5.0  # seconds between looks at an HTTP server's endpoint


class McpFailure(Exception):
    """A request to the server did not get an answer: the reason, for the user."""


def sdk() -> None:
    """A UsageError that says how to install the ``mcp`` package, unless it is installed."""
    try:
        import mcp.client  # noqa: F401
    except ImportError:
        raise UsageError(
            f"[lineup] MCP servers need the official MCP SDK: {INSTALL} (or pip install mcp)"
        ) from None


class McpConnection:
    """A live session with one MCP server; ``status`` is connecting, ready or ended."""

    def __init__(
        self,
        server: Any,
        *,
        timeout: float,
        on_end: Callable[[str], None],
        on_refused: Callable[[str, str], None] = lambda message, detail: None,
    ) -> None:
        sdk()
        self.timeout = timeout
        self._on_end = on_end
        self._on_refused = on_refused
        self._process: StdioProcess | None = None
        self._target = self._transport(server)
        self.via = _via(server)
        self.status = "connecting"
        self.problem: str | None = None
        self.server_info: dict[str, Any] = {}
        self._client: Any = None
        self._ready = threading.Event()
        self._closing: asyncio.Event | None = None
        self._gone: str | None = None  # why the server went, as its transport saw it
        self._user_closed = False
        self._lock = threading.Lock()
        self._task: asyncio.Task[None] | None = None  # the session's task, once it runs
        self._loop = LoopThread("lineup-mcp")
        self._session: Future[None] = self._loop.submit(self._run())
        self._session.add_done_callback(self._session_done)

    def _transport(self, server: Any) -> Any:
        """What ``mcp.Client`` connects to: a URL (streamable HTTP), a process (stdio, over
        ``StdioProcess``), or a server object in-process."""
        from mcp.client.stdio import StdioServerParameters, get_default_environment
        from mcp.server import Server
        from mcp.server.mcpserver import MCPServer

        if isinstance(server, str):
            if not server.startswith(("http://", "https://")):
                raise UsageError(
                    f"[lineup] {server!r}: an MCP server is an http(s):// URL (streamable HTTP), "
                    "a command as a list (stdio), StdioServerParameters or a server object"
                )
            return server
        if isinstance(server, Sequence) and not isinstance(server, (str, bytes)):
            if not server:
                raise UsageError("[lineup] the command of an MCP server is empty")
            argv = [os.fspath(part) for part in server]
            server = StdioServerParameters(command=argv[0], args=argv[1:])
        if isinstance(server, StdioServerParameters):
            self._process = StdioProcess(
                server.command,
                list(server.args),
                env=get_default_environment() | (server.env or {}),
                cwd=server.cwd,
                on_gone=self._went,
                on_refused=self._on_refused,
            )
            return self._process.streams()
        if isinstance(server, (Server, MCPServer)):
            return server
        raise UsageError(
            f"[lineup] cannot connect to {type(server).__name__}: an MCP server is an http(s):// "
            "URL, a command as a list, StdioServerParameters or a server object"
        )

    # ---- the session ---------------------------------------------------------------

    async def _run(self) -> None:
        from mcp import Client
        from mcp.client import advertise
        from mcp_types import Implementation

        self._task = asyncio.current_task()
        client = Client(
            self._target,
            extensions=[advertise(EXTENSION, APP_SETTINGS)],
            client_info=Implementation(name="lineup-jupyter", version=_our_version()),
        )
        async with client:
            info = client.server_info
            self.server_info = {} if info is None else info.model_dump(exclude_none=True)
            self._closing = asyncio.Event()
            if self._gone is not None:  # it went during the handshake's last step
                return
            self._client = client
            self.status = "ready"
            self._ready.set()
            if not isinstance(self._target, str):  # a process: its stdout's end says it went
                await self._closing.wait()
                return
            # An HTTP server has no connection to watch while idle (and MCP has no ping any
            # more): every PING_EVERY seconds its endpoint is reached, so a server that went
            # is seen, and its calls waiting for the user fail then, not on Allow.
            where = urllib.parse.urlsplit(self._target)
            port = where.port or (443 if where.scheme == "https" else 80)
            while True:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), PING_EVERY)
                    return
                try:
                    _, writer = await asyncio.wait_for(
                        asyncio.open_connection(where.hostname, port), self.timeout
                    )
                except (OSError, asyncio.TimeoutError) as error:
                    self._gone = (
                        f"its endpoint {where.hostname}:{port} cannot be reached "
                        f"({_describe(error)})"
                    )
                    return
                writer.close()

    def _went(self, reason: str) -> None:
        """The transport saw the server go (on the loop's thread): the session ends now."""
        self._gone = reason
        if self._closing is not None:
            self._closing.set()

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
            self._end(f"the server did not answer within {self.timeout:.3g} s")
        if self.status == "ready":
            return
        raise UsageError(f"[lineup] could not connect to the MCP server: {self.problem}")

    def _end(self, reason: str) -> None:
        with self._lock:
            if self.status == "ended":
                return
            self.status = "ended"
            if self._gone is not None and not self._user_closed:
                reason = self._gone  # what the transport saw, not what a request then got
            tail = "" if self._process is None else self._process.tail()[-_STDERR_SHOWN:]
            self.problem = reason + (f"; its stderr ends with: {tail}" if tail else "")
        self._ready.set()
        # The session's cleanup (ending the process, closing HTTP) runs on the loop, which
        # stops once it is done. Its task is cancelled on the loop, so its future is done only
        # when the cleanup is; cancelling the future itself would make it done at once and
        # stop the loop under the cleanup (measured: a process killed but never reaped).
        self._session.add_done_callback(lambda _: self._loop.stop())
        with contextlib.suppress(RuntimeError):  # the loop closed: the session ended with it
            self._loop.loop.call_soon_threadsafe(self._cancel_session)
        self._on_end(self.problem)

    def _cancel_session(self) -> None:
        """On the loop: cancel the session's task; one that has not begun (no process, no
        connection yet) through its future, which ends it before its first step."""
        if self._task is None:
            self._session.cancel()
        else:
            self._task.cancel()

    def reap(self) -> None:
        """After ``_end``: wait (bounded) for the session's cleanup, kill the process if it
        still runs, and wait for the loop's thread to end. Never on the loop's own thread."""
        if self._loop.on_thread():
            return
        self._loop.join(_CLOSE_WAIT)
        if self._process is not None:
            self._process.kill()

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
            # Not asyncio.wait_for: it waits for the cancelled request to finish, and a
            # request blocked on a server that stopped reading its stdin does not.
            task = asyncio.ensure_future(make(self._client))
            done, _ = await asyncio.wait({task}, timeout=deadline)
            if not done:
                # What it ends with later is nobody's: taken here, not logged as never read.
                task.add_done_callback(lambda t: t.cancelled() or t.exception())
                task.cancel()
                raise McpFailure(
                    f"the server did not answer within {deadline:.3g} s; the host cancelled "
                    "the request"
                )
            return task.result()

        try:
            running = self._loop.submit(run())
        except RuntimeError:  # the loop closed since the status was read: it ended
            result.set_exception(McpFailure(f"the server is ended: {self.problem}"))
            return result

        def done(future: Future[T]) -> None:
            if result.done():  # the caller gave up on it (cancelled): nobody to tell
                return
            if future.cancelled():
                result.set_exception(McpFailure("cancelled"))
                return
            error = future.exception()
            if error is None:
                result.set_result(future.result())
                return
            if _closed(error) and self._gone is not None:
                error = McpFailure(self._gone)  # the cause, not the SDK's "Connection closed"
            reason = error if isinstance(error, McpFailure) else McpFailure(_describe(error))
            result.set_exception(reason)
            if _closed(error) or self._gone is not None:
                self._end(f"the server closed the connection ({_describe(error)})")

        running.add_done_callback(done)
        result.add_done_callback(lambda f: running.cancel() if f.cancelled() else None)
        return result

    def call(self, make: Callable[[Any], Awaitable[T]], timeout: float | None = None) -> T:
        """``request``, waited for here (never on the session's own thread)."""
        if self._loop.on_thread():
            raise UsageError("[lineup] an MCP request cannot wait on its own loop's thread")
        deadline = self.timeout if timeout is None else timeout
        future = self.request(make, timeout)
        try:
            # The request's own deadline ends it first; this one only if the loop is stuck.
            return future.result(deadline + 1)
        except FutureTimeout:
            future.cancel()
            raise McpFailure(
                f"the server did not answer within {deadline:.3g} s, and its connection's loop "
                "did not either; the host gave up on the request"
            ) from None

    def close(self) -> None:
        self._user_closed = True
        closing = self._closing
        if closing is not None and self.status == "ready":
            with contextlib.suppress(RuntimeError):  # the loop is closed already
                self._loop.loop.call_soon_threadsafe(closing.set)
            with contextlib.suppress(Exception):
                self._session.result(_CLOSE_WAIT)
        self._end("closed by the user")
        self.reap()


def json_of(model: Any, *, max_bytes: int) -> dict[str, Any]:
    """A result the SDK parsed, as the JSON the host keeps and sends on, held to H2 (the
    same rule as a LineUp message): a NaN, 1e999 or an integer past 2^53-1 is refused with
    its path, never turned into null or another number on the way to the app. Over stdio
    the line was checked already; over HTTP and in-process this is the check."""
    from pydantic_core import to_json

    text = to_json(model, by_alias=True, exclude_none=True, inf_nan_mode="constants")
    try:
        value = loads(text, max_bytes=max_bytes)
    except ProtocolError as error:
        raise McpFailure(
            f"the server's answer was refused: {error.path}: {error.message} ({error.rule})"
        ) from None
    if not isinstance(value, dict):
        raise McpFailure("the server's answer was refused: it is no JSON object")
    return value


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
    if type(error).__name__ == "MCPError":  # a JSON-RPC error: its message says it all
        return text[:500]
    return f"{type(error).__name__}: {text}"[:500]
