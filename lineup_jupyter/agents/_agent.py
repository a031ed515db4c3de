"""An agent living in the kernel, for notebook users who would rather not write envelopes.

``agent.open(...)``, ``agent.patch(...)``, ``agent.close(...)`` build lineup.v1 envelopes and
hand them to the host exactly as an out-of-process agent's would arrive; handlers registered
with ``agent.on_event`` receive the host's ``ui.event`` messages. ``agent.say(...)`` and the
other standard components (H12) need no bundle at all; the asking ones (``ask_choice``,
``confirm``, ``ask_input``) return a Question to ``await``. A refused call raises the host's
ProtocolError here, because it is the notebook author's own code that needs fixing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from ..appcenter._trust import SigningKey
from ..core._views import views
from ..protocol import bundle_integrity, rules
from ..protocol._envelopes import new_envelope, stamp, utc_now
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._ids import new_id
from ..protocol._validate import readable_id
from ..runtime._pending import Pending
from ..runtime._problems import run_handler
from ..runtime._threads import running_loop
from ._calls import CallHandle, CallResult
from ._tools import Model, ToolStyle, run_tool, tool_definitions, tool_loop

if TYPE_CHECKING:
    from ..core._ports import AgentHost

__all__ = ["Agent", "Question", "SurfaceEvent", "TextStream"]

DEFAULT_APP_ID = "local.notebook.surface"
DEFAULT_APP_VERSION = "0.1.0"


@dataclass(frozen=True)
class SurfaceEvent:
    """A user's action in a surface, as the agent receives it (U8)."""

    instance_id: str
    event: str
    data: dict[str, Any]
    envelope: dict[str, Any]


class Question(Pending[Any]):
    """A question shown to the user (choice, confirm, input): ``await question`` gives the
    answer, or None if it was cancelled. ``status`` is "pending", "answered" or "cancelled".
    """

    def __init__(
        self,
        agent: Agent,
        component_id: str,
        labels: Mapping[str, str] | None,
        *,
        multiple: bool = False,
    ) -> None:
        super().__init__(f"the answer to question {component_id!r}")
        self.component_id = component_id
        self.status = "pending"
        self._agent = agent
        self._labels = labels  # option id -> label, when the options were given as labels
        self._multiple = multiple

    def _answered(self, payload: dict[str, Any]) -> None:
        self.status = payload["status"]
        value = payload.get("value")
        if self._labels is not None and isinstance(value, list):
            value = [self._labels[item] for item in value]
        if isinstance(value, list) and not self._multiple:
            value = value[0]
        self._resolve(value)

    def cancel(self) -> None:
        """Take the question back; the user can no longer answer it, ``await`` gives None."""
        if not self.done():
            self._agent.remove(self.component_id)

    def __repr__(self) -> str:
        return f"Question({self.component_id!r}, status={self.status!r})"


class TextStream:
    """A markdown or text component that grows as the agent writes to it (H45): each
    ``write`` sends only its own text, and the host renders again only the end of the
    Markdown. Made by ``agent.stream(...)``; what was written stays when the block ends."""

    def __init__(self, agent: Agent, component_id: str) -> None:
        self._agent = agent
        self.component_id = component_id

    def write(self, text: str) -> None:
        """Add ``text`` (a token, a line...) to the end of the component."""
        if text:
            self._agent.send("component.append", {"component_id": self.component_id, "text": text})

    def __enter__(self) -> TextStream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None  # nothing to close: the component shows what was written

    def __repr__(self) -> str:
        return f"TextStream({self.component_id!r})"


EventHandler = Callable[[SurfaceEvent], None]
EnvelopeHandler = Callable[[dict[str, Any]], None]
F = TypeVar("F", bound=Callable[..., Any])
InventoryHandlerT = TypeVar("InventoryHandlerT", bound=Callable[[dict[str, Any]], Any])


class Agent:
    """An agent with id ``agent_id`` talking to ``host``. Made by ``host.connect_agent(id)``."""

    def __init__(self, host: AgentHost, agent_id: str) -> None:
        if readable_id(agent_id) is None:
            raise UsageError(f"[lineup] agent id {agent_id!r} must match {rules.ID_PATTERN} (M1)")
        self.id = agent_id
        self.host = host
        self._new_id = new_id
        self._event_handlers: list[tuple[str | None, str | None, EventHandler]] = []
        self._type_handlers: list[tuple[str, EnvelopeHandler]] = []
        # Where an async handler runs when an event arrives on a thread with no loop of its
        # own (an agent outside the kernel delivers on its reader thread): the loop this agent
        # was made on, a notebook's kernel loop.
        self._home_loop = running_loop()
        self.inventory: dict[str, Any] | None = None
        self._inventory_handlers: list[Callable[[dict[str, Any]], Any]] = []
        self._questions: dict[str, Question] = {}
        self.errors: list[dict[str, Any]] = []
        self._calls: dict[str, CallHandle] = {}  # app.call handles waiting for app.result
        # H41: the id is the kernel's from now on (refused if a connection speaks for it)
        self._subscription = host.attach_agent(agent_id, self._dispatch)
        host.send_inventory(to=agent_id)  # C1: the session is set up, tell it what it may use

    # ---- sending -----------------------------------------------------------------

    def send(self, type_: str, payload: dict[str, Any]) -> str:
        """Send one envelope of ``type_`` (short, like ``ui.open``, or full); returns its id.

        Raises ProtocolError if the host refused it.
        """
        full = type_ if type_.startswith(rules.TYPE_PREFIX) else rules.TYPE_PREFIX + type_
        message_id = self._new_id("msg")
        error = self.host.receive(
            new_envelope(
                full,
                payload,
                conversation_id=self.host.conversation_id,
                sender=("agent", self.id),
                message_id=message_id,
            )
        )
        if error is not None:
            raise error
        return message_id

    def open(
        self,
        instance_id: str,
        *,
        html: str,
        css: str = "",
        js: str = "",
        state: dict[str, Any] | None = None,
        app_id: str = DEFAULT_APP_ID,
        version: str = DEFAULT_APP_VERSION,
        name: str | None = None,
        integrity: bool | str = False,
        signature: SigningKey | dict[str, str] | None = None,
    ) -> None:
        """Open (or replace, U1) a surface from an inline bundle.

        ``integrity=True`` computes and sends app.integrity (H4); a string is sent as given.
        ``signature`` (for hosts in strict mode, H37): a SigningKey signs the bundle here; a
        dict is sent as given.
        """
        app: dict[str, Any] = {"id": app_id, "version": version, "html": html, "css": css, "js": js}
        if name is not None:
            app["name"] = name
        if integrity is True:
            app["integrity"] = bundle_integrity(html, css, js)
        elif isinstance(integrity, str):
            app["integrity"] = integrity
        if isinstance(signature, SigningKey):
            app["signature"] = signature.sign(html, css, js)
        elif signature is not None:
            app["signature"] = signature
        self.send(
            "ui.open",
            {"instance_id": instance_id, "app": app, "state": {} if state is None else state},
        )

    def open_app(
        self,
        instance_id: str,
        app_id: str,
        surface: str,
        *,
        state: dict[str, Any] | None = None,
        version: str | None = None,
    ) -> None:
        """Open a surface of an installed app by its id alone (H5, C6)."""
        app: dict[str, Any] = {"id": app_id, "surface": surface}
        if version is not None:
            app["version"] = version
        self.send(
            "ui.open",
            {"instance_id": instance_id, "app": app, "state": {} if state is None else state},
        )

    def patch(self, instance_id: str, state: dict[str, Any], *, merge: bool = False) -> None:
        """Replace the surface's state (or merge into it, RFC 7396, with ``merge=True``)."""
        payload: dict[str, Any] = {"instance_id": instance_id, "state": state}
        if merge:
            payload["merge"] = True
        self.send("ui.patch", payload)

    def close(self, instance_id: str, reason: str = "completed") -> None:
        """Close the surface (U10)."""
        self.send("ui.close", {"instance_id": instance_id, "reason": reason})

    # ---- standard components (H12-H15) ---------------------------------------------

    def show(self, kind: str, component_id: str | None = None, **fields: Any) -> str:
        """Show (or, with a shown ``component_id``, update) a standard component; returns its id.

        ``agent.show("status", state="done", label="Saved")``: the fields of the kind are in
        docs/protocol.md (H12). The helpers below cover each kind.
        """
        component_id = component_id or self._new_id(kind)
        self.send("component.show", {"component_id": component_id, "kind": kind, **fields})
        return component_id

    def say(self, markdown: str, *, component_id: str | None = None) -> str:
        """Show Markdown, rendered and sanitized by the host (H15)."""
        return self.show("markdown", component_id, markdown=markdown)

    def text(self, text: str, *, component_id: str | None = None) -> str:
        """Show plain text, exactly as written."""
        return self.show("text", component_id, text=text)

    def stream(
        self, component_id: str | None = None, *, kind: str = "markdown", text: str = ""
    ) -> TextStream:
        """Show a markdown (or, with ``kind="text"``, plain text) component that grows:
        ``with agent.stream("answer") as s: s.write(token)`` (H45). Each write costs its own
        text, on the wire to the host and from the host to the view."""
        if kind not in ("markdown", "text"):
            raise UsageError(f"[lineup] a stream is markdown or text, not {kind!r} (H45)")
        field = "markdown" if kind == "markdown" else "text"
        return TextStream(self, self.show(kind, component_id, **{field: text}))

    def status(self, label: str, state: str = "working", *, component_id: str | None = None) -> str:
        """Show a status line (state: idle, working, done, failed, warning); pass the returned
        id back as ``component_id`` to update it in place."""
        return self.show("status", component_id, state=state, label=label)

    def progress(
        self,
        value: float | None = None,
        total: float = 1.0,
        *,
        label: str | None = None,
        component_id: str | None = None,
    ) -> str:
        """Show a progress bar (``value`` None: indeterminate); update it by its id."""
        fields: dict[str, Any] = {"total": total}
        if value is not None:
            fields["value"] = value
        if label is not None:
            fields["label"] = label
        return self.show("progress", component_id, **fields)

    def show_error(self, code: str, message: str, *, component_id: str | None = None) -> str:
        """Show an error to the user (code and message)."""
        return self.show("error", component_id, code=code, message=message)

    def remove(self, component_id: str) -> None:
        """Remove a component; a question still open is cancelled (H14)."""
        self.send("component.remove", {"component_id": component_id})

    def ask_choice(
        self,
        prompt: str,
        options: Sequence[str] | Mapping[str, str],
        *,
        multiple: bool = False,
        min_selected: int | None = None,
        max_selected: int | None = None,
        submit_label: str = "Submit",
        cancel_label: str = "Cancel",
        component_id: str | None = None,
    ) -> Question:
        """Ask the user to pick one option (or several, ``multiple=True``).

        ``options`` is a list of labels (the answer is the chosen label, or a list of them) or
        a mapping of option id to label (the answer is the id, or a list of ids).
        """
        if isinstance(options, Mapping):
            pairs, names = list(options.items()), None
        else:
            pairs = [(str(index), label) for index, label in enumerate(options)]
            names = dict(pairs)
        fields: dict[str, Any] = {
            "prompt": prompt,
            "options": [{"id": option, "label": label} for option, label in pairs],
            "multiple": multiple,
            "submit_label": submit_label,
            "cancel_label": cancel_label,
        }
        for name, value in (("min_selected", min_selected), ("max_selected", max_selected)):
            if value is not None:
                fields[name] = value
        return self._ask("choice", component_id, fields, names, multiple=multiple)

    def confirm(
        self,
        prompt: str,
        *,
        confirm_label: str = "Confirm",
        cancel_label: str = "Cancel",
        component_id: str | None = None,
    ) -> Question:
        """Ask yes or no: the answer is True (``confirm_label``) or False (``cancel_label``)."""
        fields = {"prompt": prompt, "confirm_label": confirm_label, "cancel_label": cancel_label}
        return self._ask("confirm", component_id, fields, None)

    def ask_input(
        self, prompt: str, *, component_id: str | None = None, **constraints: Any
    ) -> Question:
        """Ask for a text (or, with ``input_type="number"``, a number).

        Constraints as in HTML forms, checked in the browser and again in the kernel:
        ``placeholder``, ``default``, ``required``, ``min_length``, ``max_length``, ``pattern``
        (a whole-value regular expression), ``min``, ``max``.
        """
        return self._ask("input", component_id, {"prompt": prompt, **constraints}, None)

    def _ask(
        self,
        kind: str,
        component_id: str | None,
        fields: dict[str, Any],
        labels: Mapping[str, str] | None,
        *,
        multiple: bool = False,
    ) -> Question:
        component_id = component_id or self._new_id(kind)
        question = Question(self, component_id, labels, multiple=multiple)
        asked = self._questions.get(component_id)  # a refused re-ask must not orphan it (H13)
        self._questions[component_id] = question  # before sending: the answer may be quick
        try:
            self.show(kind, component_id, **fields)
        except BaseException:
            if asked is None:
                del self._questions[component_id]
            else:
                self._questions[component_id] = asked
            raise
        question.on_first_await = lambda: views().point_to(
            "question", component_id, f"{kind} {fields.get('prompt', '')!r}"[:200], question
        )
        return question

    def call(
        self,
        capability: str,
        arguments: dict[str, Any] | None = None,
        *,
        reason: str,
        expires_in: float = 300.0,
        call_id: str | None = None,
    ) -> CallHandle:
        """Ask the host to run a capability (C9); returns a handle on its one app.result.

        ``await agent.call(...)`` in a cell gives a CallResult once the user (or the policy)
        decided and the capability ran; ``expires_in`` seconds from now it ends ``expired``.
        Reusing a ``call_id`` gets the recorded result again (C12).
        """
        call_id = call_id if call_id is not None else self._new_id("call")
        waiting = self._calls.get(call_id)  # the same call_id sent again while it waits
        handle = waiting or CallHandle(call_id, capability)
        self._calls[call_id] = handle
        expires = utc_now() + timedelta(seconds=expires_in)
        try:
            self.send(
                "app.call",
                {
                    "call_id": call_id,
                    "capability": capability,
                    "reason": reason,
                    "expires_at": stamp(expires),
                    "arguments": {} if arguments is None else arguments,
                },
            )
        except ProtocolError:
            # Refused with no app.result to come (a C12 conflict, a duplicate id): a handle
            # made here would wait forever. One that was already waiting still waits.
            if waiting is None and self._calls.get(call_id) is handle:
                del self._calls[call_id]
            raise
        if waiting is None:
            handle.on_first_await = lambda: views().point_to(
                "call", call_id, f"{capability} ({reason!r})"[:200], handle
            )
        return handle

    # ---- receiving ---------------------------------------------------------------

    def on_event(
        self, event: str | None = None, *, instance_id: str | None = None
    ) -> Callable[[F], F]:
        """Decorator: call the function with a SurfaceEvent for matching ``ui.event`` messages.

        ``event`` None matches every event name; ``instance_id`` None every instance. An
        ``async def`` handler runs as a task on the kernel's loop (so it may ``await
        agent.ask_choice(...)``). Registering a function again with the same qualified name,
        event and instance replaces the earlier one: re-running a cell does not stack handlers
        (docs/agents.md). What a handler raises is shown in ``host.problems`` and the view.
        """

        def register(handler: F) -> F:
            _replace(self._event_handlers, (event, instance_id), handler)
            return handler

        return register

    def on_inventory(self, handler: InventoryHandlerT) -> InventoryHandlerT:
        """Decorator: call ``handler(payload)`` with every ``client.inventory`` this agent
        gets from now on (a new revision whenever apps or capabilities change, C2). The latest,
        the one sent at connect included (C1), is ``agent.inventory``. Re-registering the same
        function replaces it, as for ``on_event``."""
        _replace(self._inventory_handlers, (), handler)
        return handler

    def on(self, type_: str, handler: EnvelopeHandler) -> EnvelopeHandler:
        """Call ``handler(envelope)`` for every envelope of ``type_`` addressed to this agent.

        Returns ``handler``, which ``agent.off(handler)`` removes."""
        full = type_ if type_.startswith(rules.TYPE_PREFIX) else rules.TYPE_PREFIX + type_
        _replace(self._type_handlers, (full,), handler)
        return handler

    def off(self, handler: Callable[..., Any]) -> int:
        """Remove ``handler`` (or a function registered under its qualified name) from every
        registration of this agent: events, inventory, types. Returns how many were removed."""
        registries: list[list[Any]] = [
            self._event_handlers,
            self._inventory_handlers,
            self._type_handlers,
        ]
        removed = 0
        for registry in registries:
            kept = [entry for entry in registry if not _same(_handler_of(entry), handler)]
            removed += len(registry) - len(kept)
            registry[:] = kept
        return removed

    @property
    def handlers(self) -> list[tuple[str, str | None, str | None, Callable[..., Any]]]:
        """What is registered: ``(kind, event or type, instance_id, function)`` each, in order."""
        return (
            [("event", e, i, h) for e, i, h in self._event_handlers]
            + [("inventory", None, None, h) for h in self._inventory_handlers]
            + [("type", t, None, h) for t, h in self._type_handlers]
        )

    # ---- as tools for a model (_tools.py) -----------------------------------------

    def tool_definitions(self, style: ToolStyle = "anthropic") -> list[dict[str, Any]]:
        """This agent's actions as tool definitions for a tool-calling model: open, patch and
        close a surface, wait for the user's event, say, ask, call a capability (the ones in
        the latest inventory). ``style`` "anthropic" (name, description, input_schema) or
        "openai" (type function, parameters). See docs/agents.md, "A model drives it"."""
        return tool_definitions(self, style)

    async def use_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Run one tool call; a refusal comes back as ``{"error": ...}`` for the model."""
        return await run_tool(self, name, arguments)

    async def tool_loop(
        self,
        model: Model,
        messages: list[dict[str, Any]],
        *,
        style: ToolStyle = "anthropic",
        max_steps: int = 20,
    ) -> list[dict[str, Any]]:
        """Drive this agent with ``model(messages, tools)`` (any callable, sync or async,
        returning ``{"content", "tool_calls": [{"id", "name", "arguments"}]}``) until it answers
        without a tool call; returns the conversation."""
        return await tool_loop(self, model, messages, style=style, max_steps=max_steps)

    def disconnect(self) -> None:
        self._subscription.close()

    def _dispatch(self, envelope: dict[str, Any]) -> None:
        kind = envelope["type"]
        payload = envelope["payload"]
        if kind == "lineup.v1.client.inventory":
            self.inventory = payload
            for on_inventory in list(self._inventory_handlers):
                self._run(on_inventory, payload, f"{_name(on_inventory)} for {kind}", envelope)
        elif kind == "lineup.v1.error":
            self.errors.append(payload)
        elif kind == "lineup.v1.app.result":
            handle = self._calls.pop(payload["call_id"], None)
            if handle is not None and payload["status"] == "unsupported":
                # A mistake in the user's own agent (a misspelt or undeclared capability):
                # shown in host.problems and the host's view, not only in a result nobody
                # printed (issue 24). A remote agent's is its own business.
                error = payload.get("error") or {}
                self.host.problems.add(
                    f"agent {self.id!r}: app.call {handle.capability!r}",
                    f"unsupported ({error.get('rule', 'C3')}): {error.get('message', '')}",
                    agent_id=self.id,
                    source="agent",
                )
            if handle is not None:
                handle._resolve(
                    CallResult(
                        payload["call_id"],
                        payload["status"],
                        payload.get("result"),
                        payload.get("error"),
                        envelope,
                    )
                )
        elif kind == "lineup.v1.component.answer":
            question = self._questions.pop(payload["component_id"], None)
            if question is not None:
                question._answered(payload)
        elif kind == "lineup.v1.ui.event":
            event = SurfaceEvent(
                payload["instance_id"], payload["event"], payload["data"], envelope
            )
            for name, instance, handler in list(self._event_handlers):
                if name in (None, event.event) and instance in (None, event.instance_id):
                    where = f"{_name(handler)} for ui.event {event.event!r}"
                    self._run(handler, event, where, envelope, event.instance_id)
        for wanted, on_envelope in list(self._type_handlers):
            if wanted == kind:
                self._run(on_envelope, envelope, f"{_name(on_envelope)} for {kind}", envelope)

    def _run(
        self,
        handler: Callable[[Any], Any],
        argument: Any,
        where: str,
        envelope: dict[str, Any],
        instance_id: str | None = None,
    ) -> None:
        """Run one of the user's handlers; what it raises (now, or later if it is async) is
        shown to the user and recorded, and never keeps the event from the other handlers."""

        def failed(exc: BaseException) -> None:
            problem = self.host.problems.report(
                f"agent {self.id!r}: {where}", exc, agent_id=self.id, instance_id=instance_id
            )
            self.host.history.add(
                "to_agent",
                "handler_error",
                envelope,
                {"code": "internal", "message": str(problem), "traceback": problem.traceback},
            )

        run_handler(handler, argument, where=where, on_failure=failed, home_loop=self._home_loop)

    def __repr__(self) -> str:
        return f"Agent(id={self.id!r}, conversation_id={self.host.conversation_id!r})"


# ---- registrations (docs/agents.md, "Re-running a cell") -----------------------------------


def _key(handler: Callable[..., Any]) -> tuple[str, str] | None:
    """What makes a re-registration the same handler: a plain function's module and qualified
    name, as a re-run cell defines it again. Lambdas, bound methods and other callables have
    no name that says so, nor has a function made inside another (a closure, ``<locals>`` in
    its qualified name: each call of its maker makes a different one): only the very same
    object is the same handler."""
    qualname = getattr(handler, "__qualname__", "")
    if not inspect.isfunction(handler) or "<lambda>" in qualname or "<locals>" in qualname:
        return None
    return (handler.__module__, handler.__qualname__)


def _same(a: Callable[..., Any], b: Callable[..., Any]) -> bool:
    key = _key(a)
    return a is b or (key is not None and key == _key(b))


def _handler_of(entry: Any) -> Callable[..., Any]:
    return entry[-1] if isinstance(entry, tuple) else entry  # type: ignore[no-any-return]


def _replace(registry: list[Any], where: tuple[Any, ...], handler: Callable[..., Any]) -> None:
    """Add ``handler`` under ``where`` (event and instance, or type), in place of the same
    handler registered there before; elsewhere it stays (a function may serve two events)."""
    entry: Any = (*where, handler) if where else handler
    for index, old in enumerate(registry):
        old_where = old[:-1] if isinstance(old, tuple) else ()
        if old_where == where and _same(_handler_of(old), handler):
            registry[index] = entry
            return
    registry.append(entry)


def _name(handler: Callable[..., Any]) -> str:
    return f"{getattr(handler, '__qualname__', type(handler).__name__)}()"
