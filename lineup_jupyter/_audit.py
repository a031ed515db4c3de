"""The audit trail of calls and authorization decisions (C13), in an embedded SQLite file.

One row per answered call (with the decision that led to its status, who made it, and when)
and one per change of a grant (remembered, revoked, pre-allowed, denied). Every row carries
the hash of the row before it, and its own hash over its fields and that link, so a row
edited, inserted or deleted in the middle breaks the chain at a place ``verify`` names.
Removing rows from the end cannot be seen from the rows that are left; docs/capabilities.md
says so.
"""

from __future__ import annotations

import hashlib
import html
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._store import connect
from .protocol._json import dumps

__all__ = ["Audit", "AuditTable", "AuditVerification", "digest"]

GENESIS = "0" * 64  # the "previous hash" of the first row

# The columns a row hashes, in this order; seq and hash are not hashed (seq is the chain's
# position, checked through prev_hash).
FIELDS: tuple[str, ...] = (
    "at",
    "conversation_id",
    "event",
    "call_id",
    "capability",
    "risk",
    "agent",
    "reason",
    "arguments_digest",
    "decision",
    "decided_by",
    "status",
    "received_at",
    "decided_at",
    "answered_at",
    "result_digest",
    "prev_hash",
)

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join(f"{name} TEXT" for name in FIELDS)},
    hash TEXT NOT NULL
)
"""


def digest(value: Any) -> str:
    """sha256 hex of a JSON value's compact serialisation (what the audit keeps of it)."""
    return hashlib.sha256(dumps(value).encode()).hexdigest()


def _row_hash(row: dict[str, Any]) -> str:
    return digest([row.get(name) for name in FIELDS])


@dataclass(frozen=True)
class AuditVerification:
    """What ``Audit.verify`` found: ``ok``, how many rows it read, and the first broken one."""

    ok: bool
    rows: int
    first_broken: int | None = None  # the seq of the first row whose link or hash is wrong
    problem: str | None = None

    def __bool__(self) -> bool:
        return self.ok


class AuditTable(Sequence[dict[str, Any]]):
    """Rows of the audit, oldest first; shown as an HTML table in a notebook."""

    COLUMNS = (
        "seq",
        "answered_at",
        "event",
        "call_id",
        "capability",
        "risk",
        "agent",
        "reason",
        "decision",
        "decided_by",
        "status",
    )

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self._rows = rows

    def __getitem__(self, index: Any) -> Any:
        return self._rows[index]

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._rows)

    def _repr_html_(self) -> str:
        # Every value is escaped: reasons and capability names come from agents.
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.COLUMNS)
        body = "".join(
            "<tr>"
            + "".join(
                f"<td>{html.escape('' if row.get(c) is None else str(row.get(c)))}</td>"
                for c in self.COLUMNS
            )
            + "</tr>"
            for row in self._rows
        )
        caption = f"<caption>lineup audit: {len(self._rows)} rows</caption>"
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    def __repr__(self) -> str:
        return f"AuditTable({len(self._rows)} rows)"


class Audit:
    """The audit database at ``path``; opened on first use, shared safely between kernels."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            self._connection = connect(self.path)
            self._connection.execute(_SCHEMA)
        return self._connection

    def record(self, **fields: Any) -> None:
        """Append one row; ``fields`` are FIELDS but prev_hash (the chain fills that in)."""
        unknown = set(fields) - set(FIELDS)
        if unknown or "prev_hash" in fields:
            raise ValueError(f"not audit fields: {sorted(unknown | {'prev_hash'} & set(fields))}")
        with self._lock:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")  # another kernel cannot append between read and write
            try:
                last = db.execute("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
                row = {name: fields.get(name) for name in FIELDS}
                row["prev_hash"] = last[0] if last else GENESIS
                names = (*FIELDS, "hash")
                db.execute(
                    f"INSERT INTO audit ({', '.join(names)}) "
                    f"VALUES ({', '.join('?' for _ in names)})",
                    [*(row[name] for name in FIELDS), _row_hash(row)],
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def query(
        self,
        *,
        call_id: str | None = None,
        capability: str | None = None,
        agent: str | None = None,
        status: str | None = None,
        limit: int = 100,
    ) -> AuditTable:
        """The newest ``limit`` rows matching every given filter, oldest first."""
        where = [
            (column, value)
            for column, value in (
                ("call_id", call_id),
                ("capability", capability),
                ("agent", agent),
                ("status", status),
            )
            if value is not None
        ]
        sql = "SELECT * FROM audit"
        if where:
            sql += " WHERE " + " AND ".join(f"{column} = ?" for column, _ in where)
        sql += " ORDER BY seq DESC LIMIT ?"
        with self._lock:
            cursor = self._db().execute(sql, [value for _, value in where] + [limit])
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
        return AuditTable(rows[::-1])

    def verify(self) -> AuditVerification:
        """Walk the whole chain; report the first row whose link or own hash is wrong."""
        with self._lock:
            cursor = self._db().execute("SELECT * FROM audit ORDER BY seq")
            names = [d[0] for d in cursor.description]
            previous = GENESIS
            count = 0
            for values in cursor:
                row = dict(zip(names, values, strict=True))
                count += 1
                if row["prev_hash"] != previous:
                    return AuditVerification(
                        False,
                        count,
                        row["seq"],
                        "its prev_hash is not the previous row's hash "
                        "(a row before it was changed, inserted or deleted)",
                    )
                if _row_hash(row) != row["hash"]:
                    return AuditVerification(
                        False, count, row["seq"], "its fields do not hash to its hash (edited)"
                    )
                previous = row["hash"]
        return AuditVerification(True, count)

    def _repr_html_(self) -> str:
        return self.query()._repr_html_()

    def __repr__(self) -> str:
        return f"Audit({str(self.path)!r})"

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
