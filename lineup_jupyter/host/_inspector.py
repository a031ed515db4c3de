"""What the inspector shows, derived from what the host already keeps (no widget here).

The history (``host.history``) is the one record of the conversation, and the inspector only
reads it: a capability call is an ``app.call`` record paired with its ``app.result``, an
inventory revision is a ``client.inventory`` record, a refusal (an agent's envelope, a
surface's message, a CSP violation, a flood) is a ``refused`` record. Surface states come
from ``host.state_history``. So Python (``host.history.select(...)``) and the view show the
same records, and the inspector costs nothing until it is displayed. A view's update reads
each new record once (``Summary`` is kept up to date as they come), not the whole history.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core._bus import Record

if TYPE_CHECKING:
    from ..capabilities._broker import PendingCall
    from ..core._surfaces import SurfacesView

__all__ = ["PREVIEW_CHARS", "Summary", "preview", "summarize", "surfaces"]

# A view gets records with long strings cut (a bundle is up to megabytes, and a view keeps
# as many records as the history); History.export writes them whole.
PREVIEW_CHARS = 2000

_CALL = "lineup.v1.app.call"
_RESULT = "lineup.v1.app.result"
_INVENTORY = "lineup.v1.client.inventory"
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


def preview(record: Record | dict[str, Any]) -> dict[str, Any]:
    """A record as the view shows it: ``Record.to_json`` with every string of more than
    PREVIEW_CHARS characters cut and marked."""
    shown: dict[str, Any] = _shorten(record.to_json() if isinstance(record, Record) else record)
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


class Summary:
    """The calls and the inventories of a conversation, kept up to date one record at a
    time (``add`` takes ``Record.to_json()``), so a view's update reads each message once.

    Calls: who asked for what, and what became of it (the ``app.result`` status, or
    ``waiting for the user`` / ``running``). A refused ``app.call`` that had a call_id is
    listed too, with ``refused`` (the error): it was answered by a failed ``app.result``
    (C10), and the table should say why. At most ``limit`` of each are kept, the oldest go.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._calls: dict[tuple[str | None, str], dict[str, Any]] = {}  # (agent, call_id)
        self._inventories: deque[dict[str, Any]] = deque(maxlen=limit)

    def add(self, record: dict[str, Any]) -> None:
        kind = record["type"]
        if record["kind"] == "handler_error":
            return
        if kind in (_CALL, _RESULT):
            self._add_call(record)
        elif kind == _INVENTORY and record["kind"] == "envelope":
            self._add_inventory(record)

    def _add_call(self, record: dict[str, Any]) -> None:
        envelope = record["envelope"]
        payload = envelope.get("payload")
        if not isinstance(payload, dict) or not isinstance(payload.get("call_id"), str):
            return  # refused before it was a call of anything
        call_id: str = payload["call_id"]
        # Whose call: an app.call's sender, an app.result's target. Two agents' calls under
        # one call_id are two rows, never one under the first one's name (H27).
        party = envelope.get("sender" if record["type"] == _CALL else "target")
        agent = party.get("id") if isinstance(party, dict) else None
        key = (agent if isinstance(agent, str) else None, call_id)
        entry = self._calls.get(key)
        if entry is None:  # the first sight; its app.call may have fallen off the history
            entry = self._calls[key] = dict.fromkeys(_CALL_FIELDS)
            entry.update(call_id=call_id, agent=key[0], requests=0)
            if len(self._calls) > self._limit:
                del self._calls[next(iter(self._calls))]
        if record["type"] == _CALL:
            entry["requests"] += 1  # a repeat with the same call_id is answered once (C12)
            if entry["requested"] is None:
                entry.update(
                    capability=payload.get("capability"),
                    reason=payload.get("reason"),
                    arguments=payload.get("arguments"),
                    requested=record["time"],
                    refused=record["error"],
                )
        elif entry["status"] is None:  # the first answer decides; repeats repeat it
            entry.update(
                status=payload["status"],
                answered=record["time"],
                result=payload.get("result"),
                error=payload.get("error"),
            )

    def _add_inventory(self, record: dict[str, Any]) -> None:
        envelope = record["envelope"]
        payload = envelope["payload"]
        target = envelope.get("target")
        self._inventories.append(
            {
                "seq": record["seq"],
                "time": record["time"],
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

    def calls(self, pending: Iterable[PendingCall]) -> list[dict[str, Any]]:
        """Every call, oldest first; those without a result yet are waiting or running."""
        waiting = {(call.identity.agent_id, call.call_id) for call in pending}
        found = []
        for (agent, call_id), entry in self._calls.items():
            status = entry["status"]
            if status is None:
                status = "waiting for the user" if (agent, call_id) in waiting else "running"
            found.append({**entry, "status": status})
        return found

    def inventories(self) -> list[dict[str, Any]]:
        """Every ``client.inventory`` sent, oldest first, with what it listed."""
        return list(self._inventories)


def summarize(records: Iterable[Record], limit: int = 1000) -> Summary:
    """A Summary of these records (for Python, and for a view that starts again)."""
    summary = Summary(limit)
    for record in records:
        summary.add(record.to_json())
    return summary


def surfaces(registry: SurfacesView) -> list[dict[str, Any]]:
    """Each instance the host remembers states of, open ones first, with its last revision."""
    rows = []
    for instance_id, revision, kept in registry.remembered():
        current = registry.get(instance_id)
        rows.append(
            {
                "instance_id": instance_id,
                "open": current is not None,
                "app": current.app.id if current is not None else None,
                "owner": current.owner if current is not None else None,
                "revision": revision,
                "revisions": kept,
            }
        )
    rows.sort(key=lambda row: not row["open"])  # stable: in order of first open otherwise
    return rows
