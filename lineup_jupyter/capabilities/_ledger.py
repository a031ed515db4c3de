"""Each call_id's one answer (C12, H22): the ledger of the app.calls a host received.

The one owner of "exactly one answer per call_id". A call_id is the requester's own name for
a request, so it is scoped to the identity the host assigned to its sender (H27,
core/_identity.py): the key is ``(identity, call_id)``, and another agent (or a namesake on
another connection) using the same call_id can neither read the first one's answer nor block
it. Within that scope a call_id names one request, remembered by its fingerprint (the
capability and the arguments, canonical JSON, hashed):

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
from dataclasses import dataclass
from typing import Any

from ..core._identity import Identity
from ..protocol import rules
from ..protocol._errors import ProtocolError
from ..protocol._json import dumps, loads

__all__ = ["CallKey", "CallLedger", "fingerprint_of"]

CallKey = tuple[Identity, str]  # (who sent it, as the host knows them; their call_id)

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
    owed: int = 0  # app.call messages waiting for the answer (all of one identity)


class CallLedger:
    """(identity, call_id) -> its request's fingerprint and its one answer."""

    def __init__(self) -> None:
        self._entries: dict[CallKey, _Entry] = {}

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def check(self, key: CallKey, fingerprint: str) -> None:
        """Refuse a call_id its sender already used for a different request (C12); a repeat
        passes, and so does any other identity's use of the same call_id (H27)."""
        entry = self._entries.get(key)
        if entry is not None and entry.fingerprint != fingerprint:
            raise ProtocolError(
                "call_conflict",
                "C12",
                "$.payload.call_id",
                f"call_id {key[1]!r} was already used for a different request; "
                "use a new call_id for a new call. " + rules.RULES["C12"],
            )

    def join(self, key: CallKey) -> dict[str, Any] | None:
        """A repeat of a known call (``check`` passed): its answer, or None while the first
        still waits, and one more app.result is owed when it comes (H22)."""
        entry = self._entries[key]
        if entry.answer is None:
            entry.owed += 1
            return None
        return _copy(entry.answer)

    def wait(self, key: CallKey, fingerprint: str) -> None:
        """A new call waits for the user: repeats from now on join it."""
        if key in self._entries:
            raise KeyError(f"call {key[1]!r} is already in the ledger")
        self._entries[key] = _Entry(fingerprint, None, 1)

    def settle(self, key: CallKey, answer: dict[str, Any], *, fingerprint: str) -> int:
        """Record the call's one answer; returns how many app.results are owed: one per
        message that carried the call_id while it waited, else 1 (answered as it arrived).
        A second answer for one call is a bug of ours and raises."""
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _Entry(fingerprint, _copy(answer))
            return 1
        if entry.answer is not None or entry.fingerprint != fingerprint:
            raise KeyError(f"call {key[1]!r} already has its answer (C12)")
        entry.answer = _copy(answer)
        owed, entry.owed = entry.owed, 0
        return owed

    def refuse(self, key: CallKey, answer: dict[str, Any]) -> bool:
        """A call refused before the broker: ``answer`` is its one answer unless the call_id
        has one (or waits for one) already. True when recorded: then send it."""
        if key in self._entries:
            return False
        self._entries[key] = _Entry(_REFUSED, _copy(answer))
        return True

    def waiting(self, key: CallKey) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry.answer is None

    def answer(self, key: CallKey) -> dict[str, Any] | None:
        """A copy of the call's answer; None while it waits or when it is unknown."""
        entry = self._entries.get(key)
        return None if entry is None or entry.answer is None else _copy(entry.answer)

    def fingerprint(self, key: CallKey) -> str:
        return self._entries[key].fingerprint

    def snapshot(self) -> dict[CallKey, tuple[str, dict[str, Any] | None]]:
        """Every call with its fingerprint and answer (copies): what a refusal must leave as
        it was."""
        return {
            key: (entry.fingerprint, None if entry.answer is None else _copy(entry.answer))
            for key, entry in self._entries.items()
        }
