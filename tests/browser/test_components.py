"""Standard components drawn by the host's own renderers in a real JupyterLab / Notebook 7 page.

The host view shows ``div.lineup-components`` with one ``div.lineup-component`` per component,
``data-component-id`` set and a ``lineup-kind-KIND`` class. Rules: L2, S6 and the host's
decisions H12-H15 (docs/protocol.md).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import FRESH_PAGE, UIS, OpenNotebook, decide
from .jupyter import UI, NotebookPage

SETUP = """\
import json
from lineup_jupyter import Host

host = Host(conversation_id="conv_components")
agent = host.connect_agent("agent_components")
answers = []  # every component.answer payload the agent received, in order
agent.on("component.answer", lambda envelope: answers.append(envelope["payload"]))
host
"""

SHOW_ALL = """\
agent.say("# Report\\n\\nSome **bold** text, <b>raw html</b>, [docs](https://example.org/docs).",
          component_id="md")
agent.text("<i>not markup</i>\\n  second line", component_id="txt")
agent.status("Loading data", component_id="st")
agent.progress(0.25, label="Download", component_id="pg")
agent.progress(label="Thinking", component_id="spin")
agent.show_error("E42", "The <script>server</script> said no.", component_id="err")
"""


def component(page: Page, component_id: str) -> Locator:
    return page.locator(f'.lineup-components .lineup-component[data-component-id="{component_id}"]')


def agent_answers(notebook: NotebookPage) -> list[dict[str, Any]]:
    received: list[dict[str, Any]] = json.loads(notebook.run_cell("print(json.dumps(answers))"))
    return received


def show(open_notebook: OpenNotebook, code: str, ui: UI = "lab") -> NotebookPage:
    notebook = open_notebook([SETUP, code], ui=ui)
    expect(notebook.page.locator(".lineup-components")).to_have_count(1)
    notebook.round_trip()  # the view has connected: a click now reaches the kernel
    return notebook


@pytest.mark.parametrize("ui", UIS)
def test_display_components_are_drawn_as_text_or_sanitized_markdown(
    open_notebook: OpenNotebook, ui: UI
) -> None:
    """L2, H12: each display kind is drawn by the host. S6, H15: Markdown arrives rendered and
    sanitized (raw HTML as text, links with rel and target); everything else is text."""
    notebook = show(open_notebook, SHOW_ALL, ui)
    page = notebook.page
    expect(page.locator(".lineup-components .lineup-component")).to_have_count(6)

    markdown = component(page, "md")
    expect(markdown.locator("h1")).to_have_text("Report")
    expect(markdown.locator("strong")).to_have_text("bold")
    expect(markdown.locator("b")).to_have_count(0)  # raw HTML stays text
    expect(markdown).to_contain_text("<b>raw html</b>")
    link = markdown.locator("a")
    expect(link).to_have_attribute("href", "https://example.org/docs")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", "noopener noreferrer nofollow")

    text = component(page, "txt").locator("pre")
    expect(text).to_have_text("<i>not markup</i>\n  second line")
    expect(component(page, "txt").locator("i")).to_have_count(0)

    status = component(page, "st")
    expect(status).to_have_attribute("role", "status")
    expect(status).to_have_attribute("data-state", "working")
    expect(status).to_have_text("Loading data")

    bar = component(page, "pg").locator("progress")
    expect(bar).to_have_attribute("value", "0.25")
    expect(bar).to_have_attribute("aria-label", "Download")
    expect(component(page, "pg")).to_contain_text("25%")
    spinner = component(page, "spin").locator("progress")
    expect(spinner).to_have_count(1)
    assert spinner.get_attribute("value") is None  # indeterminate

    error = component(page, "err")
    expect(error).to_have_attribute("role", "alert")
    expect(error).to_contain_text("E42")
    expect(error).to_contain_text("The <script>server</script> said no.")
    assert page.locator(".lineup-components script").count() == 0


def test_updates_in_place_keep_the_order_and_a_removed_component_goes(
    open_notebook: OpenNotebook,
) -> None:
    """H13: showing a shown id again updates it where it is; component.remove removes it."""
    notebook = show(open_notebook, SHOW_ALL)
    page = notebook.page
    ids = ".lineup-components .lineup-component"
    before = page.locator(ids).evaluate_all("nodes => nodes.map(n => n.dataset.componentId)")
    notebook.run_cell(
        "for step in range(1, 201):\n"
        '    agent.progress(step / 200, label="Download", component_id="pg")\n'
        'agent.status("Loaded", "done", component_id="st")'
    )
    expect(component(page, "pg").locator("progress")).to_have_attribute("value", "1")
    expect(component(page, "st")).to_have_attribute("data-state", "done")
    expect(component(page, "st")).to_have_text("Loaded")
    after = page.locator(ids).evaluate_all("nodes => nodes.map(n => n.dataset.componentId)")
    assert after == before

    notebook.run_cell('agent.remove("txt")')
    expect(component(page, "txt")).to_have_count(0)
    expect(page.locator(ids)).to_have_count(5)


@pytest.mark.parametrize("ui", UIS)
def test_a_choice_clicked_reaches_the_agent_once(open_notebook: OpenNotebook, ui: UI) -> None:
    """H14: the user's pick goes back exactly once; the card then shows the answer, read-only."""
    notebook = show(
        open_notebook,
        'colour = agent.ask_choice("Which colour?", {"red": "Red", "green": "Green"}, '
        'component_id="colour")',
        ui,
    )
    page = notebook.page
    card = component(page, "colour")
    expect(card.locator("legend")).to_have_text("Which colour?")
    decide(card.get_by_label("Green"), card.locator("label", has_text="Green"))
    decide(card.get_by_role("button", name="Submit"))
    expect(card.locator(".lineup-outcome")).to_have_text("Answered: Green")
    expect(card.get_by_role("button", name="Submit")).to_be_disabled()
    expect(card.get_by_label("Red")).to_be_disabled()
    expected = {
        "component_id": "colour",
        "kind": "choice",
        "status": "answered",
        "value": ["green"],
    }
    assert agent_answers(notebook) == [expected]
    assert notebook.run_cell("print(colour.result(), colour.status)") == "green answered\n"


def test_a_choice_that_breaks_its_rule_is_not_sent(open_notebook: OpenNotebook) -> None:
    """H14: a multiple choice asking for 2 or 3 options refuses one, in the card."""
    notebook = show(
        open_notebook,
        'q = agent.ask_choice("Pick two or three", ["a", "b", "c", "d"], multiple=True, '
        'min_selected=2, max_selected=3, component_id="multi")',
    )
    card = component(notebook.page, "multi")
    decide(card.get_by_label("b", exact=True), card.locator("label", has_text="b"))
    decide(card.get_by_role("button", name="Submit"))
    expect(card.locator(".lineup-problem")).to_have_text("Choose between 2 and 3 options.")
    notebook.round_trip()
    assert agent_answers(notebook) == []
    decide(card.get_by_label("d", exact=True), card.locator("label", has_text="d"))
    decide(card.get_by_role("button", name="Submit"))
    expect(card.locator(".lineup-outcome")).to_have_text("Answered: b, d")
    assert [a["value"] for a in agent_answers(notebook)] == [["1", "3"]]
    assert notebook.run_cell("print(q.result())") == "['b', 'd']\n"


def test_input_is_checked_then_sent_with_the_keyboard(open_notebook: OpenNotebook) -> None:
    """H14: required, length and pattern are checked in the card before anything is sent; the
    form works from the keyboard alone (type, Enter)."""
    notebook = show(
        open_notebook,
        'name = agent.ask_input("Project name", required=True, min_length=3, '
        'pattern=r"[a-z\\-]+", placeholder="my-project", component_id="name")',
    )
    page = notebook.page
    card = component(page, "name")
    field = card.get_by_label("Project name")
    expect(field).to_have_attribute("placeholder", "my-project")
    expect(field).to_have_attribute("data-armed", "")  # an Enter before that answers nothing
    field.press("Enter")
    expect(card.locator(".lineup-problem")).not_to_be_empty()
    field.fill("ab")
    field.press("Enter")
    expect(card.locator(".lineup-problem")).not_to_be_empty()
    field.fill("Bad Name")
    field.press("Enter")
    expect(card.locator(".lineup-problem")).not_to_be_empty()
    notebook.round_trip()
    assert agent_answers(notebook) == []
    field.fill("lineup-demo")
    field.press("Enter")
    expect(card.locator(".lineup-outcome")).to_have_text("Answered: lineup-demo")
    assert [a["value"] for a in agent_answers(notebook)] == ["lineup-demo"]


def test_a_pattern_the_kernel_cannot_check_is_refused_in_the_cell(
    open_notebook: OpenNotebook,
) -> None:
    """H14: a Python-only pattern ((?i) is not JavaScript; the browser would ignore it) is
    refused when shown: the cell says why, and no question is drawn that the kernel could not
    check the same way."""
    notebook = show(open_notebook, 'agent.text("ready")')
    output = notebook.run_cell(
        "try:\n"
        '    agent.ask_input("Code", pattern="(?i)abc", component_id="code")\n'
        "except Exception as refused:\n"
        "    print(refused.code, refused.rule, refused.path)"
    )
    assert output == "invalid H14 $.payload.pattern\n"
    expect(component(notebook.page, "code")).to_have_count(0)


def test_confirm_by_keyboard_and_cancel(open_notebook: OpenNotebook) -> None:
    """H14: confirm answers true or false; cancelling a choice sends one 'cancelled'."""
    notebook = show(
        open_notebook,
        'ok = agent.confirm("Delete 3 files?", confirm_label="Delete", cancel_label="Keep", '
        'component_id="ok")\n'
        'pick = agent.ask_choice("Or pick", ["x", "y"], component_id="pick")',
    )
    page = notebook.page
    keep = component(page, "ok").get_by_role("button", name="Keep")
    expect(keep).to_have_attribute("data-armed", "")
    keep.focus()  # the user tabs to it once it stood still (js/decision_input.js)
    page.keyboard.press("Enter")
    expect(component(page, "ok").locator(".lineup-outcome")).to_have_text("Answered: Keep")
    decide(component(page, "pick").get_by_role("button", name="Cancel"))
    expect(component(page, "pick").locator(".lineup-outcome")).to_have_text("Cancelled.")
    assert agent_answers(notebook) == [
        {"component_id": "ok", "kind": "confirm", "status": "answered", "value": False},
        {"component_id": "pick", "kind": "choice", "status": "cancelled"},
    ]
    assert notebook.run_cell("print(ok.result(), pick.result(), pick.status)") == (
        "False None cancelled\n"
    )


@FRESH_PAGE
def test_components_and_answers_survive_a_reload(open_notebook: OpenNotebook) -> None:
    """A reloaded page rebuilds every component from the kernel, answers included, and an
    open question can still be answered."""
    notebook = show(
        open_notebook,
        SHOW_ALL + 'done = agent.confirm("Done?", component_id="done")\n'
        'later = agent.confirm("Later?", component_id="later")',
    )
    page = notebook.page
    decide(component(page, "done").get_by_role("button", name="Confirm"))
    expect(component(page, "done").locator(".lineup-outcome")).to_have_text("Answered: Confirm")
    notebook.reload()
    expect(page.locator(".lineup-components .lineup-component")).to_have_count(8)
    expect(component(page, "md").locator("strong")).to_have_text("bold")
    expect(component(page, "done").locator(".lineup-outcome")).to_have_text("Answered: Confirm")
    notebook.round_trip()
    decide(component(page, "later").get_by_role("button", name="Confirm"))
    expect(component(page, "later").locator(".lineup-outcome")).to_have_text("Answered: Confirm")
    assert [a["component_id"] for a in agent_answers(notebook)] == ["done", "later"]


def test_components_follow_the_notebook_theme(open_notebook: OpenNotebook) -> None:
    """Components take JupyterLab's theme colours: text stays readable in light and dark."""
    notebook = show(open_notebook, SHOW_ALL)
    page = notebook.page
    card = component(page, "txt")

    def colours() -> tuple[str, str]:
        text, background = card.evaluate(
            "node => [getComputedStyle(node).color, getComputedStyle(node).backgroundColor]"
        )
        return text, background

    light = colours()
    notebook.command("apputils:change-theme", {"theme": "JupyterLab Dark"})
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "false")
    dark = colours()
    notebook.command("apputils:change-theme", {"theme": "JupyterLab Light"})
    expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "true")
    assert light != dark
    assert dark[0] != dark[1] and light[0] != light[1]  # text never the background's colour
