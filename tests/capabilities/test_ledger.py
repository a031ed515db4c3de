"""_ledger.py: exactly one answer per call_id (C12, H22), on its own, without a host."""

from __future__ import annotations

import pytest

from lineup_jupyter import ProtocolError
from lineup_jupyter.capabilities._ledger import CallLedger, fingerprint_of
from lineup_jupyter.core._identity import KERNEL, Identity

A1 = Identity("a1", 0, KERNEL, "the kernel")
A2 = Identity("a2", 0, KERNEL, "the kernel")

ANSWER = {"call_id": "c1", "status": "completed", "result": {"ok": True}}


def test_c12_a_fingerprint_is_the_canonical_request() -> None:
    """Key order and spacing do not matter; the capability and every argument do."""
    one = fingerprint_of("demo.save", {"a": 1, "b": [1, 2]})
    assert one == fingerprint_of("demo.save", {"b": [1, 2], "a": 1})
    assert len(one) == 64 and int(one, 16) >= 0  # however large the arguments
    assert one != fingerprint_of("demo.save", {"a": 1, "b": [2, 1]})
    assert one != fingerprint_of("demo.open", {"a": 1, "b": [1, 2]})
    assert len(fingerprint_of("demo.save", {"blob": "x" * 1_000_000})) == 64


def test_c12_a_repeat_with_the_same_fingerprint_gets_the_same_answer() -> None:
    ledger = CallLedger()
    request = fingerprint_of("demo.save", {"n": 1})
    ledger.check((A1, "c1"), request)  # new: passes
    assert ledger.settle((A1, "c1"), ANSWER, fingerprint=request) == 1
    ledger.check((A1, "c1"), request)  # the same request again: passes, and is answered as before
    again = ledger.join((A1, "c1"))
    assert again == ANSWER
    assert again is not None
    again["status"] = "failed"  # whoever got a copy cannot change the record
    assert ledger.answer((A1, "c1")) == ANSWER
    assert len(ledger) == 1


def test_c12_a_different_request_under_a_used_call_id_is_refused_with_the_rule() -> None:
    ledger = CallLedger()
    first = fingerprint_of("demo.save", {"n": 1})
    ledger.settle((A1, "c1"), ANSWER, fingerprint=first)
    with pytest.raises(ProtocolError) as refused:
        ledger.check((A1, "c1"), fingerprint_of("demo.save", {"n": 2}))
    error = refused.value
    assert (error.code, error.rule, error.path) == ("call_conflict", "C12", "$.payload.call_id")
    assert "'c1'" in error.message and "new call_id" in error.message
    assert ledger.answer((A1, "c1")) == ANSWER  # the first answer stands
    ledger.check((A1, "c2"), fingerprint_of("demo.save", {"n": 2}))  # control: a new id passes


def test_h22_repeats_that_arrive_while_the_first_waits_all_get_its_one_answer() -> None:
    ledger = CallLedger()
    request = fingerprint_of("demo.confirm", {})
    ledger.wait((A1, "c1"), request)
    assert ledger.waiting((A1, "c1")) and ledger.answer((A1, "c1")) is None
    assert ledger.join((A1, "c1")) is None  # the same agent again: owed, no second prompt
    assert ledger.join((A1, "c1")) is None
    ledger.check((A2, "c1"), fingerprint_of("demo.confirm", {"n": 1}))  # another's scope (H27)
    assert not ledger.waiting((A2, "c1")) and ledger.answer((A2, "c1")) is None
    with pytest.raises(ProtocolError):  # and a different request may not join it
        ledger.check((A1, "c1"), fingerprint_of("demo.confirm", {"n": 1}))
    assert ledger.settle((A1, "c1"), ANSWER, fingerprint=request) == 3
    assert not ledger.waiting((A1, "c1"))
    assert ledger.join((A1, "c1")) == ANSWER  # after it ended: at once, owed to no one else


def test_c12_a_call_id_has_one_answer_never_two() -> None:
    """A second answer for one call_id is a bug of ours: it raises, and the first stands."""
    ledger = CallLedger()
    request = fingerprint_of("demo.save", {})
    ledger.settle((A1, "c1"), ANSWER, fingerprint=request)
    with pytest.raises(KeyError):
        ledger.settle((A1, "c1"), {**ANSWER, "status": "failed"}, fingerprint=request)
    with pytest.raises(KeyError):
        ledger.wait((A1, "c1"), request)
    assert ledger.answer((A1, "c1")) == ANSWER


def test_c12_a_refused_call_id_keeps_its_refusal_and_cannot_be_reused() -> None:
    ledger = CallLedger()
    refusal = {"call_id": "c1", "status": "failed", "error": {"code": "invalid"}}
    assert ledger.refuse((A1, "c1"), refusal) is True
    assert ledger.answer((A1, "c1")) == refusal
    with pytest.raises(ProtocolError):  # whatever request comes with it later
        ledger.check((A1, "c1"), fingerprint_of("demo.save", {}))
    assert ledger.refuse((A1, "c1"), {**refusal, "status": "cancelled"}) is False
    assert ledger.answer((A1, "c1")) == refusal


def test_c12_a_refusal_never_replaces_a_waiting_calls_answer() -> None:
    """A malformed repeat of a waiting call: the first call keeps waiting for the user."""
    ledger = CallLedger()
    request = fingerprint_of("demo.confirm", {})
    ledger.wait((A1, "c1"), request)
    assert ledger.refuse((A1, "c1"), {"call_id": "c1", "status": "failed"}) is False
    assert ledger.waiting((A1, "c1"))
    assert ledger.settle((A1, "c1"), ANSWER, fingerprint=request) == 1


def test_the_snapshot_is_a_copy() -> None:
    ledger = CallLedger()
    request = fingerprint_of("demo.save", {})
    ledger.wait((A1, "c0"), request)
    ledger.settle((A1, "c1"), ANSWER, fingerprint=request)
    snapshot = ledger.snapshot()
    assert snapshot == {(A1, "c0"): (request, None), (A1, "c1"): (request, ANSWER)}
    answer = snapshot[A1, "c1"][1]
    assert answer is not None
    answer["status"] = "failed"
    assert ledger.snapshot()[A1, "c1"] == (request, ANSWER)
