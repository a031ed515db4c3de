"""The feed from the kernel to the host's view (_view_feed.py), with the widget's comm replaced
by a list: each change alone and numbered, the traits holding the whole picture for a reload or
a saved notebook, and the whole picture again when a view asks (a gap, a reload)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lineup_jupyter import Host, ProtocolError, render_markdown
from lineup_jupyter.core._surfaces import merge_patch, merged_size
from lineup_jupyter.protocol import size
from lineup_jupyter.widgets._view_feed import common_prefix, utf16_length

from ..conftest import examples, view_sends


@pytest.fixture
def widget(fed: Any) -> Any:
    return fed


def ops(widget: Any) -> list[dict[str, Any]]:
    return [op for message in widget.sent if message["kind"] == "feed" for op in message["ops"]]


def test_opening_replacing_and_closing_send_that_surface_alone(host: Host, widget: Any) -> None:
    """U1, U10: the n-th surface costs its own bundle; the traits keep every open one."""
    agent = host.connect_agent("a")
    agent.open("one", html="<p>1</p>", state={"n": 1})
    agent.open("two", html="<p>2</p>")
    agent.open("one", html="<p>new</p>", state={"n": 2})  # a replace: a new generation
    agent.close("two")
    sent = ops(widget)
    assert [(op["op"], op.get("spec", op).get("instance_id")) for op in sent] == [
        ("open", "one"),
        ("open", "two"),
        ("open", "one"),
        ("close", "two"),
    ]
    assert sent[1]["spec"]["html"] == "<p>2</p>" and "one" not in json.dumps(sent[1])
    assert [(s["instance_id"], s["generation"], s["html"]) for s in widget.surfaces] == [
        ("one", 3, "<p>new</p>")
    ]


def test_a_component_changes_alone_and_a_longer_text_sends_its_new_end(
    host: Host, widget: Any
) -> None:
    """H13: an update of one component among many sends that component; a say() or text()
    repeating an id with a text that extends the last sends the extension only."""
    agent = host.connect_agent("a")
    for n in range(20):
        agent.status(f"step {n}", "done", component_id=f"s{n}")
    agent.text("Hello", component_id="t")
    agent.text("Hello, world", component_id="t")
    agent.say("# Title\n\nfirst", component_id="m")
    agent.say("# Title\n\nfirst paragraph\n\nsecond", component_id="m")
    agent.status("step 3", "failed", component_id="s3")
    sent = ops(widget)[20:]
    assert sent[1] == {
        "op": "splice",
        "component_id": "t",
        "rev": 2,
        "field": "text",
        "cut": 0,
        "add": ", world",
    }
    markdown = sent[3]
    assert markdown["op"] == "splice" and markdown["field"] == "html"
    assert "Title" not in markdown["add"]  # the heading was sent once
    assert sent[4]["op"] == "component" and sent[4]["view"]["component_id"] == "s3"
    shown = {view["component_id"]: view for view in widget.components}
    assert shown["m"]["html"] == render_markdown("# Title\n\nfirst paragraph\n\nsecond")
    assert shown["t"]["text"] == "Hello, world" and shown["t"]["rev"] == 2
    assert [view["component_id"] for view in widget.components][-2:] == ["t", "m"]


def test_a_shorter_or_different_text_is_sent_whole_or_cut(host: Host, widget: Any) -> None:
    """H13: what the view applies always ends on the kernel's text, in UTF-16 units."""
    agent = host.connect_agent("a")
    agent.text("abc😀def", component_id="t")
    agent.text("abc😀x", component_id="t")
    splice = ops(widget)[1]
    assert (splice["cut"], splice["add"]) == (3, "x")
    old = "abc😀def"
    assert old.encode("utf-16-le")[: 2 * (utf16_length(old) - splice["cut"])].decode(
        "utf-16-le"
    ) + splice["add"] == ("abc😀x")


def test_removing_and_showing_again_keeps_the_kernels_order(host: Host, widget: Any) -> None:
    agent = host.connect_agent("a")
    for name in "abc":
        agent.text(name, component_id=name)
    agent.remove("a")
    agent.text("a again", component_id="a")
    assert ops(widget)[3] == {"op": "removed", "component_id": "a"}
    assert [view["component_id"] for view in widget.components] == ["b", "c", "a"]


def test_a_view_that_missed_a_message_gets_everything_as_a_snapshot(
    host: Host, widget: Any
) -> None:
    """A view that sees a gap in ``seq`` asks ``sync``: the snapshot numbers what it holds, so
    the next message follows it."""
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"n": 0})
    agent.patch("w", {"n": 1}, merge=True)
    agent.say("hi", component_id="m")
    view_sends(widget, {"kind": "sync"})
    snapshot = widget.sent[-1]
    assert snapshot["seq"] == 3 and [m["seq"] for m in widget.sent[:-1]] == [1, 2, 3]
    assert snapshot["surfaces"][0]["state"] == {"n": 1}
    assert [view["component_id"] for view in snapshot["components"]] == ["m"]
    agent.patch("w", {"n": 2}, merge=True)
    assert widget.sent[-1]["seq"] == 4 and widget.sent[-1]["ops"][0]["base"] == 2


def test_the_traits_are_never_sent_again_after_the_widget_is_made(host: Host) -> None:
    """A synced trait is sent whole whenever it is assigned: the feed edits the lists in
    place, so the only trait traffic is the widget's own creation."""
    widget = host.widget
    updates: list[Any] = []
    original = widget.send_state
    widget.send_state = lambda key=None: updates.append(key) or original(key)
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"n": 0})
    agent.patch("w", {"n": 1}, merge=True)
    agent.say("hello", component_id="m")
    assert updates == []
    assert widget.get_state("surfaces")["surfaces"][0]["state"] == {"n": 1}
    widget.agents = [{"agent_id": "x"}]  # the control: an assignment is seen here
    assert updates == ["agents"]


def test_common_prefix_finds_the_first_difference() -> None:
    assert common_prefix("abcdef", "abcxef") == 3
    assert common_prefix("abc", "abcdef") == 3
    assert common_prefix("", "x") == 0
    assert common_prefix("same", "same", 2) == 4
    for cut in range(50):
        a = "x" * 49
        b = a[:cut] + "y" + a[cut + 1 :]
        assert common_prefix(a, b) == (cut if cut < 49 else 49)


def test_the_records_since_a_number_are_the_newest_without_a_scan(host: Host) -> None:
    """The inspector's new records cost their own number, not the history's (issue 16)."""
    agent = host.connect_agent("a")
    for n in range(30):
        agent.text(str(n), component_id=f"t{n}")
    history = host.history
    last = list(history)[-1].seq
    assert [r.seq for r in history.since(last - 3)] == [last - 2, last - 1, last]
    assert history.since(last) == [] and history.since(0) == list(history)
    small = Host(conversation_id="conv_01", history_size=5)
    other = small.connect_agent("a")
    for n in range(12):
        other.text(str(n), component_id=f"t{n}")
    assert small.history.since(1) == list(small.history)  # fell off the front: all there is


JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)
OBJECTS = st.dictionaries(st.text(max_size=4), JSON_VALUES, max_size=6)


@settings(max_examples=examples(400), deadline=None)
@given(target=OBJECTS, patch=OBJECTS)
def test_h7_the_size_after_a_merge_is_counted_from_the_members_it_touches(
    target: dict[str, Any], patch: dict[str, Any]
) -> None:
    """H7 checks a merged state against the limit without measuring all of it: the count
    from the touched members is exactly the size of the merged state."""
    target = merge_patch({}, target)  # a state holds no nulls
    assert merged_size(target, size(target), patch) == size(merge_patch(target, patch))


def test_h7_a_merge_past_the_limit_is_still_refused(host: Host) -> None:
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"pad": "x" * (200 * 1024)})
    agent.patch("w", {"n": 1}, merge=True)
    with pytest.raises(ProtocolError) as caught:
        agent.patch("w", {"more": "y" * (60 * 1024)}, merge=True)
    assert (caught.value.code, caught.value.rule) == ("too_large", "H7")
    agent.patch("w", {"pad": None, "more": "y" * (60 * 1024)}, merge=True)  # fits again
    assert host.surfaces["w"].revision == 3
