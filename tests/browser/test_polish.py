"""The host's controls look like JupyterLab's, and an answered question looks done (issue 24,
"Polish"): a consent card's Close and a remembered grant's Revoke are styled as the card's
other buttons (JupyterLab's jp-mod-styled), and an answered question's buttons are disabled,
the one that answered marked."""

from __future__ import annotations

from playwright.sync_api import Locator, expect

from .conftest import OpenNotebook, decide
from .test_consent import SETUP, prompt

# What jp-mod-styled sets on every button, whatever its colour.
SHAPE = ("font-family", "font-size", "height", "border-radius", "padding-left", "line-height")


def shape(button: Locator) -> dict[str, str]:
    styles: dict[str, str] = button.evaluate(
        "(node, names) => Object.fromEntries(names.map((n) => [n, getComputedStyle(node)[n]]))",
        list(SHAPE),
    )
    return styles


def test_close_and_revoke_are_styled_like_the_cards_other_buttons(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP])
    page = notebook.page
    notebook.run_cell("ask('artifact.save', {'path': 'p.txt', 'content': '1'}, 'first', 'p1')")
    card = prompt(page, "p1")
    deny = shape(card.locator("button.lineup-deny"))
    close = card.locator("button.lineup-dismiss")
    expect(close).to_have_class("lineup-dismiss jp-mod-styled")
    assert shape(close) == deny

    remember = card.locator(".lineup-prompt-remember")
    decide(remember.locator("input"), remember)
    decide(card.locator("button.lineup-allow"))
    revoke = page.locator(".lineup-consent-grant button.lineup-revoke")
    expect(revoke).to_have_class("lineup-revoke jp-mod-styled")
    assert shape(revoke) == deny


def test_an_answered_question_is_inert_and_shows_the_answer(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook([SETUP])
    page = notebook.page
    notebook.run_cell('asked = agent.confirm("Go on?", component_id="go")')
    question = page.locator('.lineup-component[data-component-id="go"]')
    confirm = question.get_by_role("button", name="Confirm")
    cancel = question.get_by_role("button", name="Cancel")
    expect(confirm).to_be_enabled()
    decide(cancel)  # "No" answers False

    expect(question.locator(".lineup-outcome")).to_have_text("Answered: Cancel")
    expect(confirm).to_be_disabled()
    expect(cancel).to_be_disabled()
    expect(cancel).to_have_attribute("aria-pressed", "true")
    expect(confirm).not_to_have_attribute("aria-pressed", "true")
    expect(confirm).to_have_css("opacity", "0.45")  # inert
    expect(cancel).to_have_css("opacity", "1")  # the answer stands out
