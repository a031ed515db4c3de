"""An agent's actions as tools for a tool-calling model (docs/agents.md, "A model drives it").

``agent.tool_definitions()`` describes open, patch and close a surface, wait for the user's
event in it, say Markdown, ask (choice, confirm, input) and call a capability, each with a JSON
Schema, in the shape the common tool-calling APIs take. ``await agent.use_tool(name, args)``
runs one and gives a JSON-able result; a refusal or a wrong argument comes back as
``{"error": ...}`` for the model to read and correct, never as an exception into the loop.
``await agent.tool_loop(model, messages)`` runs the whole loop: any callable (sync or async)
that takes the messages and the tool definitions and returns the next assistant message.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..protocol._errors import LineUpError
from ..runtime._threads import call_soon_on

if TYPE_CHECKING:
    from collections.abc import Awaitable, Mapping, Sequence

    from ..core._ports import AgentHost
    from ._calls import CallHandle


__all__ = ["Model", "ToolAgent", "ToolStyle", "run_tool", "tool_definitions", "tool_loop"]


class SurfaceEventLike(Protocol):
    """What a tool reads of an agent's SurfaceEvent."""

    @property
    def event(self) -> str: ...

    @property
    def data(self) -> dict[str, Any]: ...


class ToolAgent(Protocol):
    """What the tools use of an in-kernel Agent (_agent.py): its acts, never its class, so
    this module does not import the one that imports it."""

    host: AgentHost
    inventory: dict[str, Any] | None

    def open(
        self,
        instance_id: str,
        *,
        html: str,
        css: str = ...,
        js: str = ...,
        state: dict[str, Any] | None = ...,
        name: str | None = ...,
    ) -> None: ...

    def patch(self, instance_id: str, state: dict[str, Any], *, merge: bool = ...) -> None: ...

    def close(self, instance_id: str, reason: str = ...) -> None: ...

    def say(self, markdown: str, *, component_id: str | None = ...) -> str: ...

    def ask_choice(
        self, prompt: str, options: Sequence[str] | Mapping[str, str], *, multiple: bool = ...
    ) -> Awaitable[Any]: ...

    def confirm(self, prompt: str) -> Awaitable[Any]: ...

    def ask_input(self, prompt: str, **constraints: Any) -> Awaitable[Any]: ...

    def call(
        self, capability: str, arguments: dict[str, Any] | None = ..., *, reason: str
    ) -> CallHandle: ...

    def on_event(
        self, event: str | None = ..., *, instance_id: str | None = ...
    ) -> Callable[[Callable[[SurfaceEventLike], None]], object]: ...

    def off(self, handler: Callable[..., Any]) -> int: ...


ToolStyle = Literal["anthropic", "openai"]
# model(messages, tools) -> {"role": "assistant", "content": str | None,
#                            "tool_calls": [{"id": str, "name": str, "arguments": dict}]}
Model = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Any]

_STATE = {"type": "object", "description": "A JSON object: the surface's state (U4)."}
_ID = {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"}


def _schemas(capabilities: list[str]) -> dict[str, tuple[str, dict[str, Any]]]:
    capability: dict[str, Any] = {"type": "string"}
    if capabilities:
        capability["enum"] = capabilities
    return {
        "open_surface": (
            "Show an interactive HTML surface to the user in a sandboxed frame (no network). "
            "Its JavaScript reports the user's actions with LineUpSurface.event(name, data) and "
            "gets state with LineUpSurface.onState(callback).",
            {
                "type": "object",
                "properties": {
                    "instance_id": _ID,
                    "html": {"type": "string"},
                    "css": {"type": "string"},
                    "js": {"type": "string"},
                    "state": _STATE,
                    "title": {"type": "string"},
                },
                "required": ["instance_id", "html"],
            },
        ),
        "patch_surface": (
            "Change a surface's state; by default merged into it (RFC 7396: null deletes).",
            {
                "type": "object",
                "properties": {
                    "instance_id": _ID,
                    "state": _STATE,
                    "merge": {"type": "boolean", "default": True},
                },
                "required": ["instance_id", "state"],
            },
        ),
        "close_surface": (
            "Close a surface.",
            {"type": "object", "properties": {"instance_id": _ID}, "required": ["instance_id"]},
        ),
        "wait_for_event": (
            "Wait until the user acts in a surface (an event its JavaScript sends); returns the "
            "event's name and data, or a timeout.",
            {
                "type": "object",
                "properties": {
                    "instance_id": _ID,
                    "event": {"type": "string", "description": "Only this event name."},
                    "timeout_s": {"type": "number", "minimum": 0, "default": 300},
                },
                "required": ["instance_id"],
            },
        ),
        "say": (
            "Show the user a message in Markdown.",
            {
                "type": "object",
                "properties": {"markdown": {"type": "string"}},
                "required": ["markdown"],
            },
        ),
        "ask_choice": (
            "Ask the user to pick one option (or several with multiple); returns the labels.",
            {
                "type": "object",
                "properties": {
                    "prompt": {"type": "string"},
                    "options": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    "multiple": {"type": "boolean", "default": False},
                },
                "required": ["prompt", "options"],
            },
        ),
        "confirm": (
            "Ask the user yes or no; returns true, false, or null if they cancelled.",
            {
                "type": "object",
                "properties": {"prompt": {"type": "string"}},
                "required": ["prompt"],
            },
        ),
        "ask_input": (
            "Ask the user for a line of text.",
            {
                "type": "object",
                "properties": {"prompt": {"type": "string"}, "placeholder": {"type": "string"}},
                "required": ["prompt"],
            },
        ),
        "call_capability": (
            "Ask to use one of the host's capabilities (open a link, write the clipboard, save "
            "a file...). The user may be asked to allow it; returns its status and result.",
            {
                "type": "object",
                "properties": {
                    "capability": capability,
                    "arguments": {"type": "object"},
                    "reason": {"type": "string", "description": "Shown to the user."},
                },
                "required": ["capability", "arguments", "reason"],
            },
        ),
    }


def tool_definitions(agent: ToolAgent, style: ToolStyle = "anthropic") -> list[dict[str, Any]]:
    """The agent's actions as tool definitions: ``{"name", "description", "input_schema"}``
    (``style="anthropic"``) or ``{"type": "function", "function": {"name", "description",
    "parameters"}}`` (``style="openai"``). The capabilities offered are those of the agent's
    latest ``client.inventory`` (C4)."""
    inventory = agent.inventory or {}
    names = sorted(str(c["name"]) for c in inventory.get("capabilities", []))
    tools = []
    for name, (description, schema) in _schemas(names).items():
        if style == "openai":
            tools.append(
                {
                    "type": "function",
                    "function": {"name": name, "description": description, "parameters": schema},
                }
            )
        else:
            tools.append({"name": name, "description": description, "input_schema": schema})
    return tools


async def run_tool(agent: ToolAgent, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Run one tool; the result, or ``{"error": ...}`` when it was refused or malformed."""
    try:
        return await _run(agent, name, arguments)
    except (LineUpError, KeyError, TypeError, ValueError) as error:
        text = str(error).removeprefix("[lineup] ")
        if isinstance(error, KeyError):
            text = f"missing argument {error}"
        return {"error": f"{type(error).__name__}: {text}"}


async def _run(agent: ToolAgent, name: str, args: dict[str, Any]) -> dict[str, Any]:
    if name == "open_surface":
        agent.open(
            args["instance_id"],
            html=args["html"],
            css=args.get("css", ""),
            js=args.get("js", ""),
            state=args.get("state"),
            name=args.get("title"),
        )
        return {"opened": args["instance_id"]}
    if name == "patch_surface":
        agent.patch(args["instance_id"], args["state"], merge=args.get("merge", True))
        return {"patched": args["instance_id"]}
    if name == "close_surface":
        agent.close(args["instance_id"])
        return {"closed": args["instance_id"]}
    if name == "wait_for_event":
        return await _next_event(agent, args["instance_id"], args.get("event"), args)
    if name == "say":
        return {"shown": agent.say(args["markdown"])}
    if name == "ask_choice":
        answer = await agent.ask_choice(
            args["prompt"], list(args["options"]), multiple=args.get("multiple", False)
        )
        return {"answer": answer}
    if name == "confirm":
        return {"answer": await agent.confirm(args["prompt"])}
    if name == "ask_input":
        fields = {"placeholder": args["placeholder"]} if "placeholder" in args else {}
        return {"answer": await agent.ask_input(args["prompt"], **fields)}
    if name == "call_capability":
        result = await agent.call(args["capability"], args["arguments"], reason=args["reason"])
        return {"status": result.status, "result": result.result, "error": result.error}
    raise ValueError(f"there is no tool {name!r}")


async def _next_event(
    agent: ToolAgent, instance_id: str, event: str | None, args: dict[str, Any]
) -> dict[str, Any]:
    if instance_id not in agent.host.surfaces:
        raise ValueError(f"no surface {instance_id!r} is open")
    loop = asyncio.get_running_loop()
    seen: asyncio.Future[SurfaceEventLike] = loop.create_future()

    def settle(happened: SurfaceEventLike) -> None:
        if not seen.done():
            seen.set_result(happened)

    def heard(happened: SurfaceEventLike) -> None:  # on whichever thread delivers it
        call_soon_on(loop, settle, happened)

    agent.on_event(event, instance_id=instance_id)(heard)
    try:
        happened = await asyncio.wait_for(seen, float(args.get("timeout_s", 300)))
    except asyncio.TimeoutError:
        return {"timeout": True}
    finally:
        agent.off(heard)
    return {"event": happened.event, "data": happened.data}


async def tool_loop(
    agent: ToolAgent,
    model: Model,
    messages: list[dict[str, Any]],
    *,
    style: ToolStyle = "anthropic",
    max_steps: int = 20,
) -> list[dict[str, Any]]:
    """Ask ``model`` for the next step, run the tools it calls, hand back their results, until
    it answers without a tool call (or ``max_steps``). Returns the whole conversation:
    ``messages`` plus each assistant message and one ``{"role": "tool", "tool_call_id",
    "name", "content"}`` per tool call (content is the result as JSON text)."""
    tools = tool_definitions(agent, style)
    conversation = list(messages)
    for _ in range(max_steps):
        reply = model(conversation, tools)
        if inspect.isawaitable(reply):
            reply = await reply
        step: dict[str, Any] = {"role": "assistant", **dict(reply)}
        conversation.append(step)
        calls = step.get("tool_calls") or []
        if not calls:
            return conversation
        for call in calls:
            result = await run_tool(agent, str(call["name"]), dict(call.get("arguments") or {}))
            conversation.append(
                {
                    "role": "tool",
                    "tool_call_id": call.get("id"),
                    "name": call["name"],
                    "content": json.dumps(result, ensure_ascii=False),
                }
            )
    conversation.append({"role": "assistant", "content": f"(stopped after {max_steps} steps)"})
    return conversation
