"""The audit fails closed (C13, docs/capabilities.md): with the data dir unable to grow (a full
disk, made real in a child process by RLIMIT_FSIZE: every write past a file's current size
fails with EFBIG, as ENOSPC would), a call that cannot be audited is answered ``failed``,
its handler never runs, and ``verify()`` reports what was lost. The control: the same calls
with room to write run and verify ok, so the detector is not blind.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent(
    """
    import json, resource, signal, sqlite3, sys
    from lineup_jupyter import Host

    def run(data_dir, full):
        host = Host("conv_01", data_dir=data_dir)
        ran = []
        host.capability("demo.show", risk="display_only")(lambda arguments: ran.append(1) or {})
        sent = []
        host.subscribe(sent.append)
        assert host.audit.verify().ok  # the files exist; from here on they cannot grow
        if full:
            # The write-ahead log emptied first (else new rows reuse its space, as on a full
            # disk too), then no file may grow by a byte.
            sqlite3.connect(host.audit.path).execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a failed write, not a killed kernel
            resource.setrlimit(resource.RLIMIT_FSIZE, (1, resource.RLIM_INFINITY))
        for i in range(20):
            host.receive({
                "v": 1, "id": f"m{i}", "type": "lineup.v1.app.call", "conversation_id": "conv_01",
                "sender": {"kind": "agent", "id": "agent_1"},
                "payload": {"call_id": f"c{i}", "capability": "demo.show", "reason": "r",
                            "expires_at": "2099-01-01T00:00:00Z", "arguments": {}},
            })
        answers = [m["payload"] for m in sent if m["type"] == "lineup.v1.app.result"]
        before = host.audit.verify()
        ran_before = len(ran)
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        host.receive({
            "v": 1, "id": "m_after", "type": "lineup.v1.app.call", "conversation_id": "conv_01",
            "sender": {"kind": "agent", "id": "agent_1"},
            "payload": {"call_id": "c_after", "capability": "demo.show", "reason": "r",
                        "expires_at": "2099-01-01T00:00:00Z", "arguments": {}},
        })
        after = host.audit.verify()
        rows = [(r["event"], r["call_id"], r["status"], r["reason"]) for r in host.audit.query()]
        print(json.dumps({
            "ran": ran_before,
            "answers": answers,
            "before": [before.ok, before.problem],
            "after": [after.ok, after.problem],
            "rows": rows,
        }))

    # Each mode in a data dir of its own, one after the other in this one interpreter (the
    # import costs seconds), each result on a line of its own; stderr says which mode wrote.
    for data_dir, mode in zip(sys.argv[1::2], sys.argv[2::2]):
        print(f"[mode {mode}]", file=sys.stderr, flush=True)
        run(data_dir, mode == "full")
    """
)


@pytest.fixture(scope="module")
def children(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """What the child found in each mode ("room", then "full"), with the stderr each wrote."""
    modes = ["room", "full"]
    argv = [str(tmp_path_factory.mktemp(f"audit-{mode}") / "data") for mode in modes]
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *(a for pair in zip(argv, modes, strict=True) for a in pair)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr  # logged as one line each, never a traceback
    errs = done.stderr.split("[mode ")[1:]
    found: dict[str, dict[str, Any]] = {}
    for mode, line, err in zip(modes, done.stdout.splitlines()[-2:], errs, strict=True):
        assert err.startswith(f"{mode}]")
        found[mode] = {**json.loads(line), "stderr": err}
    return found


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_c13_a_call_that_cannot_be_audited_does_not_run(
    children: dict[str, dict[str, Any]],
) -> None:
    found = children["full"]
    assert found["ran"] == 0  # not one handler ran: 20 calls, 0 runs
    statuses = {answer["status"] for answer in found["answers"]}
    assert statuses == {"failed"} and len(found["answers"]) == 20
    error = found["answers"][0]["error"]
    assert (error["code"], error["rule"]) == ("failed", "C13")
    assert error["message"].startswith("the call was not run: the audit cannot be written (")
    ok, problem = found["before"]
    assert not ok and "20 audit rows could not be written in this kernel" in problem
    # Room again: the next row is preceded by one gap row that counts the 20 lost, and
    # verify keeps saying so (the audit is not complete, whatever follows).
    gap = [row for row in found["rows"] if row[0] == "gap"]
    assert len(gap) == 1 and gap[0][3].startswith("20 audit rows could not be written: ")
    assert found["rows"][-1][1:3] == ["c_after", "completed"]
    ok, problem = found["after"]
    assert not ok and problem.startswith("row ") and "records a gap" in problem
    assert found["stderr"].count("[lineup] the audit could not be written") == 20


def test_c13_the_control_calls_with_room_run_and_verify_ok(
    children: dict[str, dict[str, Any]],
) -> None:
    found = children["room"]
    assert found["ran"] == 20
    assert {answer["status"] for answer in found["answers"]} == {"completed"}
    assert found["before"] == [True, None] and found["after"] == [True, None]
    assert len(found["rows"]) == 21 and not [row for row in found["rows"] if row[0] == "gap"]


def test_c13_a_call_that_ran_without_its_row_is_a_gap_verify_names(tmp_path: Path) -> None:
    """A kernel that began a call (the write ahead) and never wrote its row (it died, or the
    row's write failed): another kernel's verify names the call. Control: its row clears it."""
    from lineup_jupyter.capabilities._audit import Audit

    path = tmp_path / "audit.sqlite3"
    first, second = Audit(path), Audit(path)
    assert first.begin("c_lost", "2026-01-01T00:00:00Z") is None
    assert first.begin("c_done", "2026-01-01T00:00:00Z") is None
    first.record(event="call", call_id="c_done", status="completed")
    verdict = second.verify()
    assert not verdict.ok and verdict.problem is not None
    assert "1 calls ran and their audit rows were never written (call ids: c_lost)" in (
        verdict.problem
    )
    first.record(event="call", call_id="c_lost", status="completed")  # the control
    assert second.verify().ok
    first.close()
    second.close()
