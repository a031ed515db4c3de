"""An MCP server's process over stdio, held to what the host allows (docs/mcp-apps.md, Limits).

The SDK's own stdio client reads a line however long it is, keeps all of stderr, logs a
traceback for each line it cannot parse and leaves the session ``ready`` when the process
exits. This transport yields the same two streams, so the SDK's session runs over it
unchanged, and holds the server to the rules an agent process is held to (H2, H44):

- a stdout line longer than ``MAX_LINE_BYTES`` is let go of while it is read, never held
  whole: the request it answers fails with its size (its id is read from its first bytes);
- every line is strict I-JSON (H2: no NaN, 1e999, integer past 2^53-1, lone surrogate, more
  than 64 levels): an answer that breaks it reaches its request as an error that says what
  was wrong and where; any other line that is no JSON-RPC message is counted (one problem
  and its count, ``on_refused``), never logged line by line;
- of stderr, the last ``STDERR_TAIL_BYTES`` are kept, in memory;
- at most ``MAX_SERVER_REQUESTS`` of the server's own requests wait for the client at once;
  one more is answered with an error at once;
- the end of stdout (the process exited, or closed it) ends the connection at once, with the
  exit code (``on_gone``);
- stopping closes stdin, then sends SIGTERM to the process's group, then SIGKILL, each after
  a bounded wait; ``kill`` does the last from any thread, for a loop that stopped first.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from anyio.abc import Process

from ..protocol._errors import ProtocolError
from ..protocol._json import loads

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_SERVER_REQUESTS",
    "MAX_TOOLS",
    "STDERR_TAIL_BYTES",
    "StdioProcess",
]

MAX_LINE_BYTES = 8 * 1024 * 1024  # one JSON-RPC message from the server, at most
STDERR_TAIL_BYTES = 16 * 1024  # of the server's stderr kept, for the reason it ended
MAX_SERVER_REQUESTS = 16  # the server's requests waiting for the client at once
MAX_TOOLS = 1000  # tools one server may list; more and it is refused (each is a capability)
STOP_GRACE = 2.0  # seconds after stdin closes, then after SIGTERM, before the next step
_CHUNK = 64 * 1024
_HEAD = 256  # bytes of an over-long line kept: its "id" comes first, as the SDK writes it
_HEAD_ID = re.compile(
    rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,100}")\s*,'
)
_POLL = 0.01  # seconds between looks at the exit code while waiting for it


class StdioProcess:
    """One server process and its pipes, as an SDK transport (``streams``); what it learnt of
    the server (``tail``, ``gone``) stays readable after the streams closed."""

    def __init__(
        self,
        command: str,
        args: list[str],
        *,
        env: dict[str, str],
        cwd: str | os.PathLike[str] | None,
        on_gone: Callable[[str], None],
        on_refused: Callable[[str, str], None],
    ) -> None:
        self._argv = [command, *args]
        self._env = env
        self._cwd = cwd
        self._on_gone = on_gone
        self._on_refused = on_refused
        self._tail = bytearray()
        self._process: Process | None = None
        self.pid: int | None = None
        self.gone: str | None = None  # why the server is gone, once it is
        self._waiting: set[Any] = set()  # ids of the server's requests the client owes

    # ---- what it learnt ---------------------------------------------------------------

    def tail(self) -> str:
        """The end of what the server wrote to stderr (at most STDERR_TAIL_BYTES)."""
        return bytes(self._tail).decode("utf-8", "replace").strip()

    def _went(self, reason: str) -> None:
        if self.gone is None:
            self.gone = reason
            self._on_gone(reason)

    # ---- the transport ----------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def streams(self) -> AsyncIterator[tuple[Any, Any]]:
        from mcp.shared.message import SessionMessage

        process = await anyio.open_process(
            self._argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self._cwd,
            env=self._env,
            start_new_session=True,  # its own group: SIGTERM and SIGKILL reach its children
        )
        self._process = process
        self.pid = process.pid
        to_session, from_server = anyio.create_memory_object_stream[Any](0)
        to_server, from_session = anyio.create_memory_object_stream[SessionMessage](0)
        stdin_lock = anyio.Lock()

        async def send(message: Any) -> None:
            data = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
            async with stdin_lock:
                await process.stdin.send(data.encode())  # type: ignore[union-attr]

        async def read_stdout() -> None:
            buffer = bytearray()
            skipped = 0  # bytes of a line over MAX_LINE_BYTES let go so far (0: none)
            head = b""  # the start of that line: which request it answers, perhaps
            stdout = process.stdout
            assert stdout is not None
            async with to_session:
                while True:
                    try:
                        chunk = await stdout.receive(_CHUNK)
                    except (
                        anyio.EndOfStream,
                        anyio.ClosedResourceError,
                        anyio.BrokenResourceError,
                    ):
                        break
                    start = 0
                    while (end := chunk.find(b"\n", start)) >= 0:
                        if skipped:
                            await self._too_long(head, skipped + end - start, to_session)
                            skipped = 0
                        else:
                            buffer += chunk[start:end]
                            line, buffer = bytes(buffer), bytearray()
                            await self._deliver(line, to_session, send)
                        start = end + 1
                    if skipped:
                        skipped += len(chunk) - start
                    else:
                        buffer += chunk[start:]
                        if len(buffer) > MAX_LINE_BYTES:  # let go of it as it comes
                            head, skipped, buffer = bytes(buffer[:_HEAD]), len(buffer), bytearray()
                self._went(await self._exit_reason(process))

        async def read_stderr() -> None:
            stderr = process.stderr
            assert stderr is not None
            with contextlib.suppress(
                anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
            ):
                while True:
                    self._tail += await stderr.receive(_CHUNK)
                    del self._tail[:-STDERR_TAIL_BYTES]

        async def write_stdin() -> None:
            # A stdin that broke (the process is ending) is not the end: what the server
            # wrote before it went is still read, and its stdout's end says why it went.
            broken = False
            async with from_session:
                async for session_message in from_session:
                    message = session_message.message
                    if not hasattr(message, "method"):  # an answer to a server's request
                        self._waiting.discard(getattr(message, "id", None))
                    if broken:
                        continue
                    try:
                        await send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                        broken = True

        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(read_stdout)
                tasks.start_soon(read_stderr)
                tasks.start_soon(write_stdin)
                try:
                    yield from_server, to_server
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._stop(process)
                    tasks.cancel_scope.cancel()
        finally:
            self.kill()  # a stop cut short (the loop ended under it) still ends the process

    async def _deliver(self, line: bytes, to_session: Any, send: Any) -> None:
        """One line of stdout to the session, or refused with its reason."""
        import mcp_types as types
        from mcp.shared.message import SessionMessage
        from pydantic import ValidationError

        if not line.strip():
            return
        value: Any = None  # the line parsed, once it is (its faults are in the parsed value)
        try:
            value = loads(line, max_bytes=MAX_LINE_BYTES)
            listed = _listed_tools(value)
            if listed > MAX_TOOLS:  # before the SDK makes a model of each one
                raise ProtocolError(
                    "too_large",
                    "H44",
                    "$.result.tools",
                    f"it lists {listed} tools, over this host's {MAX_TOOLS}",
                )
            message = types.jsonrpc_message_adapter.validate_python(value, by_name=False)
        except ProtocolError as error:
            reason = f"{error.path}: {error.message} ({error.rule})"
        except ValidationError as error:
            first = error.errors()[0]
            where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
            reason = f"{where}: {first['msg']} (not a JSON-RPC message)"
        else:
            if isinstance(message, types.JSONRPCRequest):
                if len(self._waiting) >= MAX_SERVER_REQUESTS:
                    with contextlib.suppress(
                        anyio.ClosedResourceError, anyio.BrokenResourceError, OSError
                    ):  # a stdin that broke: the process is ending, its stdout says why
                        await send(_error(message.id, _too_many()))
                    self._on_refused(_too_many(), f"refused: {message.method[:100]!r}")
                    return
                self._waiting.add(message.id)
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await to_session.send(SessionMessage(message))
            return
        if value is None:  # not I-JSON: which tools are at fault, perhaps (one more parse)
            kept = self._without_bad_tools(line)
            if kept is not None:  # a listing whose only faults are in some tools: those refused
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await to_session.send(SessionMessage(kept))
                return
        answered = _answered_id(value if value is not None else _lenient(line))
        if answered is not None:  # an answer to one of our requests: that request fails so
            await self._refuse_answer(answered, reason, to_session)
            return
        self._on_refused(
            "the server wrote lines that are no JSON-RPC messages (counted, not logged)",
            f"the first of this run: {reason}"[:1000],
        )

    def _without_bad_tools(self, line: bytes) -> Any:
        """A tools/list answer that broke H2 only in some of its tools (a schema 200 levels
        deep): the answer without them, each refused on record (``on_refused``); None when
        the fault is elsewhere."""
        import mcp_types as types
        from pydantic import ValidationError

        value = _lenient(line)
        result = value.get("result") if isinstance(value, dict) else None
        tools = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(result, dict) or not isinstance(tools, list) or len(tools) > MAX_TOOLS:
            return None
        kept = []
        for tool in tools:
            try:
                loads(json.dumps(tool), max_bytes=MAX_LINE_BYTES)
            except (ProtocolError, ValueError, RecursionError) as error:
                name = tool.get("name") if isinstance(tool, dict) else None
                why = (
                    f"{error.path}: {error.message}" if isinstance(error, ProtocolError) else error
                )
                self._on_refused(
                    "a tool was refused: its listing breaks H2 (the other tools stand)",
                    f"the tool {str(name)[:100]!r}: {str(why)[:500]}",
                )
            else:
                kept.append(tool)
        if len(kept) == len(tools):
            return None
        result["tools"] = kept
        try:
            return types.jsonrpc_message_adapter.validate_python(
                loads(json.dumps(value), max_bytes=MAX_LINE_BYTES), by_name=False
            )
        except (ProtocolError, ValidationError, ValueError, RecursionError):
            return None

    async def _too_long(self, head: bytes, size: int, to_session: Any) -> None:
        """A line over MAX_LINE_BYTES, let go of while it was read: the request it answers
        fails with its size; a line that answers none is counted."""
        reason = (
            f"it is {size} bytes, over this host's {MAX_LINE_BYTES} for one message; "
            "it was refused while it was read, never held"
        )
        found = _HEAD_ID.match(head)
        if found is None:
            self._on_refused(
                "the server wrote lines that are no JSON-RPC messages (counted, not logged)",
                f"the first of this run: a line that {reason[3:]}",
            )
            return
        await self._refuse_answer(json.loads(found.group(1)), reason, to_session)

    async def _refuse_answer(self, request_id: int | str, reason: str, to_session: Any) -> None:
        """The server's answer to ``request_id`` broke a rule: that request fails, saying so."""
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        refused = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(
                code=types.INVALID_REQUEST, message=f"the server's answer was refused: {reason}"
            ),
        )
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await to_session.send(SessionMessage(refused))

    async def _exit_reason(self, process: Process) -> str:
        """Its stdout ended: the exit code, once the process is gone (a moment, at most)."""
        with anyio.move_on_after(STOP_GRACE):
            while process.returncode is None:
                await anyio.sleep(_POLL)
        code = process.returncode
        if code is None:
            return "the server closed its stdout"
        if code < 0:
            return f"the server's process was ended by signal {-code} ({_signal_name(-code)})"
        return f"the server's process exited with code {code}"

    async def _stop(self, process: Process) -> None:
        """Close stdin, then SIGTERM the group, then SIGKILL, each after a bounded wait."""
        if process.stdin is not None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await process.stdin.aclose()
        for sent in (None, signal.SIGTERM, getattr(signal, "SIGKILL", signal.SIGTERM)):
            if sent is not None:
                self._signal(sent)
            with anyio.move_on_after(STOP_GRACE):
                while process.returncode is None:
                    await anyio.sleep(_POLL)
            if process.returncode is not None:
                break
        # Its pipes and the loop's transport for it closed now, not when collected (by then
        # the loop may be closed: "Event loop is closed" on the kernel's stderr).
        with anyio.move_on_after(STOP_GRACE), contextlib.suppress(Exception):
            await process.aclose()
        # anyio's aclose leaves asyncio's transport open while a pipe end lives on; nothing
        # public reaches it (the SDK's stdio client walks the same attributes).
        transport = getattr(getattr(process, "_process", None), "_transport", None)
        close = getattr(transport, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()

    def _signal(self, sent: int) -> None:
        pid = self.pid
        if pid is None or (self._process is not None and self._process.returncode is not None):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            if sys.platform == "win32":  # pragma: no cover
                os.kill(pid, sent)
            else:
                os.killpg(pid, sent)  # its group: start_new_session made pid its id

    def kill(self) -> None:
        """SIGKILL the process's group now, from any thread (a stop the loop cut short)."""
        self._signal(getattr(signal, "SIGKILL", signal.SIGTERM))


def _listed_tools(value: Any) -> int:
    """How many tools an answer lists (0 for any other message)."""
    result = value.get("result") if isinstance(value, dict) else None
    tools = result.get("tools") if isinstance(result, dict) else None
    return len(tools) if isinstance(tools, list) else 0


def _too_many() -> str:
    return (
        f"the server sent more than {MAX_SERVER_REQUESTS} requests the client had not answered "
        "yet; the host answered the next with an error"
    )


def _error(request_id: Any, message: str) -> Any:
    import mcp_types as types

    return types.JSONRPCError(
        jsonrpc="2.0",
        id=request_id,
        error=types.ErrorData(code=types.INTERNAL_ERROR, message=message),
    )


def _lenient(line: bytes) -> Any:
    """A line that broke H2, parsed as Python's json module reads it (NaN, a lone surrogate
    and 300 levels included), or None when it is no JSON at all."""
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _answered_id(value: Any) -> int | str | None:
    """The id of a message that answers a request (an id, no method): the message broke a
    rule, but which request it answers may still be plain."""
    if not isinstance(value, dict) or "method" in value:
        return None
    found = value.get("id")
    if isinstance(found, bool) or not isinstance(found, (int, str)):
        return None
    return found


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown"
