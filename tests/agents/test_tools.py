"""An agent driven by a tool-calling model (docs/agents.md, "A model drives it"): the tool
definitions, each tool, and a whole loop with a scripted model and a scripted user."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import jsonschema
import pytest

from lineup_jupyter import Host
from lineup_jupyter.testing import ScriptedModel, ScriptedUser

TOOLS = [
    "open_surface",
    "patch_surface",
    "close_surface",
    "wait_for_event",
    "say",
    "ask_choice",
    "confirm",
    "ask_input",
    "call_capability",
]


def test_the_definitions_in_both_common_shapes_with_valid_schemas(host: Host) -> None:
    """C4: the capabilities offered are those of the agent's latest inventory."""
    agent = host.connect_agent("a")
    anthropic = agent.tool_definitions()
    assert [tool["name"] for tool in anthropic] == TOOLS
    for tool in anthropic:
        assert set(tool) == {"name", "description", "input_schema"} and tool["description"]
        jsonschema.Draft202012Validator.check_schema(tool["input_schema"])
    openai = agent.tool_definitions(style="openai")
    assert [tool["function"]["name"] for tool in openai] == TOOLS
    assert all(tool["type"] == "function" and "parameters" in tool["function"] for tool in openai)
    (call,) = [tool for tool in anthropic if tool["name"] == "call_capability"]
    offered = call["input_schema"]["properties"]["capability"]["enum"]
    assert offered == sorted(c["name"] for c in agent.inventory["capabilities"])  # type: ignore[index]
    assert "app.open_url" in offered


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("patch_surface", {"instance_id": "nope", "state": {}}, "H6"),
        ("open_surface", {"instance_id": "bad id!", "html": "<p>"}, "U1"),
        ("open_surface", {"html": "<p>"}, "missing argument 'instance_id'"),
        ("wait_for_event", {"instance_id": "nope"}, "no surface 'nope' is open"),
        ("fly", {}, "there is no tool 'fly'"),
    ],
)
def test_a_refused_or_malformed_call_comes_back_to_the_model_as_an_error(
    host: Host, name: str, arguments: dict[str, Any], error: str
) -> None:
    agent = host.connect_agent("a")
    result = asyncio.run(agent.use_tool(name, arguments))
    assert set(result) == {"error"} and error in result["error"]


def test_a_scripted_model_drives_surfaces_questions_and_a_capability() -> None:
    """The loop of notebooks/08, under the scripted user: U8 events, H14 answers, C10 calls."""

    def patch_with_the_count(messages: list[dict[str, Any]]) -> dict[str, Any]:
        clicked = json.loads(messages[-1]["content"])  # what wait_for_event gave back
        return {
            "content": "Counting.",
            "tool_calls": [
                {
                    "id": "t3",
                    "name": "patch_surface",
                    "arguments": {"instance_id": "count.1", "state": {"n": clicked["data"]["n"]}},
                },
                {
                    "id": "t4",
                    "name": "ask_choice",
                    "arguments": {"prompt": "Keep counting?", "options": ["yes", "no"]},
                },
            ],
        }

    model = ScriptedModel(
        [
            {
                "content": "I'll show a counter.",
                "tool_calls": [
                    {
                        "id": "t1",
                        "name": "open_surface",
                        "arguments": {
                            "instance_id": "count.1",
                            "html": "<button id=b>+1</button>",
                            "js": "b.onclick = () => LineUpSurface.event('inc', {n: 1})",
                            "state": {"n": 0},
                            "title": "Counter",
                        },
                    },
                    {"id": "t2", "name": "wait_for_event", "arguments": {"instance_id": "count.1"}},
                ],
            },
            patch_with_the_count,
            {
                "tool_calls": [
                    {
                        "id": "t5",
                        "name": "call_capability",
                        "arguments": {
                            "capability": "demo.double",
                            "arguments": {"n": 1},
                            "reason": "double it",
                        },
                    }
                ]
            },
            {"tool_calls": [{"id": "t6", "name": "say", "arguments": {"markdown": "**Done**"}}]},
            {"content": "All done."},
        ]
    )

    async def main(user: ScriptedUser) -> list[dict[str, Any]]:
        agent = user.connect_agent("agent_llm")
        user.host.capability("demo.double", risk="user_confirmation")(
            lambda arguments: {"n": 2 * arguments["n"]}
        )
        loop = asyncio.ensure_future(agent.tool_loop(model, [{"role": "user", "content": "go"}]))
        await user.expect_async("ui.open", instance_id="count.1")
        user.click("count.1", "inc", {"n": 1})
        await user.expect_async("ui.patch", instance_id="count.1")
        question = await user.expect_async("component.show", kind="choice")
        user.answer(question["payload"]["component_id"], ["0"])
        call = await user.expect_async("app.call", capability="demo.double")
        user.allow(call["payload"]["call_id"])
        return await loop

    with ScriptedUser() as user:
        conversation = asyncio.run(main(user))
        assert user.host.surfaces["count.1"].state == {"n": 1}
        assert user.host.surfaces["count.1"].app.name == "Counter"
    results = {
        m["tool_call_id"]: json.loads(m["content"]) for m in conversation if m["role"] == "tool"
    }
    assert results == {
        "t1": {"opened": "count.1"},
        "t2": {"event": "inc", "data": {"n": 1}},
        "t3": {"patched": "count.1"},
        "t4": {"answer": "yes"},
        "t5": {"status": "completed", "result": {"n": 2}, "error": None},
        "t6": {"shown": results["t6"]["shown"]},
    }
    assert conversation[-1] == {"role": "assistant", "content": "All done."}
    assert len(model.calls) == 5
    assert [t["name"] for t in model.calls[0][1]] == TOOLS


def test_wait_for_event_times_out_and_leaves_no_handler(host: Host) -> None:
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={})
    result = asyncio.run(agent.use_tool("wait_for_event", {"instance_id": "w", "timeout_s": 0}))
    assert result == {"timeout": True}
    assert agent.handlers == []


def test_the_loop_stops_after_max_steps(host: Host) -> None:
    agent = host.connect_agent("a")
    again = {"tool_calls": [{"id": "x", "name": "say", "arguments": {"markdown": "hi"}}]}
    model = ScriptedModel([again] * 10)
    conversation = asyncio.run(agent.tool_loop(model, [], max_steps=3))
    assert conversation[-1]["content"] == "(stopped after 3 steps)"
    assert len(model.calls) == 3
