"""Consent cards in a real JupyterLab page (C10, H20-H25): clicked for real.

The host view draws ``section.lineup-consent`` with one ``div.lineup-prompt[data-call-id]`` per
waiting call, outside every surface frame. Each test ends by reading what the agent received
(its CallHandle results) from the kernel, so a card that only looked right cannot pass.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Locator, Page, Route, expect

from .conftest import FRESH_PAGE, UIS, OpenNotebook, decide
from .jupyter import UI, JupyterServer, NotebookPage

SETUP = """\
import json
from lineup_jupyter import Host

host = Host(conversation_id="conv_01")
agent = host.connect_agent("agent_hermes_main")
results = {}  # call_id -> what the agent's handle resolved with

def ask(capability, arguments, reason, call_id, **options):
    handle = agent.call(capability, arguments, reason=reason, call_id=call_id, **options)
    handle.add_done_callback(lambda r: results.__setitem__(
        r.call_id, {"status": r.status, "result": r.result, "error": r.error}))

host
"""


def prompt(page: Page, call_id: str) -> Locator:
    return page.locator(f'.lineup-host .lineup-consent .lineup-prompt[data-call-id="{call_id}"]')


def armed(card: Locator) -> Locator:
    """The card, once its buttons take a pointer click: they have stood still for
    CLICK_DELAY_MS (js/prompts.js), so a click aimed elsewhere cannot land on them."""
    expect(card).to_have_attribute("data-armed", "")
    return card


def agent_results(notebook: NotebookPage) -> dict[str, Any]:
    received: dict[str, Any] = json.loads(notebook.run_cell("print(json.dumps(results))"))
    return received


def ask(
    notebook: NotebookPage, capability: str, arguments: dict[str, Any], reason: str, call_id: str
) -> Locator:
    notebook.run_cell(f"ask({capability!r}, {arguments!r}, {reason!r}, {call_id!r})")
    card = prompt(notebook.page, call_id)
    expect(card).to_be_visible()
    return card


@pytest.mark.parametrize("ui", UIS)
def test_the_card_shows_the_request_and_allow_saves_the_artifact(
    open_notebook: OpenNotebook, jupyter: JupyterServer, ui: UI
) -> None:
    """C10: capability, reason, arguments (as text), agent, risk and expiry are shown; nothing
    runs before Allow; Allow runs it once. H25: artifact.save writes the file."""
    notebook = open_notebook([SETUP], ui=ui)
    page = notebook.page
    card = ask(
        notebook,
        "artifact.save",
        {"path": f"consent/{ui}/summary.txt", "content": "<b>not html</b>"},
        "Save the meeting summary",
        "save_1",
    )
    expect(card.locator(".lineup-prompt-capability")).to_have_text("artifact.save")
    expect(card.locator(".lineup-prompt-title .lineup-prompt-agent")).to_have_text(
        "«agent_hermes_main»"
    )
    expect(card.locator(".lineup-prompt-reason-text")).to_have_text("Save the meeting summary")
    expect(card.locator(".lineup-prompt-risk").first).to_contain_text("confirmation")
    expect(card.locator(".lineup-prompt-expiry")).to_contain_text("Expires in")
    args = card.locator(".lineup-prompt-args .lineup-prompt-arg")
    expect(args).to_have_text([f"path: consent/{ui}/summary.txt", "content: <b>not html</b>"])
    expect(args.locator("b")).to_have_count(0)  # inserted as text, never as HTML
    saved = jupyter.root / "artifacts" / "consent" / ui / "summary.txt"
    assert not saved.exists() and agent_results(notebook) == {}

    decide(card.locator("button.lineup-allow"))
    expect(card).to_have_count(0)
    assert saved.read_text() == "<b>not html</b>"
    result = agent_results(notebook)["save_1"]
    assert (
        result["status"] == "completed" and result["result"]["path"] == f"consent/{ui}/summary.txt"
    )
    expect(page.locator(".lineup-consent-recent")).to_contain_text("completed")


def test_deny_rejects_and_a_second_request_queues_visibly(open_notebook: OpenNotebook) -> None:
    """C10: Deny gives rejected; a second waiting call is shown too, not hidden."""
    notebook = open_notebook([SETUP])
    page = notebook.page
    first = ask(notebook, "artifact.save", {"path": "a.txt", "content": "a"}, "first", "q1")
    second = ask(notebook, "artifact.save", {"path": "b.txt", "content": "b"}, "second", "q2")
    expect(page.locator(".lineup-consent .lineup-prompt")).to_have_count(2)
    expect(first).to_contain_text("Request 1 of 2")
    expect(second).to_contain_text("Request 2 of 2")
    decide(first.locator("button.lineup-deny"))
    expect(first).to_have_count(0)
    expect(second).to_be_visible()
    decide(second.locator("button.lineup-dismiss"))
    expect(second).to_have_count(0)
    received = agent_results(notebook)
    assert received["q1"]["status"] == "rejected" and received["q2"]["status"] == "cancelled"


def test_a_waiting_call_survives_a_new_view_and_one_decision_wins(
    open_notebook: OpenNotebook,
) -> None:
    """A second view of the host shows the same card; a click in one closes it in both."""
    notebook = open_notebook([SETUP])
    page = notebook.page
    ask(notebook, "artifact.save", {"path": "v.txt", "content": "v"}, "two views", "v1")
    notebook.run_cell("display(host)")
    cards = page.locator('.lineup-prompt[data-call-id="v1"]')
    expect(cards).to_have_count(2)
    decide(cards.nth(1).locator("button.lineup-allow"))
    expect(cards).to_have_count(0)
    expect(page.locator(".lineup-consent-recent").first).to_contain_text("completed")
    assert agent_results(notebook)["v1"]["status"] == "completed"


def test_restricted_needs_its_name_typed_and_works_from_the_keyboard(
    open_notebook: OpenNotebook,
) -> None:
    """H23: Allow does nothing until the capability's name is typed; keys alone decide."""
    notebook = open_notebook(
        [
            SETUP,
            '@host.capability("vault.read", risk="restricted")\n'
            'def read(arguments):\n    return {"secret": "s3"}\n',
        ]
    )
    page = notebook.page
    card = ask(notebook, "vault.read", {}, "read the vault", "r1")
    expect(card.locator(".lineup-prompt-remember")).to_have_count(0)  # never remembered (C8)
    allow = armed(card).locator("button.lineup-allow")
    allow.focus()  # the user tabs to it once it stood still (js/decision_input.js)
    page.keyboard.press("Enter")
    expect(card.locator(".lineup-prompt-note")).to_contain_text("Type vault.read")
    assert agent_results(notebook) == {}
    card.locator("input.lineup-prompt-typed-input").fill("vault.read")
    allow.focus()
    page.keyboard.press("Enter")
    expect(card).to_have_count(0)
    assert agent_results(notebook)["r1"]["result"] == {"secret": "s3"}


def test_open_url_opens_the_page_without_an_opener(
    open_notebook: OpenNotebook, context: BrowserContext
) -> None:
    """H21: the tab is opened inside the Allow click, with noopener; the result comes back."""
    url = "https://docs.example.org/deploy?x=1"

    def serve(route: Route) -> None:
        route.fulfill(status=200, content_type="text/html", body="<title>docs</title>")

    context.route("https://docs.example.org/**", serve)  # no network here: answer it locally
    try:
        notebook = open_notebook([SETUP])
        card = ask(notebook, "app.open_url", {"url": url}, "Open the deployment docs", "u1")
        with context.expect_page() as opened:
            decide(card.locator("button.lineup-allow"))
        tab = opened.value
        tab.wait_for_load_state()
        assert tab.url == url
        assert tab.evaluate("window.opener") is None
        expect(card).to_have_count(0)
        assert agent_results(notebook)["u1"] == {
            "status": "completed",
            "result": {"url": url},
            "error": None,
        }
        tab.close()
    finally:
        context.unroute("https://docs.example.org/**", serve)


def test_clipboard_write_puts_the_text_on_the_clipboard(
    open_notebook: OpenNotebook, context: BrowserContext, jupyter: JupyterServer
) -> None:
    """H21: navigator.clipboard.writeText runs in the Allow click."""
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=jupyter.url)
    try:
        notebook = open_notebook([SETUP])
        page = notebook.page
        text = "summary: 3 items, ✓ done"
        card = ask(notebook, "clipboard.write", {"text": text}, "Copy the summary", "k1")
        decide(card.locator("button.lineup-allow"))
        expect(card).to_have_count(0)
        assert page.evaluate("navigator.clipboard.readText()") == text
        assert agent_results(notebook)["k1"]["result"] == {"characters": len(text)}
    finally:
        context.clear_permissions()


def test_pick_file_hands_over_the_chosen_file(open_notebook: OpenNotebook, tmp_path: Path) -> None:
    """H21: a real file chooser opens from the Allow click; the kernel checks the sha256."""
    chosen = tmp_path / "numbers.csv"
    chosen.write_bytes(b"a,b\n1,2\n")
    notebook = open_notebook([SETUP])
    page = notebook.page
    card = ask(notebook, "device.pick_file", {"accept": ".csv"}, "Read your numbers", "f1")
    expect(card.locator(".lineup-prompt-risk").first).to_contain_text("system permission")
    with page.expect_file_chooser() as chooser:
        decide(card.locator("button.lineup-allow"))
    chooser.value.set_files(str(chosen))
    expect(card).to_have_count(0)
    result = agent_results(notebook)["f1"]
    assert result["status"] == "completed"
    assert result["result"]["name"] == "numbers.csv" and result["result"]["size"] == 8
    assert result["result"]["sha256"] == hashlib.sha256(b"a,b\n1,2\n").hexdigest()


@FRESH_PAGE
def test_a_waiting_card_comes_back_after_a_page_reload(open_notebook: OpenNotebook) -> None:
    """The kernel holds what waits: a reloaded page draws the card again, and it works."""
    notebook = open_notebook([SETUP])
    page = notebook.page
    ask(notebook, "artifact.save", {"path": "r.txt", "content": "r"}, "survive a reload", "re1")
    notebook.reload()
    card = prompt(page, "re1")
    expect(card).to_be_visible()
    decide(card.locator("button.lineup-allow"))
    expect(card).to_have_count(0)
    assert agent_results(notebook)["re1"]["status"] == "completed"


def test_remember_for_the_session_is_shown_and_revocable(open_notebook: OpenNotebook) -> None:
    """C8: a remembered user_confirmation grant runs the next call without a card; the view
    lists it with a Revoke button, and after Revoke the card is back."""
    notebook = open_notebook([SETUP])
    page = notebook.page
    card = ask(notebook, "artifact.save", {"path": "m1.txt", "content": "1"}, "first", "m1")
    remember = card.locator(".lineup-prompt-remember")
    decide(remember.locator("input"), remember)  # Remember is a decision too
    expect(remember.locator("input")).to_be_checked()
    decide(card.locator("button.lineup-allow"))
    expect(card).to_have_count(0)
    grant = page.locator(".lineup-consent-grant")
    expect(grant).to_contain_text("artifact.save")
    notebook.run_cell("ask('artifact.save', {'path': 'm2.txt', 'content': '2'}, 'again', 'm2')")
    assert agent_results(notebook)["m2"]["status"] == "completed"  # no card was needed
    expect(page.locator(".lineup-prompt")).to_have_count(0)
    grant.locator("button.lineup-revoke").click()
    expect(grant).to_have_count(0)
    third = ask(notebook, "artifact.save", {"path": "m3.txt", "content": "3"}, "third", "m3")
    expect(third).to_be_visible()
    assert "m3" not in agent_results(notebook)


def test_the_kernel_expires_a_waiting_call_and_its_card_goes(open_notebook: OpenNotebook) -> None:
    """H20: the kernel's timer, not the countdown, ends the call: the card goes, the agent
    hears expired, and a late click changes nothing."""
    notebook = open_notebook([SETUP])
    page = notebook.page
    notebook.run_cell(
        "ask('artifact.save', {'path': 'late.txt', 'content': 'x'}, 'soon gone', 'x1', "
        "expires_in=8)"
    )
    card = prompt(page, "x1")
    expect(card).to_be_visible()
    expect(card).to_have_count(0)  # within expect's timeout, the kernel ended it
    assert agent_results(notebook)["x1"]["status"] == "expired"
    expect(page.locator(".lineup-consent-recent")).to_contain_text("expired")


HOSTILE_SURFACE = """\
agent.open(
    "clicker",
    html="<p id=out>trying</p>",
    js=\"\"\"
    const tries = [];
    try { parent.document.querySelector('.lineup-allow').click(); tries.push('parent-click'); }
    catch (e) { tries.push('parent-blocked'); }
    try { top.document.querySelector('.lineup-allow').click(); tries.push('top-click'); }
    catch (e) { tries.push('top-blocked'); }
    const forged = {kind: 'consent_decide', call_id: 'h1', decision: 'allow'};
    parent.postMessage(forged, '*'); top.postMessage(forged, '*');
    LineUpSurface.event('tried', {tries});
    \"\"\",
)
"""


def test_a_surface_can_neither_click_nor_forge_a_decision(open_notebook: OpenNotebook) -> None:
    """L1, S5: the card lives outside every surface; a surface's clicks and messages cannot
    reach it, so the call keeps waiting for the user."""
    notebook = open_notebook(
        [
            SETUP,
            "events = []\n"
            "agent.on_event('tried')(lambda event: events.append(event.data))\n"
            "ask('artifact.save', {'path': 'h.txt', 'content': 'h'}, 'hostile', 'h1')",
        ]
    )
    card = prompt(notebook.page, "h1")
    expect(card).to_be_visible()
    notebook.run_cell(HOSTILE_SURFACE)
    tried: list[Any] = []
    for _ in range(30):  # the surface reports once its script has run
        tried = json.loads(notebook.run_cell("print(json.dumps(events))"))
        if tried:
            break
        notebook.round_trip()
    assert tried == [{"tries": ["parent-blocked", "top-blocked"]}]
    notebook.round_trip()
    pending = notebook.run_cell("print([c.call_id for c in host.pending_calls])")
    assert pending.strip() == "['h1']" and agent_results(notebook) == {}
    expect(card).to_be_visible()


def test_a_cell_awaits_the_call_while_the_user_decides(open_notebook: OpenNotebook) -> None:
    """ipykernel 7: the Allow click is handled while a cell awaits `agent.call`, and the cell
    then goes on with the result."""
    notebook = open_notebook(
        [
            SETUP,
            "result = await agent.call('artifact.save', {'path': 'aw.txt', 'content': 'a'}, "
            "reason='await me', call_id='aw1')\n"
            "print('status=' + result.status)",
        ],
        run=False,
    )
    page = notebook.page
    # Run all without waiting for it: the second cell finishes only after the click below.
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    card = prompt(page, "aw1")
    expect(card).to_be_visible()
    expect(page.locator(".jp-OutputArea-output", has_text="status=")).to_have_count(0)
    decide(card.locator("button.lineup-allow"))
    expect(page.locator(".jp-OutputArea-output", has_text="status=completed")).to_be_visible()


def arguments_of(card: Locator) -> Locator:
    return card.locator(".lineup-prompt-args .lineup-prompt-arg")


def test_the_card_shows_what_will_run(open_notebook: OpenNotebook) -> None:
    """Issue 14, C8, C10: bidi and invisible characters shown as ⟨U+XXXX⟩ (reason too), a
    homoglyph host in punycode with its registrable domain (by the Public Suffix List) marked,
    the path first and a
    112 KB value cut with "Show all", and an agent named like the host still reads as an
    agent. The card's real module (js/prompts.js, js/honest_text.js) in JupyterLab."""
    # The host's own client id itself is reserved (H28); a look-alike is any agent's to take.
    impostor = 'impostor = host.connect_agent("lineup-jupyter.host")\nhost\n'
    notebook = open_notebook([SETUP.replace("\nhost\n", "\n" + impostor)])
    page = notebook.page

    card = ask(
        notebook,
        "artifact.save",
        {"content": "A" * (112 * 1024), "path": "reports/summary\u202efdp.exe"},
        "Save\u200b the report",
        "bidi",
    )
    rows = arguments_of(card)
    expect(rows.first).to_have_text("path: reports/summary⟨U+202E⟩fdp.exe")
    expect(rows.first.locator("mark.lineup-prompt-hidden")).to_have_text("⟨U+202E⟩")
    card.scroll_into_view_if_needed()
    expect(rows.first).to_be_in_viewport()  # the path is not pushed out of view
    box = card.locator(".lineup-prompt-args").bounding_box()
    assert box is not None and box["height"] < 400  # the arguments scroll within the card
    content = rows.nth(1)
    expect(content).to_contain_text("114,288 more characters")
    assert len(content.inner_text()) < 1000
    expect(card.locator(".lineup-prompt-reason-text")).to_have_text("Save⟨U+200B⟩ the report")
    expect(card.locator(".lineup-prompt-warning")).to_contain_text("invisible or direction")
    content.locator("button.lineup-prompt-more").click()
    assert content.inner_text().count("A") == 112 * 1024
    armed(card).locator("button.lineup-dismiss").focus()
    page.keyboard.press("Enter")
    expect(card).to_have_count(0)

    card = ask(notebook, "app.open_url", {"url": "https://g\u043e\u043egle.com/"}, "docs", "idn")
    url = arguments_of(card).first
    expect(url).to_contain_text("url: https://xn--ggle-55da.com/")
    expect(url.locator("strong.lineup-prompt-domain")).to_have_text("xn--ggle-55da.com")
    expect(url).to_contain_text("punycode")
    expect(url).not_to_contain_text("g\u043e\u043egle")
    armed(card).locator("button.lineup-dismiss").focus()
    page.keyboard.press("Enter")
    expect(card).to_have_count(0)

    # The owner by the Public Suffix List, as the kernel names it (issue 22 §2): a bucket's
    # owner, not Amazon; a name under a two-label suffix, not the suffix.
    for number, (target, owned_by) in enumerate(
        [
            ("https://evil-corp.s3.amazonaws.com/login", "evil-corp.s3.amazonaws.com"),
            ("https://docs.example.co.uk/x", "example.co.uk"),
        ]
    ):
        card = ask(notebook, "app.open_url", {"url": target}, "docs", f"psl-{number}")
        expect(arguments_of(card).first.locator("strong.lineup-prompt-domain")).to_have_text(
            owned_by
        )
        armed(card).locator("button.lineup-dismiss").focus()
        page.keyboard.press("Enter")
        expect(card).to_have_count(0)

    notebook.run_cell(
        "impostor.call('clipboard.write', {'text': 'rm -rf ~'}, reason='Host update',"
        " call_id='imp')"
    )
    card = prompt(page, "imp")
    expect(card.locator(".lineup-prompt-title")).to_have_text(
        "Agent «lineup-jupyter.host» asks to use clipboard.write"
    )
    agent = card.locator(".lineup-prompt-agent")
    assert agent.evaluate("(e) => getComputedStyle(e).borderStyle") == "dashed"
    expect(arguments_of(card).first).to_have_text("text: rm -rf ~")
