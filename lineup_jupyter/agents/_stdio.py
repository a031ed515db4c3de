"""An agent process speaking lineup.v1 as JSON lines on its stdin and stdout (H40).

One envelope per line each way: UTF-8 JSON, ended by ``\\n`` (``\\r\\n`` is taken too; blank
lines are skipped). Each line goes to ``Host.receive`` as the bytes it was, so a line that is
not JSON, or breaks a rule, is refused exactly as an in-kernel message is. A line longer than
the host's message limit is refused while it is skipped, never held whole (H2). What the agent
writes to stderr is kept (the last ``STDERR_BYTES``) for the report when it exits or crashes.
Three daemon threads per process: stdout, stderr, and the writer of stdin (``_transport.Writer``).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shlex
import subprocess
import threading
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import IO

from ..protocol._errors import ProtocolError, UsageError
from ._remote import RemoteAgent, SessionHost
from ._transport import Gate, Sink, Writer

__all__ = ["ProcessAgent", "ProcessTransport"]

logger = logging.getLogger("lineup_jupyter")

STDERR_BYTES = 16 * 1024  # of the agent's stderr kept for reports
_SKIP = 64 * 1024  # bytes read at a time while skipping a line over the limit
_EXTRA_ENV = {
    # A Python agent's stdout is block-buffered on a pipe: without this its envelopes sit
    # in its buffer until it fills. And its stdout must be UTF-8 whatever the locale.
    "PYTHONUNBUFFERED": "1",
    "PYTHONIOENCODING": "utf-8",
}

_RUNNING: weakref.WeakSet[ProcessTransport] = weakref.WeakSet()  # for the kernel's exit


class ProcessTransport:
    """A child process as a transport (``_transport.Transport``): JSON lines on its stdin
    and stdout, its stderr kept for the report when it exits."""

    def __init__(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        max_bytes: int,
    ) -> None:
        if isinstance(argv, (str, bytes)):
            raise UsageError(
                f"[lineup] connect_process takes the command as a list, like "
                f"['python', 'my_agent.py'], not the string {argv!r} (shlex.split makes one)"
            )
        self.argv = [os.fspath(part) for part in argv]
        if not self.argv:
            raise UsageError("[lineup] connect_process needs a command to run")
        self.describe = f"process {shlex.join(self.argv)!r}"
        self._cwd = cwd
        self._env = {**os.environ, **_EXTRA_ENV, **(env or {})}
        self._max_bytes = max_bytes
        self._closed = False
        self._gate = Gate()
        self._tail = bytearray()
        self._tail_lock = threading.Lock()

    def start(self, sink: Sink) -> None:
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd,
                env=self._env,
            )
        except (OSError, ValueError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise UsageError(f"[lineup] could not start {shlex.join(self.argv)}: {why}") from None
        _RUNNING.add(self)
        name = self.argv[0]
        self._stderr = threading.Thread(
            target=self._read_stderr, name=f"lineup stderr of {name}", daemon=True
        )
        self._stderr.start()
        self._writer = Writer(f"lineup stdin of {name}", self._write)
        sink.opened()  # before the first line is read: the inventory goes first (C1)
        self._reader = threading.Thread(
            target=self._read_stdout, args=(sink,), name=f"lineup stdout of {name}", daemon=True
        )
        self._reader.start()

    def send(self, text: str) -> bool:
        return self._writer.put(text)

    def pause_reading(self) -> None:
        self._gate.pause()

    def resume_reading(self) -> None:
        self._gate.resume()

    def hang_up(self, why: str, *, refused: bool = False) -> None:
        if refused:  # the refusal is written first
            self._writer.end(self.terminate)
        else:
            self._writer.stop()
            self.terminate()

    def close(self) -> None:
        self._closed = True
        self._writer.stop()
        self._gate.resume()  # a paused reader sees the close
        self.terminate()

    def terminate(self) -> None:
        """Terminate the process, and kill it 2 s later if it is still there; never waits
        (this also runs from the bus: an agent that stopped reading, H42)."""
        if self._process.poll() is None:
            self._process.terminate()
            threading.Thread(
                target=self._kill_later, args=(2.0,), name="lineup kill", daemon=True
            ).start()

    def wait(self, timeout: float) -> None:
        """Wait for the process to end, killing it after ``timeout`` s."""
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(timeout)  # it releases the pipes once the process is gone

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stderr_tail(self) -> str:
        with self._tail_lock:
            tail = bytes(self._tail)
        return tail.decode("utf-8", "replace")

    def _kill_later(self, timeout: float) -> None:
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._process.kill()

    def _write(self, text: str) -> None:
        stdin = self._process.stdin
        assert stdin is not None  # Popen(stdin=PIPE)
        stdin.write(text.encode("utf-8") + b"\n")
        stdin.flush()

    def _read_stdout(self, sink: Sink) -> None:
        stdout = self._process.stdout
        assert stdout is not None  # Popen(stdout=PIPE)
        limit = self._max_bytes
        for line in _lines(stdout, limit):
            self._gate.wait()  # the session has no room: the agent waits on its pipe
            if self._closed:
                break  # closed by the host: the process is being terminated
            if isinstance(line, int):
                error = ProtocolError(
                    "too_large",
                    "H2",
                    "$",
                    f"the message is {line} bytes; the limit is {limit}. The line was skipped "
                    "unread (one envelope per line, H40).",
                )
                sink.refused(f"<a line of {line} bytes>", error)
            elif line.strip():
                sink.message(line)
            # a blank line: nothing to say
        code = self._process.wait()
        self._stderr.join(1.0)  # the report quotes the complete tail
        self._release_pipes()
        how = f"was stopped by signal {-code}" if code < 0 else f"exited with code {code}"
        tail = self.stderr_tail.strip()
        if tail:
            lines = tail.splitlines()[-10:]
            how += "; the end of its stderr:\n" + "\n".join(f"    {line}" for line in lines)
        sink.lost(how, final=True, clean=code == 0)

    def _read_stderr(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None  # Popen(stderr=PIPE)
        while chunk := os.read(stderr.fileno(), 4096):  # what is there, not a full buffer
            with self._tail_lock:
                self._tail += chunk
                if len(self._tail) > STDERR_BYTES:
                    del self._tail[: len(self._tail) - STDERR_BYTES]
        stderr.close()

    def _release_pipes(self) -> None:
        self._writer.stop()
        self._writer.join(1.0)  # a write blocked on the dead process fails at once
        for pipe in (self._process.stdin, self._process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):  # flushing into a process that is gone
                    pipe.close()


class ProcessAgent(RemoteAgent):
    """An agent running as a child process, made by ``host.connect_process(argv)``: the
    session (``RemoteAgent``) over a ``ProcessTransport``, with what only a process has.

    ``returncode`` says how it exited, ``pid`` which it is, ``stderr_tail`` the end of its
    stderr; ``close()`` terminates it (and kills it if it does not end).
    """

    def __init__(
        self,
        host: SessionHost,
        argv: Sequence[str | os.PathLike[str]],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        agent_id: str | None = None,
    ) -> None:
        self._process = ProcessTransport(
            argv, cwd=cwd, env=env, max_bytes=host.limits.max_message_bytes
        )
        self.argv = self._process.argv
        super().__init__(host, self._process, agent_id=agent_id)

    @property
    def returncode(self) -> int | None:
        """The exit code once the process ended (negative: killed by that signal), else None."""
        return self._process.returncode

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def stderr_tail(self) -> str:
        """The last lines the agent wrote to stderr (at most ``STDERR_BYTES`` bytes of it)."""
        return self._process.stderr_tail

    def close(self, timeout: float = 2.0) -> None:
        """Terminate the agent's process, and kill it if it has not ended ``timeout`` s later."""
        super().close()
        self._process.wait(timeout)

    def __repr__(self) -> str:
        return (
            f"ProcessAgent(agent_id={self.agent_id!r}, argv={self.argv!r}, "
            f"status={self.status!r}, returncode={self.returncode!r})"
        )


@atexit.register
def _terminate_all() -> None:
    """A kernel that exits takes its agent processes with it (terminate: a well-behaved agent
    also ends by itself when its stdin closes)."""
    for process in list(_RUNNING):
        process.terminate()


def _lines(stream: IO[bytes], limit: int) -> Iterator[bytes | int]:
    """Each line without its end; for a line over ``limit`` bytes, its length instead, counted
    while it is skipped (it is never held whole)."""
    while True:
        line = stream.readline(limit + 2)  # a line at the limit, with room for its "\r\n"
        if not line:
            return
        if line.endswith(b"\n") or len(line) < limit + 2:  # the last line may have no end
            yield line.removesuffix(b"\n").removesuffix(b"\r")
            continue
        length = len(line)
        while not line.endswith(b"\n"):
            line = stream.readline(_SKIP)
            if not line:
                break
            length += len(line)
        yield length - 1 if line.endswith(b"\n") else length
