"""A handler of the user's that fails is seen where the click was made (docs/agents.md,
"Handlers"), in real JupyterLab: its traceback in the surface's card; an async handler runs
on the kernel's loop and may ask the user; re-running the registering cell does not stack."""

from __future__ import annotations

from playwright.sync_api import expect

from .conftest import OpenNotebook, decide
from .test_components import component
from .test_surfaces import surface

SETUP = """\
import tempfile
from lineup_jupyter import Host

host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_demo")
agent.open("demo.1", html="<button id=go>go</button><button id=ask>ask</button>",
           js="go.onclick = () => LineUpSurface.event('go', {});"
              "ask.onclick = () => LineUpSurface.event('ask', {})", state={})
clicks = []
host
"""

HANDLERS = """\
@agent.on_event("go")
def on_go(event):
    clicks.append(event.event)
    return 1 / 0

@agent.on_event("ask")
async def on_ask(event):
    colour = await agent.ask_choice("Which colour?", ["red", "blue"], component_id="q.colour")
    agent.say(f"You chose **{colour}**", component_id="said")
"""


def test_a_failing_handler_shows_its_traceback_in_the_surface_card(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP, HANDLERS, HANDLERS])  # the handlers' cell, run twice
    page = notebook.page
    notebook.round_trip()
    surface(page, "demo.1").locator("#go").click()
    card = page.locator(".lineup-host .lineup-surface").filter(has=page.locator("iframe"))
    problem = card.locator(".lineup-handler-problem")
    expect(problem).to_have_count(1)  # one click, one handler: the re-run replaced it
    expect(problem.locator("summary")).to_contain_text("on_go() for ui.event 'go'")
    expect(problem.locator("summary")).to_contain_text("ZeroDivisionError: division by zero")
    problem.locator("summary").click()
    expect(problem.locator("pre")).to_contain_text("return 1 / 0")
    assert notebook.run_cell("print(clicks, len(host.problems))").strip() == "['go'] 1"

    page.locator(".lineup-host .lineup-handler-problems-clear").click()
    expect(problem).to_have_count(0)


def test_an_async_handler_asks_the_user_and_goes_on(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook([SETUP, HANDLERS])
    page = notebook.page
    notebook.round_trip()
    surface(page, "demo.1").locator("#ask").click()
    question = component(page, "q.colour")
    expect(question).to_contain_text("Which colour?")
    decide(question.get_by_label("blue"), question.locator("label", has_text="blue"))
    decide(question.get_by_role("button", name="Submit"))
    expect(component(page, "said")).to_contain_text("You chose blue")
    expect(page.locator(".lineup-host .lineup-handler-problem")).to_have_count(0)


BROKEN = """\
import tempfile
from lineup_jupyter import Host

host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_demo")
agent.open("throws.1", html="<p>on state</p>",
           js="LineUpSurface.onState((s) => { if (s.n > 0) throw new TypeError('no n here'); });"
              "Promise.reject(new RangeError('lost promise'));"
              "console.warn('careful', {n: 1});", state={"n": 0})
agent.open("syntax.1", html="<p>never runs</p>", js="let = = 1;", state={})
host
"""


def test_a_surfaces_own_errors_are_shown_next_to_it(open_notebook: OpenNotebook) -> None:
    """Issue 15: an exception in onState, an unhandled rejection, console.warn and a bundle
    that does not parse reach the host view and host.problems, as text."""
    notebook = open_notebook([BROKEN])
    page = notebook.page
    notebook.round_trip()
    notebook.run_cell("agent.patch('throws.1', {'n': 1})")
    throws = page.locator('.lineup-host .lineup-surface[data-instance-id="throws.1"]')
    titles = throws.locator(".lineup-handler-problem summary")
    expect(titles.filter(has_text="(rejection)")).to_contain_text("RangeError: lost promise")
    expect(titles.filter(has_text="(console.warn)")).to_contain_text('careful {"n":1}')
    # the bridge catches onState's exception and says so with console.error
    expect(titles.filter(has_text="(console.error)")).to_contain_text("TypeError: no n here")
    syntax = page.locator('.lineup-host .lineup-surface[data-instance-id="syntax.1"]')
    expect(syntax.locator(".lineup-handler-problem summary")).to_contain_text("(silent)")
    shown = notebook.run_cell(
        "print(sorted({(p.instance_id, p.where.split(' (')[1]) for p in host.problems}))"
    )
    assert shown.strip() == (
        "[('syntax.1', 'silent)'), ('throws.1', 'console.error)'), ('throws.1', "
        "'console.warn)'), ('throws.1', 'rejection)')]"
    )
