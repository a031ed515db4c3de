"""What the user's own handlers do wrong is shown, async handlers run, and re-running a cell
does not stack handlers (docs/agents.md, "Handlers")."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from lineup_jupyter import Host
from lineup_jupyter.agents._agent import Agent, SurfaceEvent

from ..conftest import view_sends


def opened(host: Host, agent_id: str = "a", instance_id: str = "w") -> Agent:
    agent = host.connect_agent(agent_id)
    agent.open(instance_id, html="<p>", state={})
    return agent


def cell(source: str, namespace: dict[str, Any]) -> None:
    """Run ``source`` as a notebook cell does: in the same __main__-like namespace each time."""
    exec(compile(source, "<cell>", "exec"), namespace)


# ---- failures are shown ----------------------------------------------------------------


def test_a_failing_event_handler_is_a_problem_with_its_traceback(host: Host) -> None:
    agent = opened(host)

    @agent.on_event("refresh")
    def refresh(event: SurfaceEvent) -> None:
        raise ZeroDivisionError("division by zero")

    host.user_event("w", "refresh")  # the user's click itself was fine: nothing raised
    (problem,) = list(host.problems)
    assert problem.message == "ZeroDivisionError: division by zero"
    assert "refresh()" in problem.where and "'refresh'" in problem.where
    assert problem.agent_id == "a" and problem.instance_id == "w"
    assert 'raise ZeroDivisionError("division by zero")' in problem.traceback
    (record,) = host.history.select(kind="handler_error")
    assert record.error is not None and "ZeroDivisionError" in record.error["message"]


def test_one_failing_handler_does_not_keep_the_event_from_the_others(host: Host) -> None:
    agent = opened(host)
    seen: list[str] = []

    @agent.on_event("refresh")
    def first(event: SurfaceEvent) -> None:
        raise RuntimeError("first broke")

    @agent.on_event("refresh")
    def second(event: SurfaceEvent) -> None:
        seen.append(event.event)

    host.user_event("w", "refresh")
    assert seen == ["refresh"]
    assert [p.message for p in host.problems] == ["RuntimeError: first broke"]


def test_a_failing_subscriber_is_a_problem_too(host: Host) -> None:
    def broken(envelope: dict[str, Any]) -> None:
        raise KeyError("payload")

    host.subscribe(broken)
    opened(host)
    assert any(p.message == "KeyError: 'payload'" for p in host.problems)


def test_an_undeclared_capability_of_the_users_own_agent_is_a_problem(
    host: Host, caplog: pytest.LogCaptureFixture
) -> None:
    """C3, issue 24: ``agent.call("artifact.sav", ...)`` answers unsupported with a suggestion;
    the user sees it in host.problems (and the host view) and as a line in the cell, without
    printing the result."""
    agent = host.connect_agent("a")
    handle = agent.call("artifact.sav", {"path": "x.txt", "content": ""}, reason="keep it")
    assert handle.done() and handle.result().status == "unsupported"
    (problem,) = list(host.problems)
    assert problem.source == "agent" and problem.agent_id == "a"
    assert problem.where == "agent 'a': app.call 'artifact.sav'"
    assert problem.message.startswith("unsupported (C3): no capability 'artifact.sav'")
    assert "did you mean 'artifact.save'?" in problem.message
    assert any("did you mean 'artifact.save'?" in r.getMessage() for r in caplog.records)
    # The control: a call the host serves is no problem, whatever the user decides.
    agent.call("artifact.save", {"path": "x.txt", "content": ""}, reason="keep it")
    assert len(host.problems) == 1


def test_problems_are_bounded_and_tracebacks_cut(host: Host) -> None:
    agent = opened(host)

    @agent.on_event("deep")
    def deep(event: SurfaceEvent) -> None:
        def down(n: int) -> None:
            if n == 0:
                raise ValueError(str(event.data["i"]) + "x" * 20_000)
            down(n - 1)

        down(50)

    for i in range(60):
        host.user_event("w", "deep", {"i": i})
    problems = list(host.problems)
    assert len(problems) == 50  # PROBLEMS_KEPT: the newest
    assert problems[-1].seq == 60
    assert all(len(p.traceback) <= 8_002 and len(p.message) <= 501 for p in problems)
    host.user_event("w", "deep", {"i": 59})  # the same failure again: counted, not listed
    assert (len(host.problems), host.problems[-1].count) == (50, 2)


def test_the_view_gets_the_problems_and_can_dismiss_them(host: Host) -> None:
    widget = host.widget
    agent = opened(host)

    @agent.on_event("refresh")
    def refresh(event: SurfaceEvent) -> None:
        raise ZeroDivisionError("boom")

    host.user_event("w", "refresh")
    (shown,) = widget.problems
    assert shown["instance_id"] == "w" and shown["message"] == "ZeroDivisionError: boom"
    assert "Traceback" in shown["traceback"]
    view_sends(widget, {"kind": "clear_problems"})
    assert widget.problems == [] and list(host.problems) == []


# ---- async handlers -----------------------------------------------------------------------


def test_an_async_handler_runs_on_the_loop_and_may_ask_the_user(host: Host) -> None:
    """H14: 'on click, ask the user' is an async handler awaiting a question."""
    answers: list[Any] = []

    async def main() -> None:
        agent = opened(host)

        @agent.on_event("clicked")
        async def clicked(event: SurfaceEvent) -> None:
            question = agent.ask_choice("Which?", ["red", "blue"], component_id="q")
            answers.append(await question)

        host.user_event("w", "clicked")
        for _ in range(100):  # the task starts, shows the question, then waits for the user
            await asyncio.sleep(0)
            if "q" in host.components:
                break
        host.answer("q", "answered", ["1"])  # the second label's option id
        for _ in range(100):
            await asyncio.sleep(0)
            if answers:
                break

    asyncio.run(main())
    assert answers == ["blue"]
    assert list(host.problems) == []


def test_an_async_handler_that_raises_is_a_problem(host: Host) -> None:
    async def main() -> None:
        agent = opened(host)

        @agent.on_event("clicked")
        async def clicked(event: SurfaceEvent) -> None:
            await asyncio.sleep(0)
            raise LookupError("late")

        host.user_event("w", "clicked")
        for _ in range(100):
            await asyncio.sleep(0)
            if len(host.problems):
                break

    asyncio.run(main())
    (problem,) = list(host.problems)
    assert problem.message == "LookupError: late" and problem.instance_id == "w"
    assert host.history.select(kind="handler_error")


def test_an_async_handler_runs_even_where_no_loop_runs(host: Host) -> None:
    """A plain script: the coroutine runs on a loop thread of its own, not silently never."""
    agent = opened(host)
    ran = threading.Event()

    @agent.on_event("clicked")
    async def clicked(event: SurfaceEvent) -> None:
        await asyncio.sleep(0)
        ran.set()

    host.user_event("w", "clicked")
    assert ran.wait(30)


# ---- re-running a cell ---------------------------------------------------------------------


def test_re_running_a_cell_replaces_its_handler_instead_of_stacking_it(host: Host) -> None:
    agent = opened(host)
    namespace: dict[str, Any] = {"agent": agent, "clicks": []}
    source = "@agent.on_event('clicked')\ndef on_click(event):\n    clicks.append(event.event)\n"
    cell(source, namespace)
    cell(source, namespace)  # the same cell, run again
    host.user_event("w", "clicked")
    assert namespace["clicks"] == ["clicked"]  # once, not twice
    assert len(agent.handlers) == 1


def test_the_same_function_for_two_events_or_instances_is_kept_for_each(host: Host) -> None:
    agent = opened(host)
    seen: list[str] = []

    def on_any(event: SurfaceEvent) -> None:
        seen.append(event.event)

    agent.on_event("a")(on_any)
    agent.on_event("b")(on_any)
    agent.on_event("a", instance_id="w")(on_any)
    assert len(agent.handlers) == 3
    host.user_event("w", "a")
    host.user_event("w", "b")
    assert seen == ["a", "a", "b"]  # "a" for every instance, and for "w"; then "b"


def test_lambdas_are_never_taken_for_each_other(host: Host) -> None:
    agent = opened(host)
    seen: list[int] = []
    agent.on_event("x")(lambda event: seen.append(1))
    agent.on_event("x")(lambda event: seen.append(2))
    host.user_event("w", "x")
    assert seen == [1, 2]


def test_off_removes_a_handler_by_the_function_or_a_re_run_of_it(host: Host) -> None:
    agent = opened(host)
    namespace: dict[str, Any] = {"agent": agent, "clicks": []}
    cell("@agent.on_event('c')\ndef on_click(event):\n    clicks.append(1)\n", namespace)
    cell("def on_click(event):\n    pass\n", namespace)  # redefined, not registered
    assert agent.off(namespace["on_click"]) == 1
    host.user_event("w", "c")
    assert namespace["clicks"] == []
    assert agent.off(namespace["on_click"]) == 0


def test_on_returns_the_handler_that_off_removes(host: Host) -> None:
    agent = opened(host)
    seen: list[str] = []
    handle = agent.on("ui.event", lambda envelope: seen.append(envelope["type"]))
    host.user_event("w", "x")
    assert agent.off(handle) == 1
    host.user_event("w", "x")
    assert seen == ["lineup.v1.ui.event"]


@pytest.mark.parametrize("risk", ["display_only", "user_confirmation"])
def test_a_capability_declared_again_replaces_the_first(host: Host, risk: str) -> None:
    """C7: re-running the cell that declares a capability leaves one, the newest."""
    namespace: dict[str, Any] = {"host": host}
    for answer in (1, 2):
        cell(
            f"@host.capability('demo.value', risk={risk!r})\n"
            f"def value(arguments):\n    return {{'v': {answer}}}\n",
            namespace,
        )
    assert list(host.capabilities).count("demo.value") == 1
    entry = host.capabilities.get("demo.value")
    assert entry is not None and entry.handler is not None and entry.handler({}) == {"v": 2}


def test_closures_made_by_one_factory_are_different_handlers(host: Host) -> None:
    agent = opened(host)
    seen: list[str] = []

    def register(tag: str) -> None:
        @agent.on_event("x")
        def on_x(event: SurfaceEvent) -> None:
            seen.append(tag)

    register("first")
    register("second")
    host.user_event("w", "x")
    assert seen == ["first", "second"]


# ---- a surface's own script ----------------------------------------------------------------


def test_a_surface_reported_error_is_a_problem_next_to_it(host: Host) -> None:
    """Issue 15: uncaught errors, rejections and console.error from a surface's script, as its
    bridge reports them, are shown like a handler's: bounded text, counted when repeated."""
    widget = host.widget
    opened(host)
    report = {"kind": "surface_problem", "instance_id": "w", "level": "console.error"}
    view_sends(widget, {**report, "text": "x" * 5000, "stack": "at f (srcdoc:1)"})
    view_sends(widget, {**report, "text": "x" * 5000, "stack": "at f (srcdoc:1)"})
    (problem,) = list(host.problems)
    assert problem.source == "surface" and problem.instance_id == "w" and problem.agent_id == "a"
    assert problem.where == "surface 'w' (console.error)" and problem.count == 2
    assert len(problem.message) <= 501 and problem.traceback == "at f (srcdoc:1)"
    assert widget.problems[0]["count"] == 2


@pytest.mark.parametrize(
    "content",
    [
        {"kind": "surface_problem", "instance_id": "gone", "text": "x"},  # no such surface
        {"kind": "surface_problem", "instance_id": 5, "text": "x"},
    ],
)
def test_a_surface_problem_for_no_open_surface_changes_nothing(
    host: Host, content: dict[str, Any]
) -> None:
    widget = host.widget
    opened(host)
    view_sends(widget, content)
    assert list(host.problems) == []


def test_an_unknown_level_is_reported_as_an_error(host: Host) -> None:
    widget = host.widget
    opened(host)
    view_sends(widget, {"kind": "surface_problem", "instance_id": "w", "level": "<b>", "text": "7"})
    (problem,) = list(host.problems)
    assert problem.where == "surface 'w' (error)" and problem.message == "7"


def test_a_surface_problem_of_the_wrong_shape_is_refused_h38(host: Host) -> None:
    """H38: a text that is not a string is refused at its path, and nothing is shown."""
    widget = host.widget
    opened(host)
    view_sends(widget, {"kind": "surface_problem", "instance_id": "w", "text": 7})
    assert list(host.problems) == []
    (record,) = host.history.select(kind="refused")
    assert record.error is not None and (record.error["rule"], record.error["path"]) == (
        "H38",
        "$.text",
    )
