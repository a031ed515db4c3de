"""Building lineup.v1 envelopes and the protocol's timestamps: the one place that writes them.

Every time the host or an agent writes (an envelope's ``ts``, a call's ``expires_at``, a
ledger's ``at``) is UTC to the millisecond with a ``Z``, e.g. ``2026-12-04T15:54:21.123Z``:
RFC 3339 (C9, H1), sortable as text, and what JavaScript's ``Date.toISOString`` writes, so
kernel and browser stamps read alike.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from . import _rules as rules
from ._ids import new_id

__all__ = ["new_envelope", "now_iso", "stamp", "utc_now"]

PartyKind = Literal["agent", "client"]


def utc_now() -> datetime:
    """The current moment, aware and in UTC (what ``stamp`` takes)."""
    return datetime.now(timezone.utc)


def stamp(moment: datetime) -> str:
    """``moment`` in the protocol's format: UTC, milliseconds, ``Z``.

    A naive datetime is refused: its zone is a guess, and a guessed stamp is wrong by hours.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"a protocol timestamp needs an aware datetime, not {moment!r}")
    utc = moment.astimezone(timezone.utc)
    return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def now_iso() -> str:
    """The current moment in the protocol's format."""
    return stamp(utc_now())


def new_envelope(
    type_: str,
    payload: dict[str, Any],
    *,
    conversation_id: str,
    sender: tuple[PartyKind, str],
    target: tuple[PartyKind, str] | None = None,
    message_id: str | None = None,
    ts: str | None = None,
) -> dict[str, Any]:
    """One lineup.v1 envelope as a JSON object (H1), not yet validated.

    ``sender`` and ``target`` are ``(kind, id)``; ``message_id`` defaults to a fresh
    ``msg_`` id; ``ts`` (optional on the wire) is left out when None: pass ``now_iso()``.
    """
    message: dict[str, Any] = {
        "v": rules.ENVELOPE_VERSION,
        "id": new_id("msg") if message_id is None else message_id,
        "type": type_,
        "conversation_id": conversation_id,
        "sender": {"kind": sender[0], "id": sender[1]},
    }
    if ts is not None:
        message["ts"] = ts
    message["payload"] = payload
    if target is not None:
        message["target"] = {"kind": target[0], "id": target[1]}
    return message
