"""Streaming text into a component (H45: lineup.v1.component.append, ``agent.stream``)."""

from __future__ import annotations

from typing import Any

import pytest

from lineup_jupyter import Host, ProtocolError, UsageError, render_markdown

from ..conftest import golden


@pytest.fixture
def widget(fed: Any) -> Any:
    return fed


def test_h45_a_stream_grows_a_markdown_component_one_write_at_a_time(
    host: Host, widget: Any
) -> None:
    """Each write reaches the view as the new end of the HTML, and the component ends as the
    whole text rendered at once."""
    agent = host.connect_agent("a")
    tokens = ["# Ti", "tle\n\nHello ", "**wor", "ld**", "\n\n- a\n- b", "\n\nend"]
    with agent.stream("answer") as stream:
        for token in tokens:
            stream.write(token)
    text = "".join(tokens)
    component = host.components.get("answer")
    assert component is not None and component.spec.markdown == text
    assert component.html == render_markdown(text)
    ops = [op for message in widget.sent for op in message["ops"]]
    assert [op["op"] for op in ops] == ["component"] + ["splice"] * len(tokens)
    assert "Title" not in "".join(op["add"] for op in ops[3:])  # the heading went once
    appended = [r.envelope for r in host.history.select(type="lineup.v1.component.append")]
    assert [e["payload"]["text"] for e in appended] == tokens  # each costs its own text


def test_h45_a_text_stream_appends_verbatim(host: Host, widget: Any) -> None:
    agent = host.connect_agent("a")
    with agent.stream("log", kind="text", text="$ run\n") as stream:
        stream.write("<b>ok</b>\n")
        stream.write("")  # nothing to send
    assert host.components.get("log").to_view()["text"] == "$ run\n<b>ok</b>\n"
    assert widget.sent[-1]["ops"][0] == {
        "op": "splice",
        "component_id": "log",
        "rev": 2,
        "field": "text",
        "cut": 0,
        "add": "<b>ok</b>\n",
    }


def test_h45_only_the_owner_appends_only_to_markdown_or_text_within_the_limit(
    host: Host,
) -> None:
    """Each refusal names its rule and path and changes nothing (H3)."""
    agent = host.connect_agent("a")
    other = host.connect_agent("b")
    agent.say("start", component_id="m")
    agent.status("busy", component_id="s")
    cases = [
        (other, "m", "x", "not_owner", "$.payload.component_id"),
        (agent, "s", "x", "component_conflict", "$.payload.component_id"),
        (agent, "none", "x", "unknown_component", "$.payload.component_id"),
        (agent, "m", "x" * (256 * 1024), "too_large", "$.payload.text"),
    ]
    for sender, component_id, text, code, path in cases:
        with pytest.raises(ProtocolError) as caught:
            sender.send("component.append", {"component_id": component_id, "text": text})
        assert (caught.value.code, caught.value.path) == (code, path), component_id
    assert host.components.get("m").spec.markdown == "start"
    with pytest.raises(ProtocolError) as caught:
        agent.send("component.append", {"component_id": "m", "text": ""})
    assert (caught.value.code, caught.value.rule) == ("invalid", "H45")


def test_h45_the_golden_append_plays_through_a_host(host: Host) -> None:
    show = golden("component-show-markdown.json")
    assert host.receive(show) is None
    assert host.receive(golden("component-append.json")) is None
    component = host.components.get("summary.01")
    assert component is not None
    assert (
        component.spec.markdown
        == show["payload"]["markdown"] + (golden("component-append.json")["payload"]["text"])
    )
    assert component.html == render_markdown(component.spec.markdown)


def test_h45_a_stream_is_markdown_or_text() -> None:
    host = Host(conversation_id="conv_01")
    with pytest.raises(UsageError, match="markdown or text"):
        host.connect_agent("a").stream(kind="status")
