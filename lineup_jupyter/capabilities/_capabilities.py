"""What a host can do for an agent (the registry) and what the user lets it do (the policy).

Declaring is never authorizing (C7): the registry says which capabilities exist, with their
risk (C8) and argument schema; the policy says, per capability, whether a call runs without a
prompt, is refused, or asks the user. Only ``user_confirmation`` capabilities that run in the
kernel can be pre-allowed or remembered: ``system_permission`` and ``restricted`` never (C8),
and the browser-run ones need the user's own click every time, so a grant could not run them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from ..core._identity import Identity
from ..core._schemas import schema_error
from ..protocol import rules
from ..protocol._errors import UsageError

__all__ = ["Capabilities", "Capability", "Policy", "Risk"]

Risk = Literal["display_only", "user_confirmation", "system_permission", "restricted"]
Handler = Callable[[dict[str, Any]], "dict[str, Any] | None"]
BrowserCheck = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
Mode = Literal["allow", "deny", "ask"]
HandlerT = TypeVar("HandlerT", bound=Callable[..., Any])  # what @host.capability returns

ANY_OBJECT: dict[str, Any] = {"type": "object"}


@dataclass(frozen=True)
class Capability:
    """One declared capability.

    Exactly one of ``handler`` (runs in the kernel: arguments -> result object) and
    ``browser_check`` (the view runs it inside the Allow click; this checks and shapes what
    the browser sent back: (arguments, browser_result) -> result object) is set.
    """

    name: str
    risk: Risk
    version: str = "1.0"
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(ANY_OBJECT))
    handler: Handler | None = None
    browser_check: BrowserCheck | None = None
    description: str = ""
    # Who wrote the description: the host (built-ins, the notebook's own ``host.capability``)
    # or the requester (an MCP server's tool title or description). A card shows a requester's
    # words as theirs, never in the host's own lines (issue 22 §2).
    described_by: Literal["host", "requester"] = "host"
    browser_options: dict[str, Any] = field(default_factory=dict)  # what the view needs to run it
    # The only agents that may call it (an MCP server's tools: its own agent), None for all.
    # Another agent's call is unsupported (C3), and it is in no inventory or app.list.
    callers: frozenset[str] | None = None

    def callable_by(self, agent: str) -> bool:
        return self.callers is None or agent in self.callers

    @property
    def runs_in(self) -> Literal["kernel", "browser"]:
        return "browser" if self.browser_check is not None else "kernel"

    @property
    def rememberable(self) -> bool:
        """May be pre-allowed or remembered for the session (H21)."""
        return self.risk == "user_confirmation" and self.runs_in == "kernel"

    def entry(self) -> dict[str, Any]:
        """The client.inventory entry (C4)."""
        return {"name": self.name, "version": self.version, "risk": self.risk}

    def list_entry(self) -> dict[str, Any]:
        """The app.list entry (C7)."""
        return {**self.entry(), "input_schema": self.input_schema}


class Capabilities:
    """The registry: declared capabilities by name, and which of them are revoked."""

    def __init__(self, on_change: Callable[[], None]) -> None:
        self._declared: dict[str, Capability] = {}
        self._revoked: set[str] = set()
        self._on_change = on_change

    def declare(self, capability: Capability, *, schema_checked: bool = False) -> Capability:
        """Declare (or re-declare, as re-running a notebook cell does) a capability.

        ``schema_checked``: the input_schema is known valid (the built-ins, which a test
        checks), so checking it needs no jsonschema import at every Host (_schemas.py)."""
        name = capability.name
        if len(name) > rules.CAPABILITY_NAME_MAX_LENGTH or not re.match(
            rules.CAPABILITY_NAME_PATTERN, name
        ):
            raise UsageError(
                f"[lineup] capability name {name!r} must be dotted lower case, like "
                f"'weather.lookup' ({rules.CAPABILITY_NAME_PATTERN}, C7)"
            )
        if capability.risk not in rules.RISKS:
            raise UsageError(f"[lineup] risk {capability.risk!r} is not one of {rules.RISKS} (C8)")
        if not (
            re.match(rules.SHORT_VERSION_PATTERN, capability.version)
            or re.match(rules.SEMVER_PATTERN, capability.version)
        ):
            raise UsageError(
                f"[lineup] capability version {capability.version!r} must look like '1.0' (C7)"
            )
        if (capability.handler is None) == (capability.browser_check is None):
            raise UsageError("[lineup] a capability needs exactly one handler")
        if not isinstance(capability.input_schema, dict):
            raise UsageError("[lineup] input_schema must be a JSON Schema object (C7)")
        problem = None if schema_checked else schema_error(capability.input_schema)
        if problem is not None:
            raise UsageError(
                f"[lineup] input_schema of {name!r} is not a valid JSON Schema: {problem}"
            )
        self._declared[name] = capability
        self._revoked.discard(name)
        self._on_change()
        return capability

    def decorator(
        self,
        name: str,
        *,
        risk: Risk,
        input_schema: dict[str, Any] | None,
        version: str,
        description: str | None,
        lock: AbstractContextManager[Any],
    ) -> Callable[[HandlerT], HandlerT]:
        """What ``@host.capability(...)`` returns: it declares the function it decorates as
        the capability's handler, under ``lock``; its docstring is the description unless
        one is given."""

        def declare(handler: HandlerT) -> HandlerT:
            doc = (handler.__doc__ or "").strip()
            with lock:
                self.declare(
                    Capability(
                        name,
                        risk,
                        version=version,
                        input_schema=dict(ANY_OBJECT) if input_schema is None else input_schema,
                        handler=handler,
                        description=doc if description is None else description,
                    )
                )
            return handler

        return declare

    def revoke(self, name: str) -> None:
        """Withdraw a capability: it is no longer listed, and calls get ``unsupported`` (C3)."""
        self._known(name)
        self._revoked.add(name)
        self._on_change()

    def restore(self, name: str) -> None:
        """Undo ``revoke``."""
        self._known(name)
        self._revoked.discard(name)
        self._on_change()

    def get(self, name: str) -> Capability | None:
        """The capability if it is declared and not revoked."""
        return None if name in self._revoked else self._declared.get(name)

    def _known(self, name: str) -> Capability:
        capability = self._declared.get(name)
        if capability is None:
            raise UsageError(f"[lineup] no capability {name!r} is declared; declared: {list(self)}")
        return capability

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._declared if name not in self._revoked)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"Capabilities({list(self)})"


GrantChanged = Callable[[str, str, "Identity | None", str], None]  # name, action, whose, by


class Policy:
    """What the user set from Python, per capability, and what they remembered in a card.

    ``allow(name)`` runs calls without a prompt, ``deny(name)`` refuses them and hides the
    capability from the agent's lists, ``ask(name)`` returns to the default (prompt, except
    ``display_only``, which runs): the user's own code decides, for every agent. A grant
    remembered in a card is narrower (H27): one capability for the one identity whose card
    it was (an in-kernel agent, one connection, one MCP server session), never for another
    agent or a namesake that connects later. Session grants live in memory only: a new
    kernel starts with none, and an identity's end (its connection closed) ends its grants.
    """

    def __init__(self, capabilities: Capabilities, on_change: GrantChanged) -> None:
        self._capabilities = capabilities
        self._modes: dict[str, Mode] = {}
        self._remembered: dict[tuple[Identity, str], None] = {}  # in the order remembered
        self._on_change = on_change

    def allow(self, name: str) -> None:
        """Pre-allow: calls run without a prompt. Only for rememberable capabilities (C8)."""
        capability = self._capabilities._known(name)
        if not capability.rememberable:
            raise UsageError(_not_rememberable(capability, "pre-allowed"))
        self._set(name, "allow")

    def deny(self, name: str) -> None:
        """Refuse every call (``rejected``, decided by policy) and hide it from the lists."""
        self._capabilities._known(name)
        self._set(name, "deny")

    def ask(self, name: str) -> None:
        """Back to the default for its risk."""
        self._capabilities._known(name)
        self._set(name, "ask")

    def mode(self, name: str) -> Mode:
        return self._modes.get(name, "ask")

    def _set(self, name: str, mode: Mode, by: str = "user") -> None:
        if mode == "ask":
            self._modes.pop(name, None)
        else:
            self._modes[name] = mode
        self._on_change(name, f"policy_{mode}", None, by)

    def clear(self, name: str) -> None:
        """The capability's declarer is gone for good (an MCP server session closed): what
        the user set for it does not pass to a namesake that declares it again (H27)."""
        if name in self._modes:
            self._set(name, "ask", "host")

    @property
    def remembered(self) -> list[dict[str, Any]]:
        """The grants remembered from cards, oldest first: each capability with whose it is
        (``agent``, the host's ``session`` number, ``via``: how it is connected)."""
        return [{"capability": name, **identity.view()} for identity, name in self._remembered]

    def remember(self, name: str, identity: Identity) -> None:
        """Allow ``name`` for ``identity`` for the rest of its session (the card's box)."""
        capability = self._capabilities._known(name)
        if not capability.rememberable:
            raise UsageError(_not_rememberable(capability, "remembered"))
        self._remembered[identity, name] = None
        self._on_change(name, "remember", identity, "user")

    def revoke(self, name: str, session: int | None = None) -> None:
        """Forget a remembered grant (of one identity's ``session``, else of every one):
        the next call prompts again."""
        found = [
            (identity, granted)
            for identity, granted in self._remembered
            if granted == name and session in (None, identity.session)
        ]
        if not found:
            raise UsageError(
                f"[lineup] {name!r} is not remembered"
                + ("" if session is None else f" for session {session}")
                + f"; remembered: {[(g['capability'], g['session']) for g in self.remembered]}"
            )
        for key in found:
            del self._remembered[key]
            self._on_change(name, "revoke", key[0], "user")

    def forget(self, identity: Identity) -> None:
        """The identity's binding ended (its connection closed): its grants end with it."""
        for key in [key for key in self._remembered if key[0] == identity]:
            del self._remembered[key]
            self._on_change(key[1], "revoke", identity, "host")

    def verdict(
        self, capability: Capability, identity: Identity
    ) -> tuple[Literal["allow", "deny", "ask"], str]:
        """What happens to ``identity``'s call before any prompt, and who decided it."""
        mode = self.mode(capability.name)
        if mode == "deny":
            return "deny", "policy"
        if capability.rememberable and mode == "allow":
            return "allow", "policy"
        if capability.rememberable and (identity, capability.name) in self._remembered:
            return "allow", "remembered"
        if capability.risk == "display_only" and capability.runs_in == "kernel":
            return "allow", "policy"
        return "ask", "user"

    def visible(self, capability: Capability) -> bool:
        return self.mode(capability.name) != "deny"

    def __repr__(self) -> str:
        return f"Policy(modes={self._modes}, remembered={self.remembered})"


def _not_rememberable(capability: Capability, what: str) -> str:
    if capability.risk in ("system_permission", "restricted"):
        why = f"it is {capability.risk}, which asks the user every time (C8)"
    elif capability.runs_in == "browser":
        why = "it runs in the browser inside the user's own Allow click (H21)"
    else:
        why = f"it is {capability.risk}, which runs without a prompt anyway"
    return f"[lineup] {capability.name!r} cannot be {what}: {why}"
