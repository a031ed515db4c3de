"""The audit trail of calls and authorization decisions (C13), in an embedded SQLite file.

One row per answered call (with the decision that led to its status, who made it, and when)
and one per change of a grant (remembered, revoked, pre-allowed, denied). Every row carries
the MAC of the row before it, and its own MAC over its fields and that link: HMAC-SHA256
with a key kept in a separate file (``audit.key``, 0600). A row edited, inserted or
deleted anywhere breaks the chain at a place ``verify`` names, and without the key no one
can recompute the chain after an edit. What the rows alone cannot show, rows removed from
the end or all of them, the anchor shows: ``audit.anchor`` (0600, overwritten in place
under a lock after each committed row) holds the last row's seq and MAC, under a MAC of its
own.
docs/capabilities.md says exactly what an attacker with which files can and cannot hide.

The audit fails closed. Before a call runs, ``begin`` writes its call_id to
``audit_pending`` (a real write: a full disk or a read-only data dir fails it, and the call
is answered ``failed`` without running); the call's row deletes it in the same transaction.
A row that cannot be written is counted, and the next row that can is preceded by a ``gap``
row saying how many were lost. ``verify`` reports all three: a gap row, a call left pending
(it ran, its row never came), rows lost in this kernel not yet recorded.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import html
import json
import os
import re
import secrets
import sqlite3
import tempfile
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..protocol._json import dumps
from ..runtime._store import connect

try:
    import fcntl
except ImportError:  # Windows: the anchor is written without a cross-process lock
    fcntl = None  # type: ignore[assignment]
_LOCK_SHARED = 1 if fcntl is None else fcntl.LOCK_SH
_LOCK_EXCLUSIVE = 2 if fcntl is None else fcntl.LOCK_EX
_ANCHOR_BYTES = 256  # the anchor's JSON is about 190 bytes; padded to this with spaces

__all__ = ["Audit", "AuditTable", "AuditVerification", "digest"]

GENESIS = "0" * 64  # the "previous hash" of the first row

# The columns a row's MAC covers, in this order; seq and hash are not covered (seq is the
# chain's position, checked through prev_hash).
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
    "session",
)
# ``session`` came after rows were first sealed: the host's number for the agent's binding
# (H27: 0 the kernel's own agents, else one connection or MCP server session), which tells
# a namesake from the agent it imitates. It is in a row's MAC only when the row has one, so
# rows written before it still verify, and one added to or taken from a row breaks its MAC.
_SEALED = tuple(name for name in FIELDS if name != "session")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join(f"{name} TEXT" for name in FIELDS)},
    hash TEXT NOT NULL
)
"""
_PENDING_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS audit_pending (call_id TEXT PRIMARY KEY, at TEXT NOT NULL)"
)
_KEY_FORM = re.compile(r"[0-9a-f]{64}")
_NAMED = 5  # call ids a verify problem names, at most


def digest(value: Any) -> str:
    """sha256 hex of a JSON value's compact serialisation (what the audit keeps of it)."""
    return hashlib.sha256(dumps(value).encode()).hexdigest()


def _unkeyed_hash(row: dict[str, Any]) -> str:
    """The hash rows had before the audit was keyed: only to check a table being migrated."""
    return digest([row.get(name) for name in _SEALED])


def _unkeyed_chain_intact(rows: list[dict[str, Any]]) -> bool:
    """Whether ``rows`` form the chain the unkeyed audit wrote (true for no rows at all)."""
    previous = GENESIS
    for row in rows:
        if row["prev_hash"] != previous or _unkeyed_hash(row) != row["hash"]:
            return False
        previous = row["hash"]
    return True


def _add_session_column(db: sqlite3.Connection) -> None:
    """A table made before ``session`` gets the column (its rows: none, which their MACs
    expect); another kernel adding it meanwhile is no error."""
    if "session" in {column[1] for column in db.execute("PRAGMA table_info(audit)")}:
        return
    try:
        db.execute("ALTER TABLE audit ADD COLUMN session TEXT")
    except sqlite3.OperationalError as exc:
        if "duplicate column" not in str(exc):
            raise


def _seal(key: bytes, row: dict[str, Any]) -> str:
    """A row's MAC. A field an editor made unserialisable seals to nothing that matches."""
    values = [row.get(name) for name in _SEALED]
    if row.get("session") is not None:
        values.append(row["session"])
    try:
        text = dumps(values)
    except (TypeError, ValueError):
        return ""
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def _anchor_mac(key: bytes, seq: int, head: str) -> str:
    text = dumps(["lineup-audit-anchor", seq, head])
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def _same(expected: str, found: Any) -> bool:
    return hmac.compare_digest(expected.encode(), str(found).encode("utf-8", "replace"))


@dataclass(frozen=True)
class AuditVerification:
    """What ``Audit.verify`` found: ``ok``, how many rows it read, the first broken one, and
    the chain's head (the last row's MAC: keep a copy elsewhere to pin the history)."""

    ok: bool
    rows: int
    first_broken: int | None = None  # the seq of the first row whose link or MAC is wrong
    problem: str | None = None
    head: str | None = None

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class _Anchor:
    seq: int  # the last row it vouches for (0: none yet); seq only grows (AUTOINCREMENT)
    head: str


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
        "session",
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


class _OwnConversation:
    """The default of ``query(conversation_id=...)``: the audit's own conversation."""

    def __repr__(self) -> str:
        return "the audit's conversation"


_OWN_CONVERSATION: Any = _OwnConversation()


class Audit:
    """The audit database at ``path``; opened on first use, shared safely between kernels.
    Its key and anchor live beside it: ``audit.key`` and ``audit.anchor``.

    Every kernel using the same data dir writes to one database; ``conversation_id`` (a host's
    audit has its own) is what ``query()`` shows unless told otherwise, so a notebook sees its
    own rows, not another process's.
    """

    def __init__(self, path: Path, conversation_id: str | None = None) -> None:
        self.path = path
        self.conversation_id = conversation_id
        self.key_path = path.with_suffix(".key")
        self.anchor_path = path.with_suffix(".anchor")
        self._connection: sqlite3.Connection | None = None
        self._key = b""
        self._lock = threading.Lock()
        self._lost = 0  # rows that could not be written since the last that could
        self._lost_first = ""  # why the first of them could not
        self._running: set[str] = set()  # call_ids begun here, their rows not written yet

    def _db(self) -> sqlite3.Connection:
        if self._connection is None:
            connection = connect(self.path)
            try:
                connection.execute(_SCHEMA)
                _add_session_column(connection)
                connection.execute(_PENDING_SCHEMA)
                self._key = _load_key(self.key_path)
                if not self.anchor_path.exists():
                    self._first_anchor(connection)
            except BaseException:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    # ---- the anchor ------------------------------------------------------------------

    # The anchor is one fixed-size record (_ANCHOR_BYTES), overwritten in place with one
    # write under an exclusive flock and read under a shared one: a reader never sees half
    # of it, and no rename per row (a rename cost 1.4 ms here; the whole row costs 0.1 ms).

    @contextlib.contextmanager
    def _anchor_file(self, flags: int, lock: int) -> Iterator[int | None]:
        """The anchor file open and locked (``lock``: fcntl.LOCK_SH or LOCK_EX), or None when
        there is none (and ``flags`` does not create it)."""
        try:
            descriptor = os.open(self.anchor_path, flags | getattr(os, "O_CLOEXEC", 0), 0o600)
        except FileNotFoundError:
            yield None
            return
        try:
            if fcntl is not None:
                fcntl.flock(descriptor, lock)
            yield descriptor
        finally:
            os.close(descriptor)  # releases the lock

    def _anchor_record(self, seq: int, head: str) -> bytes:
        text = json.dumps({"seq": seq, "head": head, "mac": _anchor_mac(self._key, seq, head)})
        return text.encode().ljust(_ANCHOR_BYTES)

    def _parse_anchor(self, data: bytes) -> tuple[_Anchor | None, str | None]:
        """The anchor in ``data``, or why it cannot be trusted."""
        try:
            value = json.loads(data)
            seq, head, mac = value["seq"], value["head"], value["mac"]
            if not (isinstance(seq, int) and isinstance(head, str) and isinstance(mac, str)):
                raise TypeError("not an anchor")
        except (ValueError, KeyError, TypeError) as exc:
            return None, f"the anchor file {self.anchor_path.name} cannot be read ({exc})"
        if not _same(_anchor_mac(self._key, seq, head), mac):
            return None, (
                f"the anchor file {self.anchor_path.name} does not match its MAC: it was "
                "written without this data dir's key"
            )
        return _Anchor(seq, head), None

    def _read_anchor(self) -> tuple[_Anchor | None, str | None]:
        """The anchor, or None when there is none; and why it cannot be trusted, if so."""
        try:
            with self._anchor_file(os.O_RDONLY, _LOCK_SHARED) as descriptor:
                if descriptor is None:
                    return None, None
                data = _read_start(descriptor)
        except OSError as exc:
            return None, f"the anchor file {self.anchor_path.name} cannot be read ({exc})"
        return self._parse_anchor(data)

    def _advance_anchor(self, seq: int, head: str) -> None:
        """After a commit: move the anchor up to row ``seq``, never back. A missing or altered
        anchor is left as it is: it is the evidence ``verify`` reports."""
        with self._anchor_file(os.O_RDWR, _LOCK_EXCLUSIVE) as descriptor:
            if descriptor is None:
                return
            anchor, problem = self._parse_anchor(_read_start(descriptor))
            if anchor is not None and problem is None and anchor.seq < seq:
                _write_start(descriptor, self._anchor_record(seq, head))

    def _create_anchor(self, seq: int, head: str) -> None:
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL
        with self._anchor_file(flags, _LOCK_EXCLUSIVE) as descriptor:
            assert descriptor is not None  # O_CREAT
            _write_start(descriptor, self._anchor_record(seq, head))

    def _first_anchor(self, db: sqlite3.Connection) -> None:
        """The first open of a data dir without an anchor: anchor an empty table, or migrate
        a table written before the audit was keyed (its unkeyed chain checked intact first,
        then every row sealed with the key, fields unchanged). Anything else (a broken
        unkeyed chain, keyed rows without an anchor) is left for ``verify`` to report."""
        db.execute("BEGIN IMMEDIATE")  # no other kernel appends or migrates meanwhile
        try:
            cursor = db.execute("SELECT * FROM audit ORDER BY seq")
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, values, strict=True)) for values in cursor]
            if not self.anchor_path.exists() and _unkeyed_chain_intact(rows):
                previous = GENESIS
                for row in rows:
                    row["prev_hash"] = previous
                    previous = _seal(self._key, row)
                    db.execute(
                        "UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?",
                        (row["prev_hash"], previous, row["seq"]),
                    )
                with contextlib.suppress(FileExistsError):  # made meanwhile, not by a kernel
                    self._create_anchor(rows[-1]["seq"] if rows else 0, previous)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # ---- rows ------------------------------------------------------------------------

    def begin(self, call_id: str, at: str) -> str | None:
        """Before a call runs: its call_id written to ``audit_pending``, or why it cannot
        be (then the call must not run). Its row, when written, clears it."""
        with self._lock:
            try:
                db = self._db()
                db.execute(
                    "INSERT OR REPLACE INTO audit_pending (call_id, at) VALUES (?, ?)",
                    (call_id, at),
                )
            except (sqlite3.Error, OSError, ValueError) as exc:
                return f"{type(exc).__name__}: {exc}"[:500]
            self._running.add(call_id)
        return None

    def record(self, **fields: Any) -> None:
        """Append one row; ``fields`` are FIELDS but prev_hash (the chain fills that in).
        Rows lost before it (a full disk) are recorded first, as one ``gap`` row."""
        unknown = set(fields) - set(FIELDS)
        if unknown or "prev_hash" in fields:
            raise ValueError(f"not audit fields: {sorted(unknown | {'prev_hash'} & set(fields))}")
        if fields.get("session") is not None:  # sealed as the TEXT it is read back as
            fields["session"] = str(fields["session"])
        call_id = fields.get("call_id")
        with self._lock:
            self._running.discard(call_id)  # written or not: verify may now count it
            try:
                seq, seal = self._append(fields, call_id)
            except BaseException as exc:
                self._lost += 1
                self._lost_first = self._lost_first or f"{type(exc).__name__}: {exc}"[:500]
                raise
            self._lost, self._lost_first = 0, ""
            # After the commit: an anchor ahead of the table would look like a truncation.
            self._advance_anchor(seq, seal)

    def _append(self, fields: dict[str, Any], call_id: Any) -> tuple[int, str]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")  # another kernel cannot append between read and write
        try:
            last = db.execute("SELECT hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
            previous = last[0] if last else GENESIS
            rows = []
            if self._lost:
                rows.append(
                    {
                        "at": fields.get("at"),
                        "conversation_id": fields.get("conversation_id"),
                        "event": "gap",
                        "reason": f"{self._lost} audit rows could not be written: "
                        + self._lost_first,
                    }
                )
            rows.append(fields)
            names = (*FIELDS, "hash")
            seq, seal = 0, previous
            for given in rows:
                row = {name: given.get(name) for name in FIELDS}
                row["prev_hash"] = seal
                seal = _seal(self._key, row)
                inserted = db.execute(
                    f"INSERT INTO audit ({', '.join(names)}) "
                    f"VALUES ({', '.join('?' for _ in names)})",
                    [*(row[name] for name in FIELDS), seal],
                )
                seq = inserted.lastrowid or 0
            if call_id is not None:
                db.execute("DELETE FROM audit_pending WHERE call_id = ?", (call_id,))
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        return seq, seal

    def query(
        self,
        *,
        conversation_id: str | None = _OWN_CONVERSATION,
        call_id: str | None = None,
        capability: str | None = None,
        agent: str | None = None,
        session: int | None = None,
        status: str | None = None,
        limit: int = 100,
    ) -> AuditTable:
        """The newest ``limit`` rows matching every given filter, oldest first.

        ``conversation_id`` defaults to the audit's own (a host's: ``host.audit.query()`` is
        this conversation's rows); ``conversation_id=None`` reads every conversation's.
        ``session`` is the host's number for the agent's binding (``agent`` is the name it
        chose): ``agent="mcp.weather", session=2`` is that server session's rows only.

        >>> host.audit.query(status="rejected")  # doctest: +SKIP
        >>> host.audit.query(conversation_id=None, capability="artifact.save")  # doctest: +SKIP
        """
        if conversation_id is _OWN_CONVERSATION:
            conversation_id = self.conversation_id
        where = [
            (column, value)
            for column, value in (
                ("conversation_id", conversation_id),
                ("call_id", call_id),
                ("capability", capability),
                ("agent", agent),
                ("session", None if session is None else str(session)),
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
        """Walk the whole chain (links and MACs), then hold it against the anchor; report the
        first thing that is wrong."""
        with self._lock:
            db = self._db()
            # The anchor first: it is written after its row commits, so the row it names is
            # in the snapshot read next, also while another kernel appends.
            anchor, anchor_problem = self._read_anchor()
            cursor = db.execute("SELECT * FROM audit ORDER BY seq")
            names = [d[0] for d in cursor.description]
            previous = GENESIS
            count = last_seq = 0
            anchored_head: str | None = None
            for values in cursor:
                row = dict(zip(names, values, strict=True))
                count += 1
                if row["prev_hash"] != previous:
                    return AuditVerification(
                        False,
                        count,
                        row["seq"],
                        "its prev_hash is not the previous row's MAC "
                        "(a row before it was changed, inserted or deleted)",
                    )
                if not _same(_seal(self._key, row), row["hash"]):
                    return AuditVerification(
                        False,
                        count,
                        row["seq"],
                        "its fields do not match its MAC (edited, or sealed without this data "
                        "dir's key)",
                    )
                if anchor is not None and row["seq"] == anchor.seq:
                    anchored_head = row["hash"]
                previous, last_seq = row["hash"], row["seq"]
            gap = db.execute(
                "SELECT seq, reason FROM audit WHERE event = 'gap' ORDER BY seq LIMIT 1"
            ).fetchone()
            left = [
                found
                for (found,) in db.execute("SELECT call_id FROM audit_pending ORDER BY at")
                if found not in self._running
            ]
            lost, lost_first = self._lost, self._lost_first
        problem = anchor_problem
        if problem is None and lost:
            problem = (
                f"{lost} audit rows could not be written in this kernel ({lost_first}): calls "
                "were answered without their rows; a gap row records them once a row can be"
            )
        elif problem is None and left:
            problem = (
                f"{len(left)} calls ran and their audit rows were never written (call ids: "
                f"{', '.join(str(c)[:100] for c in left[:_NAMED])})"
            )
        elif problem is None and gap is not None:
            problem = f"row {gap[0]} records a gap: {gap[1]}"
        if problem is None and anchor is None:
            problem = (
                f"the anchor file {self.anchor_path.name} is missing: rows removed from the "
                "end cannot be ruled out"
            )
        elif anchor is not None and last_seq < anchor.seq:
            problem = (
                f"the table ends at row {last_seq}, the anchor records row {anchor.seq}: rows "
                "were removed from the end"
            )
        elif anchor is not None and anchor.seq > 0 and anchored_head != anchor.head:
            problem = (
                f"row {anchor.seq} is not the one the anchor records as the head: the table "
                "was replaced or rewritten"
            )
        if problem is not None:
            return AuditVerification(False, count, None, problem, previous)
        # Rows past the anchor are kept: a kernel stopped between a commit and its anchor
        # write leaves them, and they carry valid MACs that only the key can make.
        return AuditVerification(True, count, head=previous)

    def _repr_html_(self) -> str:
        return self.query()._repr_html_()

    def __repr__(self) -> str:
        if self.conversation_id is None:
            return f"Audit({str(self.path)!r})"
        return f"Audit({str(self.path)!r}, conversation_id={self.conversation_id!r})"

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None


def _load_key(path: Path) -> bytes:
    """The data dir's audit key (32 random bytes, hex, 0600), made by the first kernel. It is
    created under a temporary name and linked into place, so two kernels starting at once
    agree on one key, and no one ever reads half of it."""
    try:
        text = path.read_text("ascii").strip()
    except FileNotFoundError:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".audit-key-")
        try:
            with os.fdopen(handle, "w") as file:
                file.write(secrets.token_hex(32) + "\n")
                file.flush()
                os.fsync(file.fileno())
            with contextlib.suppress(FileExistsError):  # another kernel's key stands
                os.link(temporary, path)
        finally:
            os.unlink(temporary)
        text = path.read_text("ascii").strip()
    if not _KEY_FORM.fullmatch(text):
        raise ValueError(f"the audit key {path} is not 64 hex digits; it was altered")
    return bytes.fromhex(text)


# The anchor's descriptor is private to one call, so seeking is as good as pread/pwrite,
# which Windows lacks.
def _read_start(descriptor: int) -> bytes:
    os.lseek(descriptor, 0, os.SEEK_SET)
    return os.read(descriptor, 4 * _ANCHOR_BYTES)


def _write_start(descriptor: int, data: bytes) -> None:
    os.lseek(descriptor, 0, os.SEEK_SET)
    os.write(descriptor, data)
