"""The audit detects what it claims (C13, issue 14): rows sealed with a keyed MAC whose key is
in its own 0600 file, and an anchor (row count and head, under a MAC) outside the table.

Each tamper is done the way an attacker with write access to the database would do it, with
sqlite3 on the file; the assertions name what verify() reports. The last tests pin down what
stays undetectable (an attacker who can read the key, or who replays an old anchor together
with a truncated table), as docs/capabilities.md says.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import Host
from lineup_jupyter.capabilities._audit import FIELDS, GENESIS, Audit, digest
from lineup_jupyter.protocol._json import dumps

from ..conftest import AGENT, CONVERSATION, envelope

# What a row's MAC covered before the ``session`` column, and what a row without a session
# still covers: the fields of the unkeyed and the first keyed tables.
BEFORE_SESSION = tuple(name for name in FIELDS if name != "session")


def row(n: int, decision: str = "allow") -> dict[str, Any]:
    return {
        "at": f"2026-12-03T20:00:{n:02d}Z",
        "conversation_id": CONVERSATION,
        "event": "call",
        "call_id": f"c{n}",
        "capability": "artifact.save",
        "risk": "user_confirmation",
        "agent": AGENT,
        "reason": "save the report",
        "arguments_digest": digest({"n": n}),
        "decision": decision,
        "decided_by": "user",
        "status": "completed" if decision == "allow" else "rejected",
    }


@pytest.fixture
def audit(tmp_path: Path) -> Audit:
    audit = Audit(tmp_path / "audit.sqlite3")
    for n in range(5):
        audit.record(**row(n))
    assert audit.verify().ok
    return audit


def execute(audit: Audit, sql: str, *parameters: Any) -> None:
    with sqlite3.connect(audit.path) as db:
        db.execute(sql, parameters)


def rows_of(audit: Audit) -> list[dict[str, Any]]:
    with sqlite3.connect(audit.path) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM audit ORDER BY seq")]


def rechain(audit: Audit, start: int, seal: Any) -> None:
    """What an attacker does after editing row ``start``: recompute every later link and
    hash with ``seal(row) -> hash``, so the chain is consistent again."""
    rows = rows_of(audit)
    previous = GENESIS if start == 1 else rows[start - 2]["hash"]
    with sqlite3.connect(audit.path) as db:
        for found in rows[start - 1 :]:
            found["prev_hash"] = previous
            previous = seal(found)
            db.execute(
                "UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?",
                (found["prev_hash"], previous, found["seq"]),
            )


def keyed(key: bytes) -> Any:
    def seal(found: dict[str, Any]) -> str:
        values = [found.get(name) for name in BEFORE_SESSION]
        if found.get("session") is not None:
            values.append(found["session"])
        return hmac.new(key, dumps(values).encode(), hashlib.sha256).hexdigest()

    return seal


def unkeyed(found: dict[str, Any]) -> str:
    return digest([found.get(name) for name in BEFORE_SESSION])


def the_key(audit: Audit) -> bytes:
    return bytes.fromhex(audit.key_path.read_text().strip())


# ---- what verify() now detects ----------------------------------------------------------------


@pytest.mark.parametrize("removed", [1, 2, 5])
def test_c13_rows_deleted_from_the_end_are_detected(audit: Audit, removed: int) -> None:
    execute(audit, "DELETE FROM audit WHERE seq > ?", 5 - removed)
    verdict = audit.verify()
    assert not verdict.ok
    assert verdict.problem == (
        f"the table ends at row {5 - removed}, the anchor records row 5: rows were removed "
        "from the end"
    )


def test_c13_a_dropped_table_is_detected(audit: Audit) -> None:
    execute(audit, "DROP TABLE audit")
    audit.close()
    verdict = Audit(audit.path).verify()  # a new kernel recreates the table, empty
    assert not verdict.ok and "rows were removed from the end" in (verdict.problem or "")


@pytest.mark.parametrize(
    ("seal", "why"),
    [(unkeyed, "unkeyed sha256, as before"), (keyed(b"\0" * 32), "a guessed key")],
    ids=["unkeyed", "wrong-key"],
)
def test_c13_an_allow_rewritten_to_deny_with_every_later_hash_recomputed_is_detected(
    audit: Audit, seal: Any, why: str
) -> None:
    execute(audit, "UPDATE audit SET decision = 'deny', status = 'rejected' WHERE seq = 3")
    rechain(audit, 3, seal)
    verdict = audit.verify()
    assert not verdict.ok and verdict.first_broken == 3, why
    assert "do not match its MAC" in (verdict.problem or "")


def test_c13_the_issue14_attacks_against_a_host(tmp_path: Path) -> None:
    """The same three attacks on a host's own audit, with real calls answered."""
    host = Host(conversation_id=CONVERSATION, data_dir=tmp_path)
    for n in range(4):
        payload = {
            "call_id": f"c{n}",
            "capability": "none.such",
            "arguments": {},
            "reason": "because",
            "expires_at": "2099-01-01T00:00:00Z",
        }
        assert host.receive(envelope("app.call", payload, id_=f"m{n}")) is None
    audit = host.audit
    assert audit.verify().ok and audit.verify().rows == 4
    backup = sqlite3.connect(":memory:")
    with sqlite3.connect(audit.path) as db:
        db.backup(backup)  # the WAL's rows too, which a copy of the file would miss
    execute(audit, "DELETE FROM audit WHERE seq > 2")
    assert not audit.verify().ok
    execute(audit, "DELETE FROM audit")
    assert not audit.verify().ok
    with sqlite3.connect(audit.path) as db:
        backup.backup(db)
    execute(audit, "UPDATE audit SET status = 'completed' WHERE seq = 2")
    rechain(audit, 2, unkeyed)
    assert audit.verify().first_broken == 2


def test_c13_an_edited_anchor_is_detected(audit: Audit) -> None:
    anchor = json.loads(audit.anchor_path.read_text())
    anchor["seq"] = 3
    audit.anchor_path.write_text(json.dumps(anchor))
    execute(audit, "DELETE FROM audit WHERE seq > 3")
    verdict = audit.verify()
    assert not verdict.ok and "does not match its MAC" in (verdict.problem or "")


def test_c13_a_deleted_anchor_is_detected_and_never_recreated(audit: Audit) -> None:
    audit.anchor_path.unlink()
    execute(audit, "DELETE FROM audit WHERE seq > 3")
    audit.close()
    again = Audit(audit.path)
    again.record(**row(9))  # a new kernel writes on: the missing anchor stays missing
    verdict = again.verify()
    assert not verdict.ok and "anchor file audit.anchor is missing" in (verdict.problem or "")


def test_c13_the_key_and_the_anchor_are_private_files(audit: Audit) -> None:
    for path in (audit.key_path, audit.anchor_path):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


def test_c13_a_row_past_the_anchor_is_accepted(
    audit: Audit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel stopped between its commit and its anchor write leaves a row the anchor does
    not count yet: sealed with the key, it verifies; the next row moves the anchor on."""
    monkeypatch.setattr(Audit, "_advance_anchor", lambda self, seq, head: None)
    audit.record(**row(5))
    monkeypatch.undo()
    assert json.loads(audit.anchor_path.read_text())["seq"] == 5
    verdict = audit.verify()
    assert verdict.ok and verdict.rows == 6
    audit.record(**row(6))
    assert json.loads(audit.anchor_path.read_text())["seq"] == 7


def test_c13_kernels_appending_at_once_keep_one_anchored_chain(tmp_path: Path) -> None:
    """Three processes start on an empty data dir at once (one key is made), each appends 40
    rows; the chain verifies and the anchor counts all 120 (it only ever moves up)."""
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from lineup_jupyter.capabilities._audit import Audit
        audit = Audit(Path({str(tmp_path / "audit.sqlite3")!r}))
        for n in range(40):
            audit.record(call_id=f"{{sys.argv[1]}}-{{n}}", status="completed")
        """
    )
    workers = [subprocess.Popen([sys.executable, "-c", script, str(n)]) for n in range(3)]
    assert [worker.wait(timeout=120) for worker in workers] == [0, 0, 0]
    audit = Audit(tmp_path / "audit.sqlite3")
    verdict = audit.verify()
    assert verdict.ok and verdict.rows == 120
    assert json.loads(audit.anchor_path.read_text())["seq"] == 120


# ---- a table written before the audit was keyed -----------------------------------------------


def legacy_table(path: Path, rows: int) -> None:
    """An audit as the unkeyed version wrote it: sha256 chain, no key, no anchor, and no
    ``session`` column."""
    columns = ", ".join(f"{name} TEXT" for name in BEFORE_SESSION)
    with sqlite3.connect(path) as db:
        db.execute(
            f"CREATE TABLE audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, {columns}, "
            "hash TEXT NOT NULL)"
        )
        previous = GENESIS
        for n in range(rows):
            found = {**dict.fromkeys(BEFORE_SESSION), **row(n), "prev_hash": previous}
            previous = unkeyed(found)
            names = (*BEFORE_SESSION, "hash")
            db.execute(
                f"INSERT INTO audit ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                [*(found[name] for name in BEFORE_SESSION), previous],
            )


def test_c13_an_unkeyed_table_with_an_intact_chain_is_sealed_on_first_open(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.sqlite3"
    legacy_table(path, 3)
    before = rows_of(Audit(path))  # reading the file does not open the Audit yet
    audit = Audit(path)
    verdict = audit.verify()
    assert verdict.ok and verdict.rows == 3
    after = rows_of(audit)
    fields = [name for name in BEFORE_SESSION if name != "prev_hash"]
    assert [[r[f] for f in fields] for r in after] == [[r[f] for f in fields] for r in before]
    assert [r["hash"] for r in after] != [r["hash"] for r in before]  # now MACs
    execute(audit, "DELETE FROM audit WHERE seq = 3")
    assert not audit.verify().ok  # and anchored from then on


def test_c13_an_unkeyed_table_with_a_broken_chain_is_not_laundered(tmp_path: Path) -> None:
    path = tmp_path / "audit.sqlite3"
    legacy_table(path, 3)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE audit SET decision = 'deny' WHERE seq = 2")
    verdict = Audit(path).verify()
    assert not verdict.ok and verdict.first_broken == 1  # left unsealed: reported, not hidden


# ---- what stays undetectable, as documented ---------------------------------------------------


def test_c13_documented_limit_whoever_reads_the_key_and_writes_the_anchor_can_rewrite(
    audit: Audit,
) -> None:
    key = the_key(audit)
    execute(audit, "UPDATE audit SET decision = 'deny', status = 'rejected' WHERE seq = 3")
    rechain(audit, 3, keyed(key))
    verdict = audit.verify()
    assert not verdict.ok and "not the one the anchor records as the head" in (
        verdict.problem or ""
    )  # the anchor still catches it...
    head = rows_of(audit)[-1]["hash"]
    mac = hmac.new(key, dumps(["lineup-audit-anchor", 5, head]).encode(), hashlib.sha256)
    audit.anchor_path.write_text(json.dumps({"seq": 5, "head": head, "mac": mac.hexdigest()}))
    assert audit.verify().ok  # ...until the anchor is rewritten with the key too


def test_c13_documented_limit_an_old_anchor_replayed_with_a_truncated_table(
    audit: Audit,
) -> None:
    old_anchor = audit.anchor_path.read_bytes()  # saved by the attacker at 5 rows
    audit.record(**row(5))
    audit.record(**row(6))
    execute(audit, "DELETE FROM audit WHERE seq > 5")
    audit.anchor_path.write_bytes(old_anchor)
    assert audit.verify().ok  # both files rolled back together: not detectable from them


def test_c13_a_hosts_audit_shows_its_own_conversation_unless_asked(tmp_path: Path) -> None:
    """Issue 24: kernels sharing a data dir write one audit; ``host.audit.query()`` showed
    rows another process wrote. It now shows the host's conversation; ``conversation_id=``
    picks another, None every one; verify() still walks the whole chain."""
    mine = Host(conversation_id="conv_mine", data_dir=tmp_path)
    theirs = Host(conversation_id="conv_theirs", data_dir=tmp_path)
    for host, count in ((mine, 2), (theirs, 3)):
        agent = host.connect_agent(AGENT)
        for n in range(count):
            agent.call("none.such", {"n": n}, reason="because")
    assert mine.audit.path == theirs.audit.path  # one database for both
    assert {row["conversation_id"] for row in mine.audit.query()} == {"conv_mine"}
    assert len(mine.audit.query()) == 2 and len(theirs.audit.query()) == 3
    assert len(mine.audit.query(conversation_id="conv_theirs")) == 3
    assert len(mine.audit.query(conversation_id=None)) == 5  # the control: both are there
    assert "conv_theirs" not in mine.audit._repr_html_()
    assert mine.audit.verify().rows == 5 and mine.audit.verify().ok
    # A bare Audit has no conversation of its own: every row.
    assert len(Audit(mine.audit.path).query()) == 5


def test_c13_h27_each_row_has_the_hosts_session_sealed_and_older_rows_still_verify(
    tmp_path: Path,
) -> None:
    """H27 in the audit: beside the name an agent chose (``agent``), each row has the host's
    number for its binding (``session``), so a namesake's rows are told from the genuine
    agent's. Rows written before the column (here an unkeyed table, sealed on first open)
    verify after it was added; a session added to, changed in or taken from a row breaks
    that row's MAC."""

    def made(name: str) -> Audit:
        path = tmp_path / name / "audit.sqlite3"
        path.parent.mkdir()
        legacy_table(path, 2)
        audit = Audit(path)
        audit.record(**row(2), session=1)
        audit.record(**row(3), session=3)  # the same agent name, another binding
        return audit

    audit = made("clean")
    assert audit.verify().ok
    assert [(r["agent"], r["session"]) for r in audit.query()] == [
        (AGENT, None),
        (AGENT, None),
        (AGENT, "1"),
        (AGENT, "3"),
    ]
    assert [r["call_id"] for r in audit.query(agent=AGENT, session=3)] == ["c3"]
    for n, sql in enumerate(
        [
            "UPDATE audit SET session = '3' WHERE seq = 3",  # blamed on the namesake
            "UPDATE audit SET session = NULL WHERE seq = 4",  # its binding erased
            "UPDATE audit SET session = '1' WHERE seq = 1",  # an old row given one
        ]
    ):
        tampered = made(f"tampered-{n}")
        execute(tampered, sql)
        verdict = tampered.verify()
        seq = int(sql.rsplit(" ", 1)[-1])
        assert not verdict.ok and verdict.first_broken == seq, (sql, verdict)
