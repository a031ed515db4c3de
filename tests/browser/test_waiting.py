"""A cell that awaits the user points to where the user answers (docs/agents.md, "Where the
user looks"), in real JupyterLab: the consent card and the question are drawn in the host's
output, far above; the awaiting cell shows a live line whose Show button scrolls the card into
view, and which says how it ended once the user decided or answered (C10, H14)."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import OpenNotebook, decide

SETUP = """\
import tempfile
from lineup_jupyter import Host

host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_hermes_main")
host
"""
# Pushes the host's output out of view, as a long notebook does.
SPACER = "from IPython.display import HTML\nHTML('<div style=\"height: 2400px\">spacer</div>')"
CALL = """\
result = await agent.call('artifact.save', {'path': 'w.txt', 'content': 'a'},
                          reason='save the report', call_id='w1')
print('status=' + result.status)"""
QUESTION = """\
unit = await agent.ask_choice("Which unit?", ["C", "F"], component_id="unit")
print('unit=' + unit)"""


def test_an_awaited_call_points_to_its_card_and_says_how_it_ended(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP, SPACER, CALL], run=False)
    page = notebook.page
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    line = page.locator(".jp-Cell").last.locator(".lineup-waiting")
    expect(line).to_contain_text("Waiting for your decision: artifact.save ('save the report')")
    card = page.locator('.lineup-host .lineup-prompt[data-call-id="w1"]')
    expect(card).to_have_count(1)
    line.scroll_into_view_if_needed()  # the user looks at the cell that waits
    expect(card).not_to_be_in_viewport()
    line.get_by_role("button", name="Show").click()
    expect(card).to_be_in_viewport()
    decide(card.locator("button.lineup-allow"))
    expect(line).to_contain_text("artifact.save ('save the report'): completed")
    expect(line.get_by_role("button", name="Show")).to_be_hidden()
    expect(page.locator(".jp-OutputArea-output", has_text="status=completed")).to_be_visible()


def test_an_awaited_question_points_to_it_and_shows_the_answer(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP, SPACER, QUESTION], run=False)
    page = notebook.page
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    line = page.locator(".jp-Cell").last.locator(".lineup-waiting")
    expect(line).to_contain_text("Waiting for your answer: choice 'Which unit?'")
    question = page.locator('.lineup-host .lineup-component[data-component-id="unit"]')
    expect(question).to_have_count(1)
    line.scroll_into_view_if_needed()
    expect(question).not_to_be_in_viewport()
    line.get_by_role("button", name="Show").click()
    expect(question).to_be_in_viewport()
    decide(question.get_by_label("F"), question.locator("label", has_text="F"))
    decide(question.get_by_role("button", name="Submit"))
    expect(line).to_contain_text("answered: 'F'")
    expect(page.locator(".jp-OutputArea-output", has_text="unit=F")).to_be_visible()


def test_a_call_awaited_without_the_host_on_the_page_says_where_to_look(
    open_notebook: OpenNotebook,
) -> None:
    setup = SETUP.replace("\nhost\n", "\n")  # the host is never displayed
    # It expires in 15 s: with the cell awaiting, the kernel runs nothing else to decide it.
    notebook = open_notebook(
        [setup, CALL.replace("call_id='w1'", "call_id='w1', expires_in=15")], run=False
    )
    page = notebook.page
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    line = page.locator(".jp-Cell").last.locator(".lineup-waiting")
    line.get_by_role("button", name="Show").click()
    expect(line).to_contain_text("display `host` in a cell to see it")
    expect(line).to_contain_text("artifact.save ('save the report'): expired")
    expect(page.locator(".jp-OutputArea-output", has_text="status=expired")).to_be_visible()
