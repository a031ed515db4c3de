"""Standard components (L2, H12-H15): shown, updated in place, removed, answered exactly once.

Every refusal is checked the same way: the components are exactly as they were (every
``to_view()`` and owner), and there is exactly one refusal: a ``lineup.v1.error`` to the agent
for a refused envelope (H3), a ``refused`` history record and nothing on the bus for a refused
answer from the view. Questions are answered through ``Host.answer``, as the view does.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from lineup_jupyter import Host, ProtocolError, UsageError
from lineup_jupyter.core._components import ComponentChange
from lineup_jupyter.protocol import validate_envelope
from lineup_jupyter.protocol._models import COMPONENT_VERSIONS, QUESTION_KINDS
from lineup_jupyter.runtime._pending import Pending

from ..conftest import AGENT, EXPECTED, Recorder, envelope, golden

OTHER_AGENT = "agent_other"
_message_ids = itertools.count()

# One valid payload of each kind, by the field names of docs/protocol.md (H12).
SPECS: dict[str, dict[str, Any]] = {
    "markdown": {"markdown": "**bold** and [a link](https://example.org)"},
    "text": {"text": "<b>plain</b> *text*"},
    "status": {"state": "working", "label": "Fetching the forecast"},
    "progress": {"value": 3, "total": 10, "label": "Downloading"},
    "error": {"code": "fetch_failed", "message": "The forecast service did not answer."},
    "choice": {
        "prompt": "Which city?",
        "options": [{"id": "a", "label": "Oslo"}, {"id": "b", "label": "Lyon"}],
    },
    "confirm": {"prompt": "Delete the draft?"},
    "input": {"prompt": "Your name?"},
}
# Every declared kind (protocol/_models.py COMPONENT_KINDS): a new one needs its SPECS entry.
QUESTIONS = QUESTION_KINDS
ALL_KINDS = tuple(COMPONENT_VERSIONS)
# A valid answer per question kind, for the tests about answering as such.
GOOD_ANSWER: dict[str, Any] = {"choice": ["a"], "confirm": True, "input": "Ada"}


# ---- helpers ------------------------------------------------------------------------------


def payload(kind: str, component_id: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"component_id": component_id or f"{kind}_1", "kind": kind, **SPECS[kind], **fields}


def message(type_: str, body: dict[str, Any], sender: str = AGENT, **kw: Any) -> dict[str, Any]:
    """An envelope with a fresh message id (H9 refuses a repeated one)."""
    return envelope(type_, body, id_=f"msg_{next(_message_ids)}", sender=sender, **kw)


def show(host: Host, body: dict[str, Any], sender: str = AGENT) -> None:
    error = host.receive(message("component.show", body, sender))
    assert error is None, error


def remove(host: Host, component_id: str, sender: str = AGENT) -> None:
    error = host.receive(message("component.remove", {"component_id": component_id}, sender))
    assert error is None, error


def views(host: Host) -> list[tuple[str, dict[str, Any]]]:
    """Everything a refusal must leave as it was: each component's owner and view, in order."""
    return [(c.owner, c.to_view()) for c in host.components.values()]


def answers(sent: Recorder) -> list[dict[str, Any]]:
    """The component.answer envelopes the host sent, each checked against the protocol."""
    found = [e for e in sent.sent if e["type"] == "lineup.v1.component.answer"]
    for answer in found:
        validate_envelope(answer)
    return found


def assert_envelope_refused_once(
    host: Host, sent: Recorder, refused: dict[str, Any], code: str, rule: str, path: str
) -> ProtocolError:
    """H3: refused with (code, rule, path), nothing changed, exactly one lineup.v1.error."""
    before, count = views(host), len(sent.sent)
    error = host.receive(refused)
    assert isinstance(error, ProtocolError)
    assert (error.code, error.rule, error.path) == (code, rule, path)
    assert views(host) == before
    assert len(sent.sent) == count + 1
    validate_envelope(sent.last())
    assert sent.last()["type"] == "lineup.v1.error"
    assert sent.last()["payload"]["code"] == code and sent.last()["payload"]["rule"] == rule
    return error


def assert_answer_refused(
    host: Host, sent: Recorder, component_id: str, status: str, value: Any, code: str, rule: str
) -> ProtocolError:
    """H14: a bad answer from the view changes nothing, reaches no agent, and is recorded once
    in the history as refused."""
    before, count, recorded = views(host), len(sent.sent), len(host.history)
    with pytest.raises(ProtocolError) as refused:
        host.answer(component_id, status, value)
    error = refused.value
    assert (error.code, error.rule) == (code, rule), error
    assert views(host) == before
    assert len(sent.sent) == count  # the agent hears nothing of it
    assert len(host.history) == recorded + 1
    record = host.history[-1]
    assert record.kind == "refused" and record.error is not None
    assert (record.error["code"], record.error["rule"]) == (code, rule)
    assert record.error["refused_type"] == "lineup.v1.component.answer"
    return error


def assert_answer_accepted(
    host: Host, sent: Recorder, component_id: str, status: str, value: Any
) -> dict[str, Any]:
    """H14: exactly one component.answer, to the agent that asked, carrying the value."""
    count = len(answers(sent))
    host.answer(component_id, status, value)
    assert len(answers(sent)) == count + 1
    answer = answers(sent)[-1]
    expected = {"component_id": component_id, "status": status}
    if value is not None:
        expected["value"] = value
    assert {k: v for k, v in answer["payload"].items() if k != "kind"} == expected
    assert answer["target"] == {"kind": "agent", "id": host.components.get(component_id).owner}
    return answer


# ---- showing, updating, removing (H12, H13, L2) ---------------------------------------------


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_H12_L2_each_kind_is_shown_and_listed(host: Host, sent: Recorder, kind: str) -> None:
    """H12, L2: each declared kind is drawn by the host, listed under its id."""
    show(host, payload(kind))
    assert list(host.components) == [f"{kind}_1"]
    shown = host.components.get(f"{kind}_1")
    assert shown is not None and shown.spec.kind == kind and shown.owner == AGENT
    view = shown.to_view()
    assert view["kind"] == kind and "answer" not in view
    for name, value in SPECS[kind].items():
        if name != "markdown":  # the view gets only the sanitized HTML (S6)
            assert view[name] == value
    assert shown.pending == (kind in QUESTIONS)
    assert sent.sent == []  # a show needs no answer


def test_S6_markdown_view_carries_sanitized_html_never_the_source(host: Host) -> None:
    """S6, H15: the view inserts only the HTML rendered in the kernel, not the Markdown."""
    show(host, payload("markdown", markdown="[x](javascript:alert(1)) <img src=x onerror=y>"))
    view = host.components.get("markdown_1").to_view()
    assert "markdown" not in view
    assert "href" not in view["html"] and "<img" not in view["html"]
    assert ">x</a>" in view["html"]  # the refused link stays an inert link, without its URL
    assert "&lt;img" in view["html"]  # raw HTML arrives as text


def test_H12_components_are_listed_in_the_order_shown(host: Host) -> None:
    for kind in ALL_KINDS:
        show(host, payload(kind))
    assert list(host.components) == [f"{kind}_1" for kind in ALL_KINDS]
    assert len(host.components) == len(SPECS) == len(ALL_KINDS)


def test_H13_update_in_place_keeps_the_place_and_changes_the_view(host: Host) -> None:
    """H13: a shown id updates that component where it is; nothing is added."""
    changes: list[tuple[str, str]] = []
    host.watch_components(lambda c: changes.append((c.kind, c.component.component_id)))
    for kind in ("status", "progress", "text"):
        show(host, payload(kind))
    first_seq = host.components.get("progress_1").seq
    show(host, payload("progress", value=9, label="Almost"))
    assert list(host.components) == ["status_1", "progress_1", "text_1"]
    updated = host.components.get("progress_1")
    assert updated.to_view()["value"] == 9 and updated.to_view()["label"] == "Almost"
    assert updated.seq == first_seq
    assert changes[-1] == ("update", "progress_1")
    assert [kind for kind, _ in changes] == ["show", "show", "show", "update"]


def test_H13_progress_can_become_indeterminate_and_markdown_is_rendered_again(host: Host) -> None:
    show(host, payload("progress"))
    show(host, {"component_id": "progress_1", "kind": "progress"})
    assert "value" not in host.components.get("progress_1").to_view()
    show(host, payload("markdown", markdown="*one*"))
    show(host, payload("markdown", markdown="**two**"))
    html = host.components.get("markdown_1").to_view()["html"]
    assert "<strong>two</strong>" in html and "one" not in html


@pytest.mark.parametrize(("first", "second"), [("status", "progress"), ("text", "markdown")])
def test_H13_kind_change_is_a_conflict_and_changes_nothing(
    host: Host, sent: Recorder, first: str, second: str
) -> None:
    show(host, payload(first, "same"))
    error = assert_envelope_refused_once(
        host,
        sent,
        message("component.show", payload(second, "same")),
        "component_conflict",
        "H13",
        "$.payload.component_id",
    )
    assert host.components.get("same").spec.kind == first
    assert f"a {first}" in error.message


@pytest.mark.parametrize("kind", QUESTIONS)
def test_H13_a_question_is_never_asked_twice_under_one_id(
    host: Host, sent: Recorder, kind: str
) -> None:
    """H13: not while it waits, not once it was answered; the first answer stands."""
    show(host, payload(kind, "q"))
    assert_envelope_refused_once(
        host, sent, message("component.show", payload(kind, "q")), "component_conflict", "H13",
        "$.payload.component_id",
    )  # fmt: skip
    assert_answer_accepted(host, sent, "q", "answered", GOOD_ANSWER[kind])
    assert_envelope_refused_once(
        host, sent, message("component.show", payload(kind, "q")), "component_conflict", "H13",
        "$.payload.component_id",
    )  # fmt: skip
    assert len(answers(sent)) == 1


@pytest.mark.parametrize("kind", ["status", "choice"])
def test_H13_another_agent_may_neither_update_nor_remove(
    host: Host, sent: Recorder, kind: str
) -> None:
    show(host, payload(kind, "mine"))
    for refused in (
        message("component.show", payload(kind, "mine"), OTHER_AGENT),
        message("component.remove", {"component_id": "mine"}, OTHER_AGENT),
    ):
        assert_envelope_refused_once(
            host, sent, refused, "not_owner", "H13", "$.payload.component_id"
        )
        assert sent.last()["target"] == {"kind": "agent", "id": OTHER_AGENT}
    assert host.components.get("mine").owner == AGENT
    assert answers(sent) == []  # the question was not cancelled by the refused remove


def test_H12_remove_takes_the_component_away(host: Host, sent: Recorder) -> None:
    changes: list[ComponentChange] = []
    host.watch_components(changes.append)
    show(host, payload("status"))
    show(host, payload("text"))
    remove(host, "status_1")
    assert list(host.components) == ["text_1"]
    assert host.components.get("status_1") is None
    assert [c.kind for c in changes] == ["show", "show", "remove"]
    assert sent.sent == []  # removing a non-question answers nobody


def test_H12_remove_or_answer_of_an_unknown_id_is_refused(host: Host, sent: Recorder) -> None:
    show(host, payload("text"))
    assert_envelope_refused_once(
        host,
        sent,
        message("component.remove", {"component_id": "nope"}),
        "unknown_component",
        "H12",
        "$.payload.component_id",
    )
    assert_answer_refused(host, sent, "nope", "answered", True, "unknown_component", "H12")


def test_H12_a_removed_id_may_be_shown_again_as_anything(host: Host) -> None:
    show(host, payload("choice", "slot"))
    remove(host, "slot")
    show(host, payload("status", "slot"))
    assert host.components.get("slot").spec.kind == "status"


@pytest.mark.parametrize("kind", QUESTIONS)
def test_H14_removing_a_pending_question_cancels_it_exactly_once(
    host: Host, sent: Recorder, kind: str
) -> None:
    show(host, payload(kind, "q"))
    remove(host, "q")
    [cancel] = answers(sent)
    assert cancel["payload"] == {"component_id": "q", "kind": kind, "status": "cancelled"}
    assert cancel["target"] == {"kind": "agent", "id": AGENT}
    # the user can no longer answer it, and nothing else is sent
    assert_answer_refused(
        host, sent, "q", "answered", GOOD_ANSWER[kind], "unknown_component", "H12"
    )
    assert len(answers(sent)) == 1


def test_H14_removing_an_answered_question_sends_no_second_answer(
    host: Host, sent: Recorder
) -> None:
    show(host, payload("confirm", "q"))
    assert_answer_accepted(host, sent, "q", "answered", False)
    remove(host, "q")
    assert [a["payload"]["status"] for a in answers(sent)] == ["answered"]


def test_C4_a_version_this_host_does_not_draw_is_unsupported(host: Host, sent: Recorder) -> None:
    show(host, payload("text", "v1", version="1"))
    assert_envelope_refused_once(
        host,
        sent,
        message("component.show", payload("text", "v2", version="2")),
        "unsupported",
        "C4",
        "$.payload.version",
    )
    assert list(host.components) == ["v1"]


def test_C4_inventory_lists_each_declared_standard_component_at_its_version(
    host: Host, sent: Recorder
) -> None:
    host.send_inventory()
    inventory = sent.last()
    validate_envelope(inventory)
    assert inventory["payload"]["standard_components"] == [
        {"id": kind, "version": COMPONENT_VERSIONS[kind]} for kind in ALL_KINDS
    ]


# ---- refused envelopes change nothing (H3, H12) ---------------------------------------------


REFUSED_SHOWS: dict[str, tuple[dict[str, Any], str, str, str]] = {
    "unknown kind": ({"component_id": "x", "kind": "video"}, "invalid", "H12", "$.payload.kind"),
    "kind missing": ({"component_id": "x", "text": "t"}, "invalid", "H12", "$.payload.kind"),
    "kind a list": ({"component_id": "x", "kind": ["text"]}, "invalid", "H12", "$.payload.kind"),
    "kind an object": ({"component_id": "x", "kind": {}}, "invalid", "H12", "$.payload.kind"),
    "bad component_id": (payload("text", "not valid"), "invalid", "H12", "$.payload.component_id"),
    "unknown field": (payload("text", html="<b>"), "invalid", "H1", "$.payload.html"),
    "unknown status state": (payload("status", state="busy"), "invalid", "H12", "$.payload.state"),
    "progress above total": (payload("progress", value=11), "invalid", "H12", "$.payload.value"),
    "progress negative": (payload("progress", value=-1), "invalid", "H12", "$.payload.value"),
    "choice duplicate option ids": (
        payload("choice", options=[{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]),
        "invalid",
        "H12",
        "$.payload.options",
    ),
    "choice without options": (
        payload("choice", options=[]), "invalid", "H12", "$.payload.options",
    ),
    "choice min_selected when single": (
        payload("choice", min_selected=1),
        "invalid",
        "H12",
        "$.payload.multiple",
    ),
    "choice min_selected above options": (
        payload("choice", multiple=True, min_selected=3),
        "invalid",
        "H12",
        "$.payload.min_selected",
    ),
    "input min on a text input": (payload("input", min=1), "invalid", "H12", "$.payload.min"),
    "input pattern on a number input": (
        payload("input", input_type="number", pattern="[0-9]+"),
        "invalid",
        "H12",
        "$.payload.pattern",
    ),
    "input min_length above max_length": (
        payload("input", min_length=5, max_length=2),
        "invalid",
        "H12",
        "$.payload.min_length",
    ),
    "input pattern not a regex": (
        payload("input", pattern="(["), "invalid", "H14", "$.payload.pattern",
    ),
    # RE2, which checks answers in linear time (H14), has no backreferences or lookaround,
    # and JavaScript (the browser's pattern attribute) has no inline modifiers.
    "input pattern with lookahead": (
        payload("input", pattern="a(?=b)"), "invalid", "H14", "$.payload.pattern",
    ),
    "input pattern verbose modifier": (
        payload("input", pattern="(?x) ^ (a+) + $"), "invalid", "H14", "$.payload.pattern",
    ),
    "input pattern with a backreference": (
        payload("input", pattern="(a*)b\\1"), "invalid", "H14", "$.payload.pattern",
    ),
    "input text default a number": (
        payload("input", default=3), "invalid", "H12", "$.payload.default",
    ),
    "input number default a string": (
        payload("input", input_type="number", default="3"), "invalid", "H12", "$.payload.default",
    ),
    "progress value a numeric string": (
        payload("progress", value="0.5"), "invalid", "H12", "$.payload.value",
    ),
    "choice multiple a string": (
        payload("choice", multiple="yes"), "invalid", "H12", "$.payload.multiple",
    ),
    "markdown too long": (
        payload("markdown", markdown="x" * (256 * 1024 + 1)),
        "invalid",
        "H15",
        "$.payload.markdown",
    ),
    "text too long": (
        payload("text", text="x" * (256 * 1024 + 1)),
        "invalid",
        "H12",
        "$.payload.text",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED_SHOWS))
def test_H12_H3_a_refused_show_changes_nothing_and_is_answered_once(
    host: Host, sent: Recorder, case: str
) -> None:
    body, code, rule, path = REFUSED_SHOWS[case]
    for kind in ("text", "choice"):  # something to leave untouched
        show(host, payload(kind, f"kept_{kind}"))
    changes: list[ComponentChange] = []
    host.watch_components(changes.append)
    assert_envelope_refused_once(host, sent, message("component.show", body), code, rule, path)
    assert changes == []  # no view heard of it


def test_M2_component_show_from_the_client_side_is_refused(host: Host, sent: Recorder) -> None:
    forged = message("component.show", payload("text"), kind="client")
    assert_envelope_refused_once(host, sent, forged, "wrong_direction", "M2", "$.sender.kind")


def test_M2_an_agent_cannot_forge_the_users_answer(host: Host, sent: Recorder) -> None:
    """M2, H14: component.answer travels client->agent; an agent sending one is refused and
    the question stays open."""
    show(host, payload("confirm", "q"))
    forged = message(
        "component.answer",
        {"component_id": "q", "kind": "confirm", "status": "answered", "value": True},
    )
    assert_envelope_refused_once(host, sent, forged, "wrong_direction", "M2", "$.sender.kind")
    assert host.components.get("q").pending
    assert answers(sent) == []


# ---- the user's answer (H14) ----------------------------------------------------------------


def choice(**fields: Any) -> dict[str, Any]:
    options = [{"id": i, "label": i.upper()} for i in ("a", "b", "c")]
    return payload("choice", "q", options=options, **fields)


def text_input(**fields: Any) -> dict[str, Any]:
    return payload("input", "q", **fields)


def number_input(**fields: Any) -> dict[str, Any]:
    return payload("input", "q", input_type="number", **fields)


ACCEPTED: dict[str, tuple[dict[str, Any], Any]] = {
    "choice single": (choice(), ["b"]),
    "choice multiple": (choice(multiple=True), ["c", "a"]),
    "choice multiple none selected": (choice(multiple=True), []),
    "choice multiple at min": (choice(multiple=True, min_selected=2), ["a", "b"]),
    "choice multiple at max": (choice(multiple=True, max_selected=2), ["a", "c"]),
    "confirm true": (payload("confirm", "q"), True),
    "confirm false": (payload("confirm", "q"), False),
    "text": (text_input(), "Ada Lovelace"),
    "text empty when not required": (text_input(), ""),
    "text at max length": (text_input(max_length=3), "abc"),
    # one astral character is two UTF-16 units, as the browser's maxlength counts it
    "astral character counts 2 toward min_length": (text_input(min_length=2), "😀"),
    "astral character within max_length": (text_input(max_length=3), "a😀"),
    "pattern matched whole": (text_input(pattern="[a-z]+"), "abc"),
    "pattern not checked on an empty optional answer": (text_input(pattern="[a-z]+"), ""),
    "number": (number_input(), 42),
    "number zero": (number_input(min=0), 0),
    "number float at max": (number_input(min=-1.5, max=2.5), 2.5),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_H14_a_valid_answer_reaches_the_asker_once(host: Host, sent: Recorder, case: str) -> None:
    body, value = ACCEPTED[case]
    show(host, body)
    answer = assert_answer_accepted(host, sent, "q", "answered", value)
    assert answer["payload"]["kind"] == body["kind"]
    shown = host.components.get("q")
    assert not shown.pending
    assert shown.to_view()["answer"]["value"] == value


REFUSED_ANSWERS: dict[str, tuple[dict[str, Any], Any, Any, str]] = {
    # case: (question, refused value, a value the same question takes, path of the refusal)
    "choice single with two": (choice(), ["a", "b"], ["a"], "$.payload.value"),
    "choice single with none": (choice(), [], ["a"], "$.payload.value"),
    "choice below min_selected": (
        choice(multiple=True, min_selected=2), ["a"], ["a", "b"], "$.payload.value",
    ),
    "choice above max_selected": (
        choice(multiple=True, max_selected=1), ["a", "b"], ["b"], "$.payload.value",
    ),
    "choice unknown option id": (choice(multiple=True), ["a", "z"], ["a"], "$.payload.value"),
    "choice duplicate option id": (choice(multiple=True), ["a", "a"], ["a"], "$.payload.value"),
    "choice not a list": (choice(), "a", ["a"], "$.payload.value"),
    # refused by the payload's own model: the path still starts at the payload
    "choice option not an id": (choice(), ["not an id"], ["a"], "$.payload.value[0]"),
    "confirm with a string": (payload("confirm", "q"), "yes", True, "$.payload.value"),
    "confirm with a number": (payload("confirm", "q"), 1, False, "$.payload.value"),
    "text required but empty": (text_input(required=True), "", "x", "$.payload.value"),
    "text below min_length": (text_input(min_length=3), "ab", "abc", "$.payload.value"),
    "text above max_length": (text_input(max_length=3), "abcd", "abc", "$.payload.value"),
    # three code points, but four UTF-16 units: over a browser's maxlength of 3
    "astral character counts 2 toward max_length": (
        text_input(max_length=3), "ab😀", "a😀", "$.payload.value",
    ),
    "astral character alone below min_length 3": (
        text_input(min_length=3), "😀", "a😀", "$.payload.value",
    ),
    # re.search or re.match would accept these; the pattern must match the whole value
    "pattern matches only a prefix": (
        text_input(pattern="[a-z]+"), "abc1", "abc", "$.payload.value",
    ),
    "pattern matches only a suffix": (
        text_input(pattern="[a-z]+"), "1abc", "abc", "$.payload.value",
    ),
    "text with a number": (text_input(), 5, "5", "$.payload.value"),
    "text with a list": (text_input(), ["a"], "a", "$.payload.value"),
    "text too long for any input": (
        text_input(), "x" * (16 * 1024 + 1), "x", "$.payload.value",
    ),
    "number below min": (number_input(min=1), 0, 1, "$.payload.value"),
    "number above max": (number_input(max=10), 10.5, 10, "$.payload.value"),
    "number with a bool": (number_input(), True, 1, "$.payload.value"),
    "number with a numeric string": (number_input(), "5", 5, "$.payload.value"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REFUSED_ANSWERS))
def test_H14_an_answer_that_breaks_the_constraints_is_refused(
    host: Host, sent: Recorder, case: str
) -> None:
    """H14: the kernel decides; the question stays open and still takes a good answer."""
    body, bad, good, path = REFUSED_ANSWERS[case]
    show(host, body)
    error = assert_answer_refused(host, sent, "q", "answered", bad, "invalid", "H14")
    assert error.path == path
    assert host.components.get("q").pending
    assert_answer_accepted(host, sent, "q", "answered", good)


@pytest.mark.parametrize(
    ("status", "value"), [("answered", None), ("cancelled", True), ("maybe", True)]
)
def test_H14_status_and_value_must_agree(
    host: Host, sent: Recorder, status: str, value: Any
) -> None:
    """H14: 'answered' carries a value, 'cancelled' does not, and there is no third status."""
    show(host, payload("confirm", "q"))
    assert_answer_refused(host, sent, "q", status, value, "invalid", "H14")
    assert host.components.get("q").pending


def test_H14_the_user_cancelling_sends_one_cancel_without_a_value(
    host: Host, sent: Recorder
) -> None:
    show(host, payload("input", "q"))
    answer = assert_answer_accepted(host, sent, "q", "cancelled", None)
    assert "value" not in answer["payload"]
    assert host.components.get("q").to_view()["answer"] == {
        "component_id": "q",
        "kind": "input",
        "status": "cancelled",
    }


@pytest.mark.parametrize("first", ["answered", "cancelled"])
@pytest.mark.parametrize("second", ["answered", "cancelled"])
def test_H14_a_second_answer_is_refused_and_the_first_stands(
    host: Host, sent: Recorder, first: str, second: str
) -> None:
    show(host, payload("confirm", "q"))
    assert_answer_accepted(host, sent, "q", first, True if first == "answered" else None)
    recorded = host.components.get("q").to_view()["answer"]
    value = False if second == "answered" else None
    assert_answer_refused(host, sent, "q", second, value, "component_conflict", "H14")
    assert host.components.get("q").to_view()["answer"] == recorded
    assert len(answers(sent)) == 1


@pytest.mark.parametrize("kind", ["markdown", "text", "status", "progress", "error"])
def test_H14_a_component_that_is_not_a_question_cannot_be_answered(
    host: Host, sent: Recorder, kind: str
) -> None:
    show(host, payload(kind))
    error = assert_answer_refused(host, sent, f"{kind}_1", "answered", True, "invalid", "H14")
    assert kind in error.message


def test_H14_the_answer_goes_only_to_the_agent_that_asked(host: Host) -> None:
    asker, bystander = host.connect_agent("agent_a"), host.connect_agent("agent_b")
    heard: list[str] = []
    bystander.on("component.answer", lambda e: heard.append(e["payload"]["component_id"]))
    asked = asker.confirm("Proceed?", component_id="q")
    host.answer("q", "answered", True)
    assert asked.result() is True
    assert heard == []


def test_H14_watchers_hear_the_answer_but_not_a_refused_one(host: Host) -> None:
    changes: list[tuple[str, str]] = []
    host.watch_components(lambda c: changes.append((c.kind, c.component.component_id)))
    show(host, payload("confirm", "q"))
    with pytest.raises(ProtocolError):
        host.answer("q", "answered", "no")
    host.answer("q", "answered", True)
    assert changes == [("show", "q"), ("answer", "q")]


# ---- the agent helpers ----------------------------------------------------------------------


def test_agent_display_helpers_show_each_kind(host: Host, sent: Recorder) -> None:
    agent = host.connect_agent("a1")
    ids = [
        agent.say("# Title"),
        agent.text("<i>as is</i>"),
        agent.status("Working on it"),
        agent.progress(),
        agent.show_error("timeout", "The service timed out."),
    ]
    assert list(host.components) == ids
    assert len(set(ids)) == 5
    shown = [host.components.get(i).to_view() for i in ids]
    assert [v["kind"] for v in shown] == ["markdown", "text", "status", "progress", "error"]
    assert shown[0]["html"] == "<h1>Title</h1>\n"
    assert shown[1]["text"] == "<i>as is</i>"
    assert (shown[2]["state"], shown[2]["label"]) == ("working", "Working on it")
    assert "value" not in shown[3]  # indeterminate
    assert (shown[4]["code"], shown[4]["message"]) == ("timeout", "The service timed out.")
    assert all(host.components.get(i).owner == "a1" for i in ids)
    assert answers(sent) == []


def test_agent_status_and_progress_update_in_place_by_id(host: Host) -> None:
    agent = host.connect_agent("a1")
    status = agent.status("Fetching")
    bar = agent.progress(0, 4, label="Files")
    for done in range(1, 5):
        agent.progress(done, 4, label="Files", component_id=bar)
    agent.status("Fetched", "done", component_id=status)
    assert list(host.components) == [status, bar]
    assert host.components.get(bar).to_view()["value"] == 4
    assert host.components.get(status).to_view()["state"] == "done"


def test_agent_remove(host: Host) -> None:
    agent = host.connect_agent("a1")
    shown = agent.text("bye")
    agent.remove(shown)
    assert shown not in host.components
    with pytest.raises(ProtocolError) as caught:
        agent.remove(shown)
    assert caught.value.code == "unknown_component"


def test_agent_refusal_raises_and_shows_nothing(host: Host) -> None:
    """The notebook author's bad call raises the precise ProtocolError; nothing is shown."""
    agent = host.connect_agent("a1")
    agent.text("kept")
    before = views(host)
    with pytest.raises(ProtocolError) as caught:
        agent.progress(5, 2)
    assert (caught.value.rule, caught.value.path) == ("H12", "$.payload.value")
    with pytest.raises(ProtocolError) as caught:
        agent.ask_choice("Pick", ["same", "same"], min_selected=1)
    assert caught.value.path == "$.payload.multiple"
    assert views(host) == before
    assert agent._questions == {}  # the refused question is not waited for


def test_agent_ask_choice_with_labels_answers_with_labels(host: Host) -> None:
    agent = host.connect_agent("a1")
    single = agent.ask_choice("City?", ["Oslo", "Lyon"])
    several = agent.ask_choice("Cities?", ["Oslo", "Lyon", "Rome"], multiple=True)
    view = host.components.get(single.component_id).to_view()
    assert [o["label"] for o in view["options"]] == ["Oslo", "Lyon"]
    host.answer(single.component_id, "answered", [view["options"][1]["id"]])
    ids = [o["id"] for o in host.components.get(several.component_id).to_view()["options"]]
    host.answer(several.component_id, "answered", [ids[2], ids[0]])
    assert (single.status, single.result()) == ("answered", "Lyon")
    assert several.result() == ["Rome", "Oslo"]


def test_agent_ask_choice_with_a_mapping_answers_with_ids(host: Host) -> None:
    agent = host.connect_agent("a1")
    single = agent.ask_choice("Unit?", {"c": "Celsius", "f": "Fahrenheit"})
    several = agent.ask_choice(
        "Days?", {"mon": "Monday", "tue": "Tuesday"}, multiple=True, min_selected=1
    )
    assert host.components.get(several.component_id).to_view()["min_selected"] == 1
    host.answer(single.component_id, "answered", ["f"])
    host.answer(several.component_id, "answered", ["tue"])
    assert single.result() == "f"
    assert several.result() == ["tue"]


def test_agent_confirm_and_ask_input(host: Host) -> None:
    agent = host.connect_agent("a1")
    confirm = agent.confirm("Send it?", confirm_label="Send", cancel_label="Keep")
    name = agent.ask_input("Name?", required=True, max_length=20, placeholder="Ada")
    count = agent.ask_input("How many?", input_type="number", min=1, max=9)
    confirm_view = host.components.get(confirm.component_id).to_view()
    assert (confirm_view["confirm_label"], confirm_view["cancel_label"]) == ("Send", "Keep")
    name_view = host.components.get(name.component_id).to_view()
    assert (name_view["required"], name_view["max_length"]) == (True, 20)
    host.answer(confirm.component_id, "answered", False)
    host.answer(name.component_id, "answered", "Ada")
    host.answer(count.component_id, "answered", 3)
    assert confirm.result() is False
    assert name.result() == "Ada"
    assert count.result() == 3


def test_agent_question_awaited_gives_the_answer(host: Host) -> None:
    agent = host.connect_agent("a1")

    async def cell() -> Any:
        question = agent.confirm("Go?")
        assert not question.done()
        # the view answers while the cell awaits, as the kernel's event loop would deliver it
        asyncio.get_running_loop().call_soon(host.answer, question.component_id, "answered", True)
        return await question

    assert asyncio.run(cell()) is True


def test_agent_question_awaited_after_it_was_answered(host: Host) -> None:
    agent = host.connect_agent("a1")
    question = agent.ask_input("Name?")
    host.answer(question.component_id, "answered", "Ada")

    async def cell() -> Any:
        return await question

    assert asyncio.run(cell()) == "Ada"


def test_agent_question_removed_while_awaited_gives_none(host: Host, sent: Recorder) -> None:
    """H14: the cancel is the question's one answer; the awaiting cell gets None."""
    agent = host.connect_agent("a1")

    async def cell() -> Any:
        question = agent.ask_choice("City?", ["Oslo"])
        asyncio.get_running_loop().call_soon(question.cancel)
        return await question, question

    value, question = asyncio.run(cell())
    assert value is None and question.status == "cancelled"
    assert question.component_id not in host.components
    assert [a["payload"]["status"] for a in answers(sent)] == ["cancelled"]
    question.cancel()  # already done: a no-op, not a refused remove
    assert len(answers(sent)) == 1 and agent.errors == []


def test_agent_question_callback_runs_once(host: Host) -> None:
    agent = host.connect_agent("a1")
    question = agent.confirm("Go?")
    early: list[Any] = []
    question.add_done_callback(early.append)
    assert early == []
    host.answer(question.component_id, "answered", True)
    with pytest.raises(ProtocolError, match="already answered"):  # no second call
        host.answer(question.component_id, "answered", False)
    late: list[Any] = []
    question.add_done_callback(late.append)  # after the fact: called at once
    assert early == [True] and late == [True]


def test_agent_user_cancel_resolves_none(host: Host) -> None:
    agent = host.connect_agent("a1")
    question = agent.ask_input("Name?")
    host.answer(question.component_id, "cancelled")
    assert (question.status, question.done(), question.result()) == ("cancelled", True, None)


def test_agent_result_refuses_to_block_the_running_loop(host: Host) -> None:
    """Waiting on the event loop that delivers the answer would deadlock the kernel."""
    agent = host.connect_agent("a1")
    question = agent.confirm("Go?")
    bare: Pending[int] = Pending("the test value")

    async def cell() -> None:
        with pytest.raises(UsageError, match="await"):
            question.result()
        with pytest.raises(UsageError, match="the test value"):
            bare.result()
        bare._resolve(7)
        assert bare.result() == 7  # a value that is there is returned, loop or not

    asyncio.run(cell())
    assert not question.done() and question.status == "pending"
    with pytest.raises(TimeoutError):
        question.result(timeout=0.01)


def test_agent_pending_resolves_only_once() -> None:
    pending: Pending[str] = Pending("x")
    assert pending._resolve("first") is True
    assert pending._resolve("second") is False
    assert pending.result() == "first"


def test_H13_agent_reasking_a_question_keeps_the_first_one_waiting(host: Host) -> None:
    """H13: the refused re-ask raises, and the first question still gets the user's answer
    (it must not be orphaned by the second handle)."""
    agent = host.connect_agent("a1")
    first = agent.confirm("First?", component_id="q")
    with pytest.raises(ProtocolError) as caught:
        agent.confirm("Second?", component_id="q")
    assert caught.value.code == "component_conflict"
    assert host.components.get("q").to_view()["prompt"] == "First?"
    host.answer("q", "answered", True)
    assert first.done() and first.result() is True


# ---- the golden fixtures, played through a host ---------------------------------------------


def test_H12_H14_golden_component_fixtures_play_through_a_host(host: Host, sent: Recorder) -> None:
    """The valid component.show/remove fixtures are accepted in turn; the user's answers the
    host then sends are exactly the golden component.answer payloads."""
    names = sorted(n for n, e in EXPECTED.items() if n.startswith("component-show-"))
    valid = [n for n in names if EXPECTED[n]["verdict"] == "valid"]
    assert len(valid) >= 8 and len(names) > len(valid)  # each kind, and refused ones too
    for name in valid:
        assert host.receive(golden(name)) is None, name
    assert host.receive(golden("component-remove.json")) is None
    assert "progress.01" not in host.components
    for name in ("component-answer-choice.json", "component-answer-input-number.json",
                 "component-answer-cancelled.json"):  # fmt: skip
        expected = golden(name)["payload"]
        host.answer(expected["component_id"], expected["status"], expected.get("value"))
        assert answers(sent)[-1]["payload"] == expected
    assert len(answers(sent)) == 3


def test_H14_a_whole_number_answer_stays_a_whole_number(host: Host, sent: Recorder) -> None:
    """H14: the user's 3 reaches the agent as 3, not 3.0; 2.5 stays 2.5."""
    show(host, number_input())
    assert_answer_accepted(host, sent, "q", "answered", 3)
    assert answers(sent)[-1]["payload"]["value"] == 3
    assert type(answers(sent)[-1]["payload"]["value"]) is int
    show(host, payload("input", "q2", input_type="number"))
    assert_answer_accepted(host, sent, "q2", "answered", 2.5)
    assert type(answers(sent)[-1]["payload"]["value"]) is float


def test_H14_simple_patterns_are_accepted() -> None:
    """H14: ordinary input patterns, nested repetition included, are shown (RE2 is linear)."""
    for pattern in ("[a-z]+", "(?:ab)+", "\\d{3}-\\d{4}", "(foo|bar)", "[\\(+*]+", "(a+)+$"):
        body = payload("input", "p", pattern=pattern)
        validate_envelope(message("component.show", body))


def test_H1_an_unknown_field_names_only_the_fields_of_its_kind(host: Host, sent: Recorder) -> None:
    """H1: a misspelt field gets a "did you mean" and the fields a text component has, not
    those of every kind."""
    error = assert_envelope_refused_once(
        host,
        sent,
        message("component.show", payload("text", txt="y")),
        "invalid",
        "H1",
        "$.payload.txt",
    )
    assert "Did you mean 'text'?" in error.message
    assert "Allowed here: component_id, kind, text, version." in error.message
