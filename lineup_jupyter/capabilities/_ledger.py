"""Each call_id's one answer (C12, H22): the ledger of the app.calls a host received.

The one owner of "exactly one answer per call_id". A call_id names one request, remembered
by its fingerprint (the capability and the arguments, canonical JSON, hashed):

- a repeat with the same fingerprint gets the recorded answer, now, or when the first call
  ends if it is still waiting for the user: never a second prompt, nor a second run (H22);
- a different request under a used call_id is refused (``call_conflict``, C12);
- a call_id refused before the broker (a bad envelope, a bug of ours) keeps that refusal as
  its one answer, and no later request can take the id.

The broker records here; the host only asks ``check`` before it accepts a call. Not
thread-safe on its own: it runs under the host's lock, as the broker does.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..protocol import rules
from ..protocol._errors import ProtocolError
from ..protocol._json import dumps, loads

__all__ = ["CallLedger", "fingerprint_of"]

# The fingerprint of a call_id refused before the broker: no request's fingerprint matches it
# (those are 64 hex digits), so the id can never be used again.
_REFUSED = "refused"


def fingerprint_of(capability: str, arguments: dict[str, Any]) -> str:
    """What a call_id is remembered by (C12): the sha256 of its capability and arguments as
    canonical JSON, 64 characters however large the arguments were. Canonical: an object's
    members sorted, so a retry that writes the same arguments in another order (another
    process, another JSON library) is the same request, as JSON says it is."""
    canonical = json.dumps(
        {"capability": capability, "arguments": arguments},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _copy(answer: dict[str, Any]) -> dict[str, Any]:
    # A copy each time: whoever edits what they got cannot change the record (C12).
    return loads(dumps(answer), max_bytes=1 << 30)  # type: ignore[no-any-return]


@dataclass
class _Entry:
    fingerprint: str
    answer: dict[str, Any] | None  # None while the call waits for the user
    owed: list[str] = field(default_factory=list)  # one agent per app.call message waiting


class CallLedger:
    """call_id -> its request's fingerprint and its one answer."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def check(self, call_id: str, fingerprint: str) -> None:
        """Refuse a call_id already used for a different request (C12); a repeat passes."""
        entry = self._entries.get(call_id)
        if entry is not None and entry.fingerprint != fingerprint:
            raise ProtocolError(
                "call_conflict",
                "C12",
                "$.payload.call_id",
                f"call_id {call_id!r} was already used for a different request; "
                "use a new call_id for a new call. " + rules.RULES["C12"],
            )

    def join(self, call_id: str, agent: str) -> dict[str, Any] | None:
        """A repeat of a known call (``check`` passed): its answer for ``agent``, or None
        while the first still waits, and ``agent`` is owed the answer when it comes (H22)."""
        entry = self._entries[call_id]
        if entry.answer is None:
            entry.owed.append(agent)
            return None
        return _copy(entry.answer)

    def wait(self, call_id: str, fingerprint: str, agent: str) -> None:
        """A new call waits for the user: repeats from now on join it."""
        if call_id in self._entries:
            raise KeyError(f"call {call_id!r} is already in the ledger")
        self._entries[call_id] = _Entry(fingerprint, None, [agent])

    def settle(
        self, call_id: str, answer: dict[str, Any], *, fingerprint: str, agent: str
    ) -> list[str]:
        """Record the call's one answer; returns who is owed it: every message that carried
        the call_id while it waited, else ``agent`` (answered as it arrived). A second
        answer for one call_id is a bug of ours and raises."""
        entry = self._entries.get(call_id)
        if entry is None:
            self._entries[call_id] = _Entry(fingerprint, _copy(answer))
            return [agent]
        if entry.answer is not None or entry.fingerprint != fingerprint:
            raise KeyError(f"call {call_id!r} already has its answer (C12)")
        entry.answer = _copy(answer)
        owed, entry.owed = entry.owed, []
        return owed

    def refuse(self, call_id: str, answer: dict[str, Any]) -> bool:
        """A call refused before the broker: ``answer`` is its one answer unless the call_id
        has one (or waits for one) already. True when recorded: then send it."""
        if call_id in self._entries:
            return False
        self._entries[call_id] = _Entry(_REFUSED, _copy(answer))
        return True

    def waiting(self, call_id: str) -> bool:
        entry = self._entries.get(call_id)
        return entry is not None and entry.answer is None

    def answer(self, call_id: str) -> dict[str, Any] | None:
        """A copy of the call's answer; None while it waits or when it is unknown."""
        entry = self._entries.get(call_id)
        return None if entry is None or entry.answer is None else _copy(entry.answer)

    def fingerprint(self, call_id: str) -> str:
        return self._entries[call_id].fingerprint

    def snapshot(self) -> dict[str, tuple[str, dict[str, Any] | None]]:
        """Every call_id with its fingerprint and answer (copies): what a refusal must leave
        as it was."""
        return {
            call_id: (entry.fingerprint, None if entry.answer is None else _copy(entry.answer))
            for call_id, entry in self._entries.items()
        }
