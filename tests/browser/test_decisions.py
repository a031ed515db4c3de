"""Decisions the user meant (issue 22, docs/security.md "Decisions"), attacked in a real
JupyterLab page, each with a control that proves the detector sees the escape.

- A user who keeps clicking at one spot (a game) while a consent card or a question appears
  there decides nothing, however long the clicks go on; a user who moves the pointer onto
  Allow once it stood still decides once (js/decision_input.js).
- A double click on a grant row's Allow allows that row only, never the row drawn under the
  pointer after the first click.
- A card or a question arriving moves no surface, card or button already on the page.
- A card reaches the user when an MCP app is full screen.
- A surface posting messages shaped like its shell's own reports gets no more errors to the
  kernel than its rate allows (the shell marks its reports with a key the surface cannot read).
"""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import BrowserContext, Locator, Page, Route, expect

from .canary import Canary
from .conftest import OpenNotebook, decide, settled
from .jupyter import NotebookPage
from .test_mcp_apps import app_frame, card, kernel_json, open_board, setup

SETUP = """\
import json
from lineup_jupyter import Host

host = Host(conversation_id="conv_decisions")
{config}
agent = host.connect_agent("agent_game")
results = {{}}

def ask(capability, arguments, reason, call_id):
    handle = agent.call(capability, arguments, reason=reason, call_id=call_id)
    handle.add_done_callback(lambda r: results.__setitem__(r.call_id, r.status))

host
"""

GAME = (
    "agent.open('game',"
    " html=\"<button style='width: 100%; height: 240px'>Click me, fast!</button>\")"
)
URL = "https://docs.example.org/prize"
ASK = "ask('app.open_url', {'url': %r}, 'Open your prize', %r)"
UNDER = "([x, y, name]) => document.elementFromPoint(x, y)?.classList.contains(name) === true"


def notebook_with(open_notebook: OpenNotebook, config: str = "") -> NotebookPage:
    notebook = open_notebook([SETUP.format(config=config)])
    notebook.execute(GAME)
    expect(notebook.page.locator('.lineup-surface[data-instance-id="game"]')).to_be_visible()
    notebook.round_trip()
    return notebook


def keep_clicking(page: Page, times: int) -> None:
    """The game: a click every 250 ms, the pointer never moving."""
    for _ in range(times):
        page.mouse.down()
        page.mouse.up()
        page.wait_for_timeout(250)


def center(control: Locator) -> tuple[float, float]:
    box = control.bounding_box()
    assert box is not None
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_a_user_who_keeps_clicking_at_one_spot_allows_nothing(
    open_notebook: OpenNotebook, context: BrowserContext
) -> None:
    """Issue 22 section 1, C10: mid-game the agent asks for app.open_url; its card's Allow
    appears under the pointer of a user who clicks at one spot four times a second. 16 clicks
    land on Allow, 12 of them after the card stood still for the delay (the old 750 ms check
    took the first of those): 0 requests, the kernel records no decision. Control: the same
    user moves the pointer onto Allow once it armed, and one click opens the page."""
    hits: list[str] = []

    def serve(route: Route) -> None:
        hits.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<title>prize</title>")

    context.route("https://docs.example.org/**", serve)
    try:
        notebook = notebook_with(open_notebook)
        page = notebook.page
        # Where the card's Allow appears (the game knows the page): from a first card, closed
        # from the keyboard.
        notebook.execute(ASK % (URL, "measure"))
        first = page.locator('.lineup-prompt[data-call-id="measure"]')
        expect(first).to_have_attribute("data-armed", "")
        x, y = center(first.locator("button.lineup-allow"))
        first.locator("button.lineup-dismiss").focus()
        page.keyboard.press("Enter")
        expect(first).to_have_count(0)
        page.mouse.move(x, y)
        keep_clicking(page, 3)

        notebook.execute(ASK % (URL, "prize"))  # the agent asks mid-game
        prompt = page.locator('.lineup-prompt[data-call-id="prize"]')
        expect(prompt).to_be_visible()
        settled(page)
        assert page.evaluate(UNDER, [x, y, "lineup-allow"])  # the clicks land on Allow
        keep_clicking(page, 4)
        # It stood still for the delay: the old check took the next click.
        expect(prompt).to_have_attribute("data-armed", "")
        keep_clicking(page, 12)
        expect(prompt.locator(".lineup-prompt-note")).to_contain_text("already here")
        notebook.round_trip()
        assert hits == []
        decided = json.loads(notebook.execute("print(json.dumps(results))"))
        assert decided == {"measure": "cancelled"}  # the first card, closed from the keyboard
        waiting = notebook.execute("print([c.call_id for c in host.pending_calls])")
        assert waiting.strip() == "['prize']"

        # Control: the pointer leaves across the page and comes onto Allow, then one click.
        page.mouse.move(x - 200, y, steps=4)
        with context.expect_page() as opened:
            page.mouse.move(x, y, steps=4)
            page.mouse.click(x, y)
        opened.value.close()
        expect(prompt).to_have_count(0)
        decided = json.loads(notebook.execute("print(json.dumps(results))"))
        assert decided == {"measure": "cancelled", "prize": "completed"}
        assert hits == [URL]
    finally:
        context.unroute("https://docs.example.org/**", serve)


def test_a_question_that_appears_under_a_clicking_user_answers_nothing(
    open_notebook: OpenNotebook,
) -> None:
    """Issue 22 section 1, H14: a destructive confirm appears; the user's pointer reaches its
    Delete button as it appears (before it stood still) and keeps clicking there: the kernel
    records no answer. Control: the pointer leaves and comes back, one click answers it."""
    notebook = notebook_with(open_notebook)
    page = notebook.page
    notebook.execute(
        'wipe = agent.confirm("Delete every file?", confirm_label="Delete", component_id="wipe")'
    )
    delete = page.locator('.lineup-component[data-component-id="wipe"]').get_by_role(
        "button", name="Delete"
    )
    page.wait_for_function(
        "() => document.querySelector('.lineup-component[data-component-id=\"wipe\"] button')",
        polling="raf",
    )
    x, y = center(delete)
    page.mouse.move(x, y)
    assert delete.get_attribute("data-armed") is None  # the pointer came before it armed
    keep_clicking(page, 16)
    expect(delete).to_have_attribute("data-armed", "")
    notebook.round_trip()
    assert notebook.execute("print(wipe.status)").strip() == "pending"

    # Control: the pointer leaves across the page (not into a frame: the page sees no move
    # there, docs/security.md) and comes back onto Delete, then one click.
    page.mouse.move(x - 200, y, steps=4)
    page.mouse.move(x, y, steps=4)
    page.mouse.click(x, y)
    expect(
        page.locator('.lineup-component[data-component-id="wipe"] .lineup-outcome')
    ).to_have_text("Answered: Delete")
    assert notebook.execute("print(wipe.status, wipe.result())").strip() == "answered True"


def granted(notebook: NotebookPage) -> Any:
    return kernel_json(notebook, "app.spec()['granted']['connectDomains']")


def test_a_double_click_on_a_grant_row_allows_that_row_only(
    open_notebook: OpenNotebook, canary: Canary
) -> None:
    """Issue 22 section 1: a grant card of three rows; a double click on the first row's
    Allow. The kernel redraws the card (the first row gone) and the second row's Allow comes
    under the pointer as the second click lands: only the first domain is granted. Control: a
    click the user aims at the new first row once it stood still grants it."""
    notebook = open_notebook([setup(canary)])
    notebook.execute("server = host.connect_mcp(STDIO)")
    notebook.execute('app = server.open("show_grants", {})')
    page = notebook.page
    rows = card(page).locator(".lineup-mcp-grant")
    expect(rows).to_have_count(3)
    # A wildcard is shown as declared, with the registrable domain it covers (issue 22 §2).
    wildcard = rows.nth(2).locator(".lineup-mcp-domain")
    expect(wildcard).to_have_text("https://*.tiles.example.co.uk (every host under example.co.uk)")
    expect(wildcard.locator("strong")).to_have_text("example.co.uk")
    allow = rows.first.locator("button.lineup-mcp-allow")
    allow.scroll_into_view_if_needed()
    settled(page)
    expect(allow).to_have_attribute("data-armed", "")
    x, y = center(allow)
    page.mouse.move(1, 1)
    page.mouse.move(x, y, steps=4)
    page.mouse.down()
    page.mouse.up()
    expect(rows).to_have_count(2)  # the kernel's redraw: the second row moves up
    assert page.evaluate(UNDER, [x, y, "lineup-mcp-allow"])  # its Allow is under the pointer
    page.mouse.down(click_count=2)  # the double click's second half lands on it
    page.mouse.up(click_count=2)
    page.mouse.down()  # and a third, quick single click
    page.mouse.up()
    notebook.round_trip()
    expect(rows).to_have_count(2)
    assert granted(notebook) == ["https://one.example"]

    decide(rows.first.locator("button.lineup-mcp-allow"))
    expect(rows).to_have_count(1)
    notebook.round_trip()
    assert granted(notebook) == ["https://one.example", "https://two.example"]


# Boxes relative to the host view's own top: the notebook's scroll anchoring would hide, in
# viewport terms, content inserted above what is on screen.
BOXES = """() => {
  const host = document.querySelector('.lineup-host > .lineup-trust').getBoundingClientRect();
  return [...document.querySelectorAll(
    '.lineup-host iframe.lineup-shell, .lineup-host button')].filter((node) =>
      node.getBoundingClientRect().width > 0).map((node) => {
      const box = node.getBoundingClientRect();
      const name = node.className + ':' + (node.textContent || node.title);
      return [name, box.x - host.x, box.y - host.y, box.width, box.height];
    });
}"""


def test_a_card_or_a_question_arriving_moves_nothing(open_notebook: OpenNotebook) -> None:
    """Issue 22 section 1: a surface, a question and a consent card on the page; then a new
    consent card and a new question arrive: every surface frame and button that was there has
    the same box (0 px moved). Control: the same measure sees a 30 px element put above."""
    notebook = notebook_with(open_notebook)
    page = notebook.page
    notebook.execute('q1 = agent.confirm("First?", component_id="q1")')
    notebook.execute(ASK % (URL, "c1"))
    expect(page.locator('.lineup-prompt[data-call-id="c1"]')).to_have_attribute("data-armed", "")
    page.evaluate("() => document.querySelector('.lineup-host').scrollIntoView()")
    settled(page)
    before = page.evaluate(BOXES)

    notebook.execute(ASK % (URL, "c2"))
    expect(page.locator('.lineup-prompt[data-call-id="c2"]')).to_be_visible()
    settled(page)
    after = page.evaluate(BOXES)
    assert len(after) > len(before) >= 6
    assert after[: len(before)] == before  # the new card comes after, the rest stays

    # A question goes after the questions: the surface and every question stay; the consent
    # cards below it move, and wait again (js/decision_input.js re-arms what moved).
    notebook.execute('q2 = agent.confirm("Second?", component_id="q2")')
    expect(page.locator('.lineup-component[data-component-id="q2"]')).to_be_visible()
    settled(page)
    cards = ("lineup-allow", "lineup-deny", "lineup-dismiss", "lineup-prompt-more")
    kept = [box for box in before if not box[0].startswith(cards)]
    now = [box for box in page.evaluate(BOXES) if not box[0].startswith(cards)]
    assert now[: len(kept)] == kept
    after = page.evaluate(BOXES)

    page.evaluate(
        "() => { const d = document.createElement('div'); d.style.height = '30px';"
        " document.querySelector('.lineup-trust').after(d); }"
    )
    settled(page)
    moved = page.evaluate(BOXES)
    assert all(m[2] >= a[2] + 30 for m, a in zip(moved, after, strict=True))


def test_a_card_reaches_the_user_over_a_full_screen_app(
    open_notebook: OpenNotebook, canary: Canary
) -> None:
    """Issue 22 section 1: while an MCP app is full screen (the top layer: nothing else of the
    page is drawn), a consent card arrives: the app returns inline, says why, and the card's
    Allow is what the page shows at its place and takes the user's click. Control: while full
    screen, the same hit test finds the app, not the host's own controls."""
    notebook = open_notebook([setup(canary)])
    page = open_board(notebook, "STDIO")
    notebook.execute('agent = host.connect_agent("agent_side")')
    decide(card(page).locator(".lineup-mcp-grant button.lineup-mcp-deny"))
    shell = page.locator(".lineup-mcp iframe.lineup-shell:not([hidden])")
    settled(page)
    expect(shell).to_have_attribute("data-armed", "")
    page.mouse.move(1, 1)
    app_frame(page).locator("#full").click()
    expect(card(page)).to_have_attribute("data-mode", "fullscreen")
    trust = page.locator(".lineup-host .lineup-trust")
    x, y = center(trust)
    assert not page.evaluate(UNDER, [x, y, "lineup-trust"])  # the control: covered

    notebook.execute(
        "agent.call('app.open_url', {'url': 'https://docs.example.org/'}, reason='r', call_id='fs')"
    )
    expect(card(page)).to_have_attribute("data-mode", "inline")
    expect(card(page).locator('[data-kind="fullscreen"]')).to_contain_text("A request is waiting")
    prompt = page.locator('.lineup-prompt[data-call-id="fs"]')
    deny = prompt.locator("button.lineup-deny")
    deny.scroll_into_view_if_needed()
    settled(page)
    assert page.evaluate(UNDER, [*center(deny), "lineup-deny"])
    decide(deny)
    expect(prompt).to_have_count(0)
    assert notebook.execute("print(host.pending_calls)").strip() == "[]"


FORGER = """
const ns = "lineup.surface.v1";
const end = performance.now() + 4000;
let sent = 0;
const burst = () => {
  for (let i = 0; i < 40; i++) {
    parent.postMessage({ namespace: ns, type: "dropped", count: 1 }, "*");
    sent++;
  }
  if (performance.now() < end) setTimeout(burst, 4);
  else document.title = `sent ${sent}`;
};
burst();
"""

REFUSALS = (
    "print(json.dumps([r.error.get('code') for r in host.history"
    " if r.kind == 'refused' and r.error is not None]))"
)


def forge(open_notebook: OpenNotebook, marks: bool) -> list[str]:
    config = "" if marks else 'host.widget.config = {**host.widget.config, "shell_marks": False}'
    notebook = open_notebook([SETUP.format(config=config)])
    notebook.execute(f"agent.open('forger', html='<p>forger</p>', js={FORGER!r})")
    page = notebook.page
    expect(page.locator('.lineup-surface[data-instance-id="forger"]')).to_be_visible()
    page.wait_for_timeout(6000)  # the 4 s flood and its last reports
    notebook.round_trip()
    codes: list[str] = json.loads(notebook.execute(REFUSALS))
    return codes


def test_a_surface_forging_its_shells_reports_stays_within_its_rate(
    open_notebook: OpenNotebook,
) -> None:
    """Issue 22 section 4, S4: a surface posts `{type: 'dropped'}` as fast as its shell passes
    it for 4 s (about 120 a second reach the page). Each counts as the surface's own message:
    the kernel records at most the view's burst plus its rate for the flood (100 + 50 a second)
    and a rate_limited once a second, never one per forged report (964 in 6 s before)."""
    codes = forge(open_notebook, marks=True)
    limited = codes.count("rate_limited")
    print(f"\n[forged shell reports] kernel refusals {len(codes)}, rate_limited {limited}")
    assert len(codes) - limited <= 100 + 50 * 6
    assert limited <= 12


def test_control_forged_shell_reports_flood_the_kernel_without_the_marks(
    open_notebook: OpenNotebook,
) -> None:
    """Control: with the shell's marks off (``shell_marks: False``) the page takes every forged
    report as its shell's, and the kernel hears a rate_limited for each."""
    codes = forge(open_notebook, marks=False)
    limited = codes.count("rate_limited")
    print(f"\n[forged shell reports, no marks] rate_limited {limited}")
    assert limited > 100 + 50 * 6
