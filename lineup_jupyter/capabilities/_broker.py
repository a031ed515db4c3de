"""The capability broker: every accepted ``app.call``, from arrival to its one ``app.result``.

Checks, in order, each with a fixed status (docs/capabilities.md):

    declared and not revoked   else unsupported   (C3, C7)
    not expired                else expired       (H20: no prompt is shown)
    arguments match the schema else failed        (C7, at the failing argument's path)
    the policy                 deny -> rejected; allow -> run; ask -> a pending call (C8, C10)

A pending call waits for ``decide`` (the view, or a test acting as the user) or for its
``expires_at`` (a timer in the kernel, H20). Each call_id is answered once: the ledger
(_ledger.py) records the answer, gives it to a repeat, even one that arrives while the first
waits, and refuses a different request under the same id (C12, H22). Every answer and every
grant change is written to the audit (C13).

Whose call it is, is the ``Identity`` the host assigned to its sender (H27,
core/_identity.py), not the agent id it wrote: the ledger, the waiting cards, a remembered
grant and the app.result's way back all key on it, so another agent (or a namesake on a
later connection) using the same call_id or the same agent id reads, blocks and inherits
nothing. A card's key is the call_id, or ``call_id~session`` when another identity's call
with that call_id is waiting too.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, Literal

from ..core._identity import NOBODY, Identity, host_bound
from ..core._ports import HostPort, Send
from ..core._schemas import first_problem
from ..protocol import AppCall, rules
from ..protocol._envelopes import stamp, utc_now
from ..protocol._errors import CapabilityError, ProtocolError, UsageError
from ..protocol._json import check_value, dumps, loads, member_path
from ..protocol._models import AppCallPayload
from ..protocol._owners import owners_of
from ..runtime._threads import Timer, call_later
from ._audit import Audit, digest
from ._capabilities import Capabilities, Capability, Policy
from ._consent import ConsentViews
from ._ledger import CallKey, CallLedger, fingerprint_of

__all__ = ["Broker", "PendingCall"]

logger = logging.getLogger("lineup_jupyter")

Decision = Literal["allow", "deny", "cancel"]
_RECENT = 5  # decided calls a view lists, so a second view sees what the first one decided


@dataclass
class PendingCall:
    """A call waiting for the user. Read it; decide it with ``host.decide``."""

    call_id: str
    capability: Capability
    identity: Identity
    reason: str
    arguments: dict[str, Any]
    expires_at: datetime
    received_at: datetime
    key: str = ""  # the card's: the call_id, unless another identity's call waits under it
    _timer: Timer | None = field(default=None, repr=False)

    @property
    def agent(self) -> str:
        """The agent id its sender wrote (a label: ``identity`` is who it is, H27)."""
        return self.identity.agent_id

    @cached_property
    def owners(self) -> dict[str, str]:
        """Who owns each URL among its arguments (protocol/_owners.py): worked out once, as
        the arguments never change, however often a view asks for the card."""
        return owners_of(self.arguments.values())

    @property
    def ledger_key(self) -> CallKey:
        return (self.identity, self.call_id)

    def spec(self, now: datetime) -> dict[str, Any]:
        """What a view draws: everything but the handler, and the time left (not a clock
        reading, so a browser whose clock differs counts down the same). ``call_id`` is the
        card's key; ``identity`` says whose card it is, and so whose a Remember would be."""
        capability = self.capability
        return {
            "call_id": self.key,
            "identity": self.identity.view(),
            "capability": capability.name,
            "version": capability.version,
            "risk": capability.risk,
            "description": capability.description,
            "description_by": capability.described_by,
            "agent": self.agent,
            "reason": self.reason,
            # An id in a reserved namespace is bound by the host alone (H28): its reason is
            # the host's summary (an MCP app's call), not an agent's words.
            "reason_by": "host" if host_bound(self.identity.agent_id) else "agent",
            "arguments": self.arguments,
            "owners": self.owners,
            "expires_at": stamp(self.expires_at),
            "remaining_ms": max(0, int((self.expires_at - now).total_seconds() * 1000)),
            "runs_in": capability.runs_in,
            "browser": capability.browser_options,
            "remember_allowed": capability.rememberable,
            "typed_name_required": capability.risk == "restricted",
        }


class Broker:
    """Owned by one Host; runs under the host's lock. ``send`` sends an envelope through the
    host's bus; ``on_visibility_changed`` is called when the capabilities agents may see
    changed (the host sends a new inventory, C4)."""

    def __init__(
        self,
        host: HostPort,
        audit: Audit,
        *,
        send: Send,
        on_visibility_changed: Callable[[], None],
    ) -> None:
        self.host = host
        self._send_envelope = send
        self._on_visibility_changed = on_visibility_changed
        self.audit = audit
        self.ledger = CallLedger()  # each call_id's one answer (C12, H22)
        self.pending: dict[str, PendingCall] = {}
        self.recent: deque[dict[str, Any]] = deque(maxlen=_RECENT)
        self.capabilities = Capabilities(self._visibility_changed)
        self.policy = Policy(self.capabilities, self._grant_changed)
        self.views = ConsentViews(self)

    # ---- arrival -----------------------------------------------------------------------

    def check(self, payload: AppCallPayload, identity: Identity) -> None:
        """Before the host accepts a call: its call_id is new for its sender, or names this
        same request (C12, H27); raises the ProtocolError that refuses it."""
        self.ledger.check(
            (identity, payload.call_id), fingerprint_of(payload.capability, payload.arguments)
        )

    def receive(self, envelope: AppCall, identity: Identity) -> None:
        """An accepted app.call from ``identity`` (the host checked envelope, conversation,
        the sender's binding, H41, and ``check``)."""
        payload = envelope.payload
        agent = identity.agent_id
        key = (identity, payload.call_id)
        if key in self.ledger:  # a repeat: the first's answer, now or when it ends
            answer = self.ledger.join(key)
            if answer is not None:
                self._send(answer, identity)
            return
        fingerprint = fingerprint_of(payload.capability, payload.arguments)
        now = utc_now()
        common: dict[str, Any] = {
            "call_id": payload.call_id,
            "identity": identity,
            "reason": payload.reason,
            "arguments": payload.arguments,
            "received_at": now,
            "fingerprint": fingerprint,
        }
        capability = self.capabilities.get(payload.capability)
        if capability is not None and not capability.callable_by(agent):
            capability = None  # another agent's own (an MCP server's tool): not declared to it
        if capability is None:
            self._answer(
                **common,
                capability_name=payload.capability,
                risk=None,
                status="unsupported",
                error=_error(
                    "unsupported",
                    "C3",
                    "$.payload.capability",
                    f"no capability {payload.capability!r} is declared on this host"
                    f"{_suggest(payload.capability, self._callable_names(agent))}. "
                    + rules.RULES["C3"],
                ),
            )
            return
        base: dict[str, Any] = {
            **common,
            "capability_name": capability.name,
            "risk": capability.risk,
        }
        if payload.expires() <= now:
            self._answer(
                **base,
                status="expired",
                error=_error(
                    "expired",
                    "H20",
                    "$.payload.expires_at",
                    f"the call expired at {payload.expires_at}, before it arrived; nothing was "
                    "shown to the user. " + rules.RULES["H20"],
                ),
            )
            return
        problem = first_problem(capability.input_schema, payload.arguments)
        if problem is not None:
            path = member_path(("payload", "arguments", *problem.path))
            self._answer(
                **base,
                status="failed",
                error=_error(
                    "invalid",
                    "C7",
                    path,
                    f"{path}: {problem.message} (the input_schema of {capability.name!r}, "
                    "which app.list shows). " + rules.RULES["C7"],
                ),
            )
            return
        verdict, decided_by = self.policy.verdict(capability, identity)
        if verdict == "deny":
            self._answer(
                **base,
                status="rejected",
                decision="deny",
                decided_by="policy",
                decided_at=now,
                error=_error(
                    "rejected",
                    "C10",
                    "$.payload.capability",
                    f"the user's policy denies {capability.name!r}.",
                ),
            )
        elif verdict == "allow":
            self._run(capability, base, decided_by=decided_by, decided_at=now, outcome=None)
        elif len(self.pending) >= self.host.limits.max_waiting_calls:  # H44: cards are bounded
            self._answer(
                **base,
                status="failed",
                error=_error(
                    "too_many",
                    "H44",
                    "$.payload.call_id",
                    f"{len(self.pending)} calls are waiting for the user, this host's limit "
                    "(Limits.max_waiting_calls); wait for an answer, then call again.",
                ),
            )
        else:
            call = PendingCall(
                payload.call_id,
                capability,
                identity,
                payload.reason,
                payload.arguments,
                payload.expires(),
                now,
            )
            call.key = self._card_key(call.call_id)
            self.ledger.wait(key, fingerprint)
            self.pending[call.key] = call
            call._timer = self._schedule_expiry(call, (call.expires_at - now).total_seconds())
            self.views.changed()

    def _card_key(self, call_id: str) -> str:
        """The call_id, or the first ``call_id~n`` no waiting card has: two identities may
        use one call_id, and each card must be decided on its own (H27)."""
        key, n = call_id, 1
        while key in self.pending:
            n += 1
            key = f"{call_id}~{n}"
        return key

    def find(self, key: str) -> PendingCall | None:
        """The waiting call of a card key, else the one waiting call with that call_id; two
        identities' calls under one call_id are told apart by their keys only."""
        call = self.pending.get(key)
        if call is not None:
            return call
        found = [c for c in self.pending.values() if c.call_id == key]
        if len(found) > 1:
            raise UsageError(
                f"[lineup] {len(found)} agents' calls wait under call_id {key!r}: decide one "
                f"by its card's key, one of {[c.key for c in found]}"
            )
        return found[0] if found else None

    # ---- the user's decision -----------------------------------------------------------

    def decide(
        self,
        call_id: str,
        decision: Decision,
        *,
        remember: bool = False,
        typed_name: str | None = None,
        outcome: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Decide a pending call (``call_id``: its card's key, ``find``); returns its
        app.result payload.

        ``outcome`` is what the browser did for a capability that runs there, inside the
        Allow click: ``{"ok": true, "result": {...}}`` or ``{"ok": false, "message": ...}``.
        ``remember``: the user allows this capability for this call's identity for the rest
        of its session (H27), and its other waiting calls of it run now, as they would have
        had they come a moment later.
        """
        call = self.find(call_id)
        if call is None:
            answered = [
                answer
                for (_, answered_id), (_, answer) in self.ledger.snapshot().items()
                if answered_id == call_id and answer is not None
            ]
            if answered:
                raise UsageError(
                    f"[lineup] call {call_id!r} was already answered: {answered[-1]['status']}"
                )
            raise UsageError(
                f"[lineup] no call {call_id!r} is waiting; waiting: {list(self.pending)}"
            )
        if decision not in ("allow", "deny", "cancel"):
            raise UsageError(
                f"[lineup] decision must be 'allow', 'deny' or 'cancel', not {decision!r}"
            )
        capability = call.capability
        if decision == "allow":
            if remember and not capability.rememberable:
                self.policy.remember(capability.name, call.identity)  # raises why (C8, H21)
            if capability.risk == "restricted" and typed_name != capability.name:
                raise UsageError(
                    f"[lineup] {capability.name!r} is restricted: to allow it, type its name "
                    "exactly ("
                    + (f"typed {typed_name!r}" if typed_name else "nothing was typed")
                    + ") (H23)"
                )
            if capability.runs_in == "browser" and not isinstance(outcome, dict):
                raise UsageError(
                    f"[lineup] {capability.name!r} runs in the browser, inside the Allow click "
                    "of its card: decide it in the notebook's view (H21)"
                )
        now = utc_now()
        if call.expires_at <= now:  # the timer may not have fired yet; the time has passed
            self._expire(call.key, now)
            return self._answer_of(call.ledger_key)
        self._stop_waiting(call)
        base = self._base(call)
        if decision == "allow":
            if remember:
                self.policy.remember(capability.name, call.identity)
            self._run(capability, base, decided_by="user", decided_at=now, outcome=outcome)
            if remember:
                self._settle_remembered(call.identity, capability.name)
        else:
            status = "rejected" if decision == "deny" else "cancelled"
            self._answer(
                **base,
                status=status,
                decision=decision,
                decided_by="user",
                decided_at=now,
                error=_error(
                    status,
                    "C10",
                    "$.payload.capability",
                    "the user denied the call."
                    if decision == "deny"
                    else "the user closed the request without deciding.",
                ),
            )
        return self._answer_of(call.ledger_key)

    def _settle_remembered(self, identity: Identity, name: str) -> None:
        """A Remember also answers what it covers that is already waiting: the same
        identity's other calls of the same capability (a polling app's queued cards) run
        now, decided by the remembered grant, oldest first. Another identity's stay."""
        for call in list(self.pending.values()):
            if call.identity != identity or call.capability.name != name:
                continue
            now = utc_now()
            if call.expires_at <= now:
                continue  # its timer ends it expired
            self._stop_waiting(call)
            self._run(
                call.capability,
                self._base(call),
                decided_by="remembered",
                decided_at=now,
                outcome=None,
            )

    def _expire(self, key: str, now: datetime | None = None) -> None:
        """The timer's end: a call still waiting at its expires_at ends expired (H20)."""
        with self.host.lock:
            call = self.pending.get(key)
            if call is None:  # decided in the meantime
                return
            remaining = (call.expires_at - (now or utc_now())).total_seconds()
            if remaining > 0:  # a long wait is timed in steps (see _schedule_expiry)
                call._timer = self._schedule_expiry(call, remaining)
                return
            self._stop_waiting(call)
            self._answer(
                **self._base(call),
                status="expired",
                error=_error(
                    "expired",
                    "H20",
                    "$.payload.expires_at",
                    f"the call expired at {stamp(call.expires_at)} while waiting for the "
                    "user; it was not run. " + rules.RULES["H20"],
                ),
            )

    def _schedule_expiry(self, call: PendingCall, delay: float) -> Timer:
        # A loop timer in a kernel, else a thread's (_threads.call_later); at most a day at
        # a time, so _expire looks again when a far expires_at is not reached yet.
        return call_later(delay, self._expire, call.key, what=f"expiring call {call.call_id!r}")

    def _stop_waiting(self, call: PendingCall) -> None:
        del self.pending[call.key]
        if call._timer is not None:
            call._timer.cancel()

    # ---- running and answering -----------------------------------------------------

    def _run(
        self,
        capability: Capability,
        base: dict[str, Any],
        *,
        decided_by: str,
        decided_at: datetime,
        outcome: dict[str, Any] | None,
    ) -> None:
        decided: dict[str, Any] = {
            "decision": "allow",
            "decided_by": decided_by,
            "decided_at": decided_at,
        }
        # C13 fails closed: a call that cannot be audited never runs. (A browser capability
        # ran in the Allow click already: its row, if lost, is counted as a gap.)
        unaudited = (
            self.audit.begin(base["call_id"], stamp(utc_now()))
            if capability.handler is not None
            else None
        )
        if unaudited is not None:
            self._answer(
                **base,
                **decided,
                status="failed",
                error=_error(
                    "failed",
                    "C13",
                    "$.payload.call_id",
                    f"the call was not run: the audit cannot be written ({unaudited}). "
                    + rules.RULES["C13"],
                ),
            )
            return
        arguments = loads(dumps(base["arguments"]), max_bytes=1 << 30)  # the handler's own copy
        try:
            if capability.handler is not None:
                result = capability.handler(arguments)
            else:
                assert capability.browser_check is not None and outcome is not None
                result = capability.browser_check(arguments, _browser_result(outcome))
            result = {} if result is None else result
            if not isinstance(result, dict):
                raise CapabilityError(
                    f"the handler returned {type(result).__name__}, not a JSON object"
                )
            check_value(result)
            result = loads(dumps(result), max_bytes=self.host.limits.max_message_bytes // 2)
        except (CapabilityError, ProtocolError) as error:
            # A ProtocolError here is a result that is not JSON (H2): the handler's fault.
            path = error.path if isinstance(error, CapabilityError) else "$.result" + error.path[1:]
            self._answer(
                **base,
                **decided,
                status="failed",
                error=_error("failed", "H24", path, error.message[:1000]),
            )
            return
        except Exception as exc:  # the handler's bug: its text may hold secrets (H24)
            logger.exception("[lineup] the handler of %r raised", capability.name)
            self._answer(
                **base,
                **decided,
                status="failed",
                error=_error(
                    "failed",
                    "H24",
                    "$.payload.capability",
                    f"the handler of {capability.name!r} raised {type(exc).__name__}; "
                    "the details are in the kernel's log. " + rules.RULES["H24"],
                ),
            )
            return
        self._answer(**base, **decided, status="completed", result=result)

    def _base(self, call: PendingCall) -> dict[str, Any]:
        return {
            "call_id": call.call_id,
            "identity": call.identity,
            "reason": call.reason,
            "arguments": call.arguments,
            "received_at": call.received_at,
            "fingerprint": self.ledger.fingerprint(call.ledger_key),
            "capability_name": call.capability.name,
            "risk": call.capability.risk,
        }

    def _answer(
        self,
        *,
        call_id: str,
        identity: Identity,
        reason: str,
        arguments: dict[str, Any],
        received_at: datetime,
        fingerprint: str,
        capability_name: str,
        risk: str | None,
        status: str,
        decision: str | None = None,
        decided_by: str | None = None,
        decided_at: datetime | None = None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """Record the call's one answer, audit it, and send it to every message that asked."""
        answer: dict[str, Any] = {"call_id": call_id, "status": status}
        if result is not None:
            answer["result"] = result
        if error is not None:
            answer["error"] = error
        owed = self.ledger.settle((identity, call_id), answer, fingerprint=fingerprint)
        answered_at = utc_now()
        self._audit(
            at=stamp(answered_at),
            conversation_id=self.host.conversation_id,
            event="call",
            call_id=call_id,
            capability=capability_name,
            risk=risk,
            agent=identity.agent_id,
            session=identity.session,
            reason=reason,
            arguments_digest=digest(arguments),
            decision=decision,
            decided_by=decided_by,
            status=status,
            received_at=stamp(received_at),
            decided_at=None if decided_at is None else stamp(decided_at),
            answered_at=stamp(answered_at),
            result_digest=digest(answer),
        )
        self.recent.appendleft(
            {
                "call_id": call_id,
                "capability": capability_name,
                "status": status,
                "decided_by": decided_by,
            }
        )
        for _ in range(owed):  # every app.call message that carried the call_id (H22)
            self._send(answer, identity)
        self.views.changed()

    def _send(self, answer: dict[str, Any], identity: Identity) -> None:
        # A copy each time: a subscriber editing its envelope cannot change the record (C12).
        # To the identity's own endpoint: a namesake connected since hears nothing (H27, H41).
        self._send_envelope(
            "lineup.v1.app.result",
            loads(dumps(answer), max_bytes=1 << 30),
            to=identity.agent_id,
            endpoint=identity.endpoint,
        )

    def _answer_of(self, key: CallKey) -> dict[str, Any]:
        answer = self.ledger.answer(key)
        assert answer is not None
        return answer

    def refuse(
        self,
        call_id: str,
        error: dict[str, Any],
        *,
        to: str | None,
        endpoint: object = None,
        identity: Identity,
    ) -> bool:
        """An app.call the host refused before the broker (a bad envelope, a bug of ours):
        unless its call_id has an answer already in its sender's scope (C12, H27: a sender
        the host could not bind, an id another endpoint holds or a reserved one, is
        ``NOBODY``'s), this failure is its one answer, sent and audited (C13). False when it
        had one: nothing is sent."""
        answer = {"call_id": call_id, "status": "failed", "error": error}
        if not self.ledger.refuse((identity, call_id), answer):
            return False
        self._send_envelope("lineup.v1.app.result", answer, to=to, endpoint=endpoint)
        at = stamp(utc_now())
        self._audit(
            at=at,
            conversation_id=self.host.conversation_id,
            event="call",
            call_id=call_id,
            agent=to,
            session=None if identity is NOBODY else identity.session,
            status=answer["status"],
            received_at=at,
            answered_at=at,
            result_digest=digest(answer),
        )
        return True

    def _audit(self, **fields: Any) -> None:
        # An answer goes out even when the audit cannot be written (a full disk, a data dir
        # without write permission): the agent must never wait forever (C10). The failure
        # is logged as an error, for the user to fix.
        try:
            self.audit.record(**fields)
        except Exception as exc:  # counted by the audit: verify() reports it, a gap row follows
            logger.error("[lineup] the audit could not be written to %s: %s", self.audit.path, exc)

    def fail_waiting(self, names: Collection[str], reason: str) -> None:
        """Calls of the capabilities ``names`` still waiting for the user end ``failed``
        with ``reason``, never run: what would run them is gone (an MCP server ended)."""
        for call in list(self.pending.values()):
            if call.capability.name in names:
                self._stop_waiting(call)
                self._answer(
                    **self._base(call),
                    status="failed",
                    error=_error("failed", "C11", "$.payload.capability", reason),
                )

    # ---- grants, visibility and views ------------------------------------------------

    def _grant_changed(
        self, name: str, action: str, identity: Identity | None, decided_by: str
    ) -> None:
        capability = self.capabilities.get(name)
        self._audit(
            at=stamp(utc_now()),
            conversation_id=self.host.conversation_id,
            event="grant",
            capability=name,
            risk=None if capability is None else capability.risk,
            agent=None if identity is None else identity.agent_id,
            session=None if identity is None else identity.session,
            decision=action,
            decided_by=decided_by,
        )
        self._visibility_changed()
        self.views.changed()

    def _visibility_changed(self) -> None:
        self._end_hidden_calls()
        self._on_visibility_changed()

    def _end_hidden_calls(self) -> None:
        """A capability revoked or denied while calls of it wait: those calls end now, as a
        new call would (C3, H26), and nothing the user might still click runs it."""
        for call in list(self.pending.values()):
            current = self.capabilities.get(call.capability.name)
            if current is not None and self.policy.visible(current):
                continue
            self._stop_waiting(call)
            name = call.capability.name
            if current is None:
                self._answer(
                    **self._base(call),
                    status="unsupported",
                    error=_error(
                        "unsupported",
                        "C3",
                        "$.payload.capability",
                        f"{name!r} was revoked while the call waited. " + rules.RULES["C3"],
                    ),
                )
            else:
                self._answer(
                    **self._base(call),
                    status="rejected",
                    decision="deny",
                    decided_by="policy",
                    decided_at=utc_now(),
                    error=_error(
                        "rejected",
                        "C10",
                        "$.payload.capability",
                        f"the user's policy denies {name!r}.",
                    ),
                )

    def inventory_entries(self) -> list[dict[str, Any]]:
        """client.inventory's capabilities: the registry after policy (C4, C7)."""
        return [c.entry() for c in self._visible()]

    def list_entries(self) -> list[dict[str, Any]]:
        """app.list's capabilities (C7)."""
        return [c.list_entry() for c in self._visible()]

    def _visible(self) -> list[Capability]:
        """What the lists show every agent: not those only some agents may call."""
        found = (self.capabilities.get(name) for name in self.capabilities)
        return [c for c in found if c is not None and c.callers is None and self.policy.visible(c)]

    def _callable_names(self, agent: str) -> list[str]:
        found = (self.capabilities.get(name) for name in self.capabilities)
        return [c.name for c in found if c is not None and c.callable_by(agent)]


def _browser_result(outcome: dict[str, Any]) -> dict[str, Any]:
    """The browser's report of what it did, or the failure it reported (H21)."""
    if outcome.get("ok") is True and isinstance(outcome.get("result"), dict):
        result: dict[str, Any] = outcome["result"]
        return result
    message = outcome.get("message")
    text = message[:200] if isinstance(message, str) else "no reason given"
    raise CapabilityError(f"the browser could not do it: {text}")


def _error(code: str, rule: str, path: str, message: str) -> dict[str, Any]:
    return {"code": code, "rule": rule, "path": path[:1024], "message": message[:4096]}


def _suggest(name: str, known: list[str]) -> str:
    import difflib

    close = difflib.get_close_matches(name, known, n=1)
    return (
        f" (did you mean {close[0]!r}?)" if close else f"; declared: {', '.join(known) or 'none'}"
    )
