"""Test an agent with pytest and no browser: a headless host and a user who follows a script.

    import sys
    from lineup_jupyter.testing import ScriptedUser

    def test_my_agent():
        with ScriptedUser() as user:
            user.connect_process([sys.executable, "my_agent.py"], agent_id="agent_me")
            opened = user.expect("ui.open")                  # what the agent sent, or fail
            user.click(opened["payload"]["instance_id"], "clicked", {"n": 1})
            user.expect("ui.patch", instance_id=opened["payload"]["instance_id"])
            question = user.expect("component.show", kind="confirm")
            user.answer(question["payload"]["component_id"], True)

The host is a real ``Host`` in a temporary data dir (its audit, app registry and artifacts
never touch the user's home). ``expect`` waits (``timeout`` seconds, a guard, not a measure)
for the next envelope of a type the agent sent and the host accepted, and fails with what did
arrive instead; each envelope is matched once. The user's acts (``click``, ``answer``,
``allow``...) are the calls the widget makes, and raise the host's refusal (a ProtocolError,
or a UsageError for a decision), which fails the test.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import tempfile
import time
import typing

from .agents import _memory, _stdio
from .host import _host
from .protocol import _errors, rules
from .runtime._threads import running_loop as _running_loop

# Only the names in __all__ are public here (tests/public/test_public_api.py).
if typing.TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from .agents._agent import Agent
    from .agents._listener import WebSocketListener
    from .agents._memory import OutsideAgent
    from .agents._stdio import ProcessAgent
    from .agents._websocket import WebSocketAgent
    from .core._bus import Record

__all__ = ["ScriptedModel", "ScriptedUser"]


class ScriptedModel:
    """A stand-in for a tool-calling LLM, for ``agent.tool_loop(model, messages)``: each call
    returns the next step of ``steps``, an assistant message
    (``{"content": ..., "tool_calls": [{"id", "name", "arguments"}]}``) or a function of the
    conversation so far that returns one (to use what a tool gave back). ``calls`` keeps what
    it was asked: the messages and the tool definitions of each call."""

    def __init__(self, steps: Sequence[dict[str, Any] | Callable[[list[dict[str, Any]]], Any]]):
        self._steps = list(steps)
        self.calls: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> dict[str, Any]:
        self.calls.append((list(messages), tools))
        if not self._steps:
            return {"content": "(the script is over)"}
        step = self._steps.pop(0)
        reply: dict[str, Any] = step(messages) if callable(step) else step
        return reply


_POLL = 0.005  # seconds between two looks at the history while waiting
_SHOWN = 20  # envelopes listed when an expectation fails
_NAMES = ("instance_id", "component_id", "call_id", "kind", "event", "code", "status")


class ScriptedUser:
    """A headless host (``.host``) and the user in front of it, for tests."""

    def __init__(
        self,
        conversation_id: str = "conv_test",
        *,
        timeout: float = 30.0,
        data_dir: str | os.PathLike[str] | None = None,
        **host_options: Any,
    ) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="lineup-test-")
            data_dir = self._tmp.name
        root = pathlib.Path(data_dir)
        host_options.setdefault("artifacts_dir", root / "artifacts")
        host_options.setdefault("history_size", 10_000)  # a test reads back far
        self.host = _host.Host(conversation_id, data_dir=root, **host_options)
        self.timeout = timeout
        self._matched: set[int] = set()  # seq of every record an expect returned

    # ---- agents ------------------------------------------------------------------------

    def connect_agent(self, agent_id: str) -> Agent:
        """An in-kernel agent of this host."""
        return self.host.connect_agent(agent_id)

    def connect_process(
        self, argv: Sequence[str | os.PathLike[str]], **options: Any
    ) -> ProcessAgent:
        """Start an agent process (``host.connect_process``); it is closed with the user."""
        return self.host.connect_process(argv, **options)

    def connect_websocket(self, url: str, **options: Any) -> WebSocketAgent:
        """Connect to an agent's WebSocket (``host.connect_websocket``); closed with the user."""
        return self.host.connect_websocket(url, **options)

    def listen_websocket(self, port: int = 0, **options: Any) -> WebSocketListener:
        """Listen for agents (``host.listen_websocket``); closed with the user."""
        return self.host.listen_websocket(port, **options)

    def connect_memory(self, agent_id: str | None = None) -> OutsideAgent:
        """An agent outside the kernel with no process or socket: returns its end, which
        the test drives (``send`` an envelope, ``receive`` or ``expect`` what the host sent
        it, ``leave``); ``.session`` is the host's end, in ``host.remote_agents``, checked
        and bounded like a process (H41, H42). Closed with the user."""
        return _memory.connect_memory(_host.session_port(self.host), agent_id=agent_id)

    # ---- what the agent did --------------------------------------------------------------

    def expect(self, type_: str, *, timeout: float | None = None, **fields: Any) -> dict[str, Any]:
        """The next envelope of ``type_`` (``ui.open`` or the full name) that the agent sent
        and the host accepted, with these payload fields; waits for it, then fails the test
        listing what came instead."""
        return self._expect("to_client", type_, timeout, fields)

    def expect_to_agent(
        self, type_: str, *, timeout: float | None = None, **fields: Any
    ) -> dict[str, Any]:
        """The next envelope of ``type_`` the host sent to the agents (``error``,
        ``component.answer``, ``app.result``...), with these payload fields."""
        return self._expect("to_agent", type_, timeout, fields)

    async def expect_async(
        self, type_: str, *, timeout: float | None = None, **fields: Any
    ) -> dict[str, Any]:
        """``expect`` for a notebook cell (``await user.expect_async(...)``): it waits on the
        kernel's event loop, which delivers what the agents send meanwhile."""
        return await self._expect_async("to_client", type_, timeout, fields)

    async def expect_to_agent_async(
        self, type_: str, *, timeout: float | None = None, **fields: Any
    ) -> dict[str, Any]:
        """``expect_to_agent`` for a notebook cell."""
        return await self._expect_async("to_agent", type_, timeout, fields)

    def wait_for(
        self, condition: Callable[[], object], what: str, *, timeout: float | None = None
    ) -> None:
        """Wait until ``condition()`` is true (an agent exited, wrote to stderr...), or fail
        the test saying ``what`` was awaited."""
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while not condition():
            if time.monotonic() >= deadline:
                raise AssertionError(f"[lineup] waited {wait} s for {what}; it did not happen")
            time.sleep(_POLL)

    async def wait_for_async(
        self, condition: Callable[[], object], what: str, *, timeout: float | None = None
    ) -> None:
        """``wait_for`` for a notebook cell."""
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while not condition():
            if time.monotonic() >= deadline:
                raise AssertionError(f"[lineup] waited {wait} s for {what}; it did not happen")
            await asyncio.sleep(_POLL)

    def sent(self) -> list[dict[str, Any]]:
        """Every envelope the agents sent that the host accepted, oldest first."""
        return [r.envelope for r in self.host.history if _is(r, "to_client")]

    def refused(self) -> list[dict[str, Any]]:
        """The error payload of every agent message the host refused, oldest first."""
        return [
            r.error
            for r in self.host.history
            if r.direction == "to_client" and r.kind == "refused" and r.error is not None
        ]

    # ---- what the user does ----------------------------------------------------------

    def click(self, instance_id: str, event: str, data: dict[str, Any] | None = None) -> None:
        """The surface ``instance_id`` sends ``event`` with ``data``, as a click in it would."""
        self.host.user_event(instance_id, event, data)

    def answer(self, component_id: str, value: Any) -> None:
        """Answer a question: option ids for a choice, True/False for a confirm, the input."""
        self.host.answer(component_id, "answered", value)

    def cancel(self, component_id: str) -> None:
        """Cancel a question (its Cancel button)."""
        self.host.answer(component_id, "cancelled")

    def close_surface(self, instance_id: str) -> None:
        """Close a surface with the host's close button (the agent hears ui.event 'close')."""
        self.host.user_close(instance_id)

    def allow(
        self, call_id: str, *, remember: bool = False, typed_name: str | None = None
    ) -> dict[str, Any]:
        """Allow a waiting app.call; returns the app.result payload the agent got."""
        return self.host.decide(call_id, "allow", remember=remember, typed_name=typed_name)

    def deny(self, call_id: str) -> dict[str, Any]:
        """Deny a waiting app.call; returns the app.result payload the agent got."""
        return self.host.decide(call_id, "deny")

    # ---- the end -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the host (every agent and listener it started), then remove the data dir."""
        self.host.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> ScriptedUser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- inside ------------------------------------------------------------------------

    def _expect(
        self, direction: str, type_: str, timeout: float | None, fields: Mapping[str, Any]
    ) -> dict[str, Any]:
        full = type_ if type_.startswith(rules.TYPE_PREFIX) else rules.TYPE_PREFIX + type_
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while (found := self._match(direction, full, fields)) is None:
            if time.monotonic() >= deadline:
                raise AssertionError(self._missing(direction, full, fields, wait))
            if _running_loop() is not None:
                raise _errors.UsageError(
                    "[lineup] ScriptedUser.expect waits for envelopes that the kernel's event "
                    "loop delivers, so it cannot wait on that loop: in a notebook cell, "
                    "`await user.expect_async(...)`."
                )
            time.sleep(_POLL)
        return found

    async def _expect_async(
        self, direction: str, type_: str, timeout: float | None, fields: Mapping[str, Any]
    ) -> dict[str, Any]:
        full = type_ if type_.startswith(rules.TYPE_PREFIX) else rules.TYPE_PREFIX + type_
        wait = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        while (found := self._match(direction, full, fields)) is None:
            if time.monotonic() >= deadline:
                raise AssertionError(self._missing(direction, full, fields, wait))
            await asyncio.sleep(_POLL)  # the loop delivers what the agents send meanwhile
        return found

    def _match(self, direction: str, full: str, fields: Mapping[str, Any]) -> dict[str, Any] | None:
        """The oldest envelope not matched before that matches, marked as matched."""
        for record in self.host.history:
            if record.seq in self._matched or not _is(record, direction):
                continue
            envelope = record.envelope
            payload = envelope.get("payload", {})
            if envelope.get("type") == full and all(
                payload.get(name) == value for name, value in fields.items()
            ):
                self._matched.add(record.seq)
                return envelope
        return None

    def _missing(self, direction: str, full: str, fields: Mapping[str, Any], wait: float) -> str:
        wanted = full + "".join(f" {name}={value!r}" for name, value in fields.items())
        who = "the agent sent" if direction == "to_client" else "the host sent to agents"
        came = [_summary(r) for r in self.host.history if r.direction == direction]
        lines = [f"[lineup] expected {wanted} within {wait} s; it did not come."]
        lines.append(f"What {who} (oldest first, {len(came)} in all):")
        lines += [f"  {line}" for line in came[-_SHOWN:]] or ["  nothing"]
        for agent in self.host.remote_agents:
            lines.append(f"{agent!r}")
            if isinstance(agent, _stdio.ProcessAgent) and agent.stderr_tail.strip():
                tail = agent.stderr_tail.strip().splitlines()[-10:]
                lines += ["  its stderr ends:", *(f"    {line}" for line in tail)]
        return "\n".join(lines)


def _is(record: Record, direction: str) -> bool:
    return record.direction == direction and record.kind == "envelope"


def _summary(record: Record) -> str:
    envelope = record.envelope
    kind = str(envelope.get("type", "?")).removeprefix(rules.TYPE_PREFIX)
    payload = envelope.get("payload")
    names = payload if isinstance(payload, dict) else {}
    shown = ", ".join(f"{name}={names[name]!r}" for name in _NAMES if name in names)
    if record.kind == "refused" and record.error is not None:
        error = record.error
        return f"REFUSED {kind} [{error.get('rule')} {error.get('code')}] {error.get('message')}"
    return f"{kind} {shown}".rstrip()
