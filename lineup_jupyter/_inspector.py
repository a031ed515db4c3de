"""What the inspector shows, derived from what the host already keeps (no widget here).

The history (``host.history``) is the one record of the conversation, and the inspector only
reads it: a capability call is an ``app.call`` record paired with its ``app.result``, an
inventory revision is a ``client.inventory`` record, a refusal (an agent's envelope, a
surface's message, a CSP violation, a flood) is a ``refused`` record. Surface states come
from ``host.state_history``. So Python (``host.history.select(...)``) and the view show the
same records, and the inspector costs nothing until it is displayed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._bus import Record

if TYPE_CHECKING:
    from ._broker import PendingCall
    from ._surfaces import Surfaces

__all__ = ["PREVIEW_CHARS", "calls", "inventories", "preview", "surfaces"]

# A view gets records with long strings cut (a bundle is up to megabytes, and a view keeps
# as many records as the history); History.export writes them whole.
PREVIEW_CHARS = 2000

_CALL = "lineup.v1.app.call"
_RESULT = "lineup.v1.app.result"
_CALL_FIELDS = (
    "call_id",
    "capability",
    "agent",
    "reason",
    "arguments",
    "requested",
    "requests",
    "refused",
    "status",
    "answered",
    "result",
    "error",
)


def preview(record: Record) -> dict[str, Any]:
    """A record as the view shows it: ``Record.to_json`` with every string of more than
    PREVIEW_CHARS characters cut and marked."""
    shown: dict[str, Any] = _shorten(record.to_json())
    return shown


def _shorten(value: Any) -> Any:
    if isinstance(value, str):
        if len(value) <= PREVIEW_CHARS:
            return value
        return f"{value[:PREVIEW_CHARS]}… [{len(value) - PREVIEW_CHARS} more characters]"
    if isinstance(value, dict):
        return {key: _shorten(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shorten(item) for item in value]
    return value


def calls(records: Iterable[Record], pending: Iterable[PendingCall]) -> list[dict[str, Any]]:
    """Every capability call in the history, oldest first: who asked for what, and what
    became of it (the ``app.result`` status, or ``waiting for the user`` / ``running``).

    A refused ``app.call`` that had a call_id is listed too, with ``refused`` (the error):
    it was answered by a failed ``app.result`` (C10), and the table should say why.
    """
    found: dict[str, dict[str, Any]] = {}
    for record in records:
        kind = record.type
        if record.kind == "handler_error" or kind not in (_CALL, _RESULT):
            continue
        envelope = record.envelope
        payload = envelope.get("payload")
        if not isinstance(payload, dict) or not isinstance(payload.get("call_id"), str):
            continue  # refused before it was a call of anything
        call_id: str = payload["call_id"]
        entry = found.get(call_id)
        if entry is None:  # the first sight; its app.call may have fallen off the history
            entry = found[call_id] = dict.fromkeys(_CALL_FIELDS)
            entry.update(call_id=call_id, requests=0)
        if kind == _CALL:
            entry["requests"] += 1  # a repeat with the same call_id is answered once (C12)
            if entry["requested"] is None:
                sender = envelope.get("sender")
                entry.update(
                    capability=payload.get("capability"),
                    agent=sender.get("id") if isinstance(sender, dict) else None,
                    reason=payload.get("reason"),
                    arguments=payload.get("arguments"),
                    requested=record.time,
                    refused=record.error,
                )
        elif entry["status"] is None:  # the first answer decides; repeats repeat it
            entry.update(
                status=payload["status"],
                answered=record.time,
                result=payload.get("result"),
                error=payload.get("error"),
            )
    waiting = {call.call_id for call in pending}
    for entry in found.values():
        if entry["status"] is None:
            entry["status"] = "waiting for the user" if entry["call_id"] in waiting else "running"
    return list(found.values())


def inventories(records: Iterable[Record]) -> list[dict[str, Any]]:
    """Every ``client.inventory`` sent, oldest first, with what it listed."""
    sent = []
    for record in records:
        if record.kind != "envelope" or record.type != "lineup.v1.client.inventory":
            continue
        envelope = record.envelope
        payload = envelope["payload"]
        target = envelope.get("target")
        sent.append(
            {
                "seq": record.seq,
                "time": record.time,
                "revision": payload["revision"],
                "to": target.get("id") if isinstance(target, dict) else None,
                "applications": [
                    f"{app['id']} {app['version']}" for app in payload["applications"]
                ],
                "capabilities": [
                    f"{capability['name']} ({capability['risk']})"
                    for capability in payload["capabilities"]
                ],
                "standard_components": len(payload["standard_components"]),
            }
        )
    return sent


def surfaces(registry: Surfaces) -> list[dict[str, Any]]:
    """Each instance the host remembers states of, open ones first, with its last revision."""
    rows = []
    for instance_id, states in registry._states.items():
        current = registry.get(instance_id)
        rows.append(
            {
                "instance_id": instance_id,
                "open": current is not None,
                "app": current.app.id if current is not None else None,
                "owner": current.owner if current is not None else None,
                "revision": states[-1].revision,
                "revisions": len(states),
            }
        )
    rows.sort(key=lambda row: not row["open"])  # stable: in order of first open otherwise
    return rows
