"""Focus belongs to the notebook page (issue 13, S2, H10): attacks in real JupyterLab.

Each attack surface logs every key it gets (its own keydown listener, and a nested frame's)
and sends each at once and again, all together, every 300 ms, to its agent. The test puts the
caret in a real code cell, lets the kernel tell the surface to strike (a state patch: no user
activation), gives it time, then types into the page with ``page.keyboard``. Asserted: the
cell got every key, the agent got none, the surface was stopped with a reason the agent and
the view show. The control turns the page's guard off (``focus_guard: False`` in the view's
config) and shows the detector then sees the keys. The positive tests click and Tab into a
surface and see the keys reach it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import FRESH_PAGE, OpenNotebook
from .jupyter import UI, NotebookPage

TYPED = "secret42token"

SETUP = """\
import json
from lineup_jupyter import Host

host = Host(conversation_id="conv_focus")
agent = host.connect_agent("agent_thief")
events = []  # every ui.event the agent received
errors = []  # every lineup.v1.error the agent received

@agent.on_event()
def record(event):
    events.append(event.envelope["payload"])

agent.on("error", lambda envelope: errors.append(envelope["payload"]))
{config}
host
"""

# Logs keys from its own document and from any frame inside it; reports each key at once and
# the whole buffer every 300 ms (a surface may hold what it got and send it later).
LOGGER = """
const keys = [];
const got = (k) => { keys.push(k); LineUpSurface.event('key', {k}); };
addEventListener('keydown', (e) => got(e.key), true);
addEventListener('message', (e) => { if (e.data && e.data.nestedKey) got(e.data.nestedKey); });
setInterval(() => { if (keys.length) LineUpSurface.event('keys', {all: keys.join('')}); }, 300);
LineUpSurface.onState((s) => { if (s.go) strike(); });
"""

NESTED = (
    "<input id=n><script>"
    "addEventListener('keydown', (e) => parent.postMessage({nestedKey: e.key}, '*'), true);"
    "addEventListener('message', () => document.getElementById('n').focus());"
    "</script>"
)

# id -> (html, the strike function's body). None of them calls focus() on an HTMLElement
# while the bridge's own focus() wrapper is intact, except where the attack defeats it.
ATTACKS: dict[str, tuple[str, str]] = {
    "show-modal": (
        "<p>dialog</p>",
        "const d = document.createElement('dialog'); d.innerHTML = '<input>';"
        " document.body.append(d); d.showModal();",
    ),
    "popover-autofocus": (
        "<p>popover</p>",
        "const p = document.createElement('div'); p.popover = 'manual';"
        " p.innerHTML = '<input autofocus>'; document.body.append(p); p.showPopover();",
    ),
    "label-click": (
        "<label for=t>name</label><input id=t>",
        "document.querySelector('label').click();",
    ),
    "input-select": ("<input id=t value=x>", "document.getElementById('t').select();"),
    "fragment-navigation": (
        "<p>fragment</p><input id=target>",
        "location.hash = '#target';",
    ),
    "report-validity": (
        "<input id=t required>",
        "document.getElementById('t').reportValidity();",
    ),
    "mathml-focus": (
        "<math><mi id=m tabindex=0>x</mi></math>",
        "document.getElementById('m').focus();",
    ),
    "replaced-has-focus": (
        "<input id=t>",
        "document.hasFocus = () => true; document.getElementById('t').focus();",
    ),
    "nested-frame": (
        "<p>nested</p>",
        # A frame's own script would take focus. With the surface CSP's one script hash (S3),
        # no script runs in a nested frame at all, so nothing is stolen to stop: 0 keys.
        "Element.prototype.remove = function () {};"
        " const f = document.createElement('iframe'); f.srcdoc = " + json.dumps(NESTED) + ";"
        " f.onload = () => f.contentWindow.postMessage('go', '*'); document.body.append(f);",
    ),
    "retry-on-timer": (
        "<input id=t>",
        "document.hasFocus = () => true;"
        " setInterval(() => document.getElementById('t').focus(), 10);",
    ),
}


def open_attack(
    open_notebook: OpenNotebook, attack: str, *, guard: bool = True, ui: UI = "lab"
) -> tuple[NotebookPage, Locator]:
    """A notebook whose second cell is empty, with the attack surface open and idle."""
    config = "" if guard else 'host.widget.config = {**host.widget.config, "focus_guard": False}'
    notebook = open_notebook([SETUP.format(config=config), ""], ui=ui)
    html, strike = ATTACKS[attack]
    js = f"function strike() {{ {strike} }}\n{LOGGER}"
    notebook.execute(f"agent.open('thief', html={html!r}, js={js!r})")
    page = notebook.page
    shell = '.lineup-surface[data-instance-id="thief"] iframe.lineup-shell'
    expect(page.locator(shell)).to_be_visible()
    cell = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content")
    return notebook, cell


def strike_then_type(notebook: NotebookPage, cell: Locator) -> None:
    page = notebook.page
    cell.click()
    expect(cell).to_be_focused()
    notebook.execute("agent.patch('thief', {'go': 1})")
    page.wait_for_timeout(1500)  # the surface strikes; the page decides
    page.keyboard.type(TYPED, delay=40)
    page.wait_for_timeout(1000)  # a surface that held keys sends them within 300 ms
    notebook.round_trip()


def received(notebook: NotebookPage) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    got = json.loads(notebook.execute("print(json.dumps([events, errors]))"))
    return got[0], got[1]


def keys_of(events: list[dict[str, Any]]) -> str:
    single = "".join(e["data"]["k"] for e in events if e["event"] == "key")
    buffered = max((e["data"]["all"] for e in events if e["event"] == "keys"), default="", key=len)
    return max(single, buffered, key=len)


def cell_text(cell: Locator) -> str:
    return cell.inner_text().strip()


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_surface_cannot_take_the_keys_typed_into_a_cell(
    open_notebook: OpenNotebook, attack: str
) -> None:
    """S2, H10, issue 13: focus moved into a surface without a click or Tab is given back to
    the cell by the page, the surface is stopped, and its agent gets 0 keys."""
    notebook, cell = open_attack(open_notebook, attack)
    strike_then_type(notebook, cell)
    assert_contained(notebook, cell, attack)


@FRESH_PAGE
def test_notebook_7_gives_the_keys_back_too(open_notebook: OpenNotebook) -> None:
    """Issue 13: the same guard in Notebook 7, against the attack that retries."""
    notebook, cell = open_attack(open_notebook, "retry-on-timer", ui="notebook")
    strike_then_type(notebook, cell)
    assert_contained(notebook, cell, "retry-on-timer")


# Attacks whose code the surface CSP keeps from running (docs/security.md): the keys stay in
# the cell, and there is no theft for the page to catch.
NEVER_RUNS = {"nested-frame"}


def assert_contained(notebook: NotebookPage, cell: Locator, attack: str) -> None:
    events, errors = received(notebook)
    assert keys_of(events) == "", f"{attack}: the agent got keys {keys_of(events)!r}"
    assert cell_text(cell) == TYPED
    if attack in NEVER_RUNS:  # stopped before it could move focus: nothing to report
        return
    stolen = [e for e in errors if e["code"] == "focus_stolen"]
    assert stolen and stolen[0]["rule"] == "S2", f"{attack}: no focus_stolen error: {errors}"
    page = notebook.page
    expect(page.locator(".lineup-host [role=alert]", has_text="took the keyboard")).to_be_visible()
    expect(page.locator('.lineup-surface[data-instance-id="thief"]')).to_have_count(0)


def test_control_without_the_guard_the_detector_sees_the_keys(open_notebook: OpenNotebook) -> None:
    """The detector works: with the page's guard off, the same attack gets the keys typed
    into the cell (the bridge's own focus() wrapper does not stop it)."""
    notebook, cell = open_attack(open_notebook, "replaced-has-focus", guard=False)
    strike_then_type(notebook, cell)
    events, errors = received(notebook)
    assert keys_of(events) == TYPED
    assert cell_text(cell) == ""
    assert not [e for e in errors if e["code"] == "focus_stolen"]


CLICKABLE = """\
agent.open('form', html="<input id=name><p>form</p>", js=
    "addEventListener('keydown', (e) => LineUpSurface.event('key', {k: e.key}), true);"
    "LineUpSurface.event('up', {});")
"""


def wait_until_up(notebook: NotebookPage) -> None:
    """The surface's script ran (its input is there, its bridge and guard in place): a Tab
    pressed before it loaded would land on its empty frame, not in its input."""
    for _ in range(100):
        if any(e["event"] == "up" for e in received(notebook)[0]):
            return
        notebook.page.wait_for_timeout(100)
    raise AssertionError("the surface never said it was up")


def surface_input(page: Page) -> Locator:
    shell = '.lineup-surface[data-instance-id="form"] iframe.lineup-shell'
    return page.frame_locator(shell).frame_locator("iframe").locator("#name")


def test_a_click_into_the_surface_gives_it_the_keys(open_notebook: OpenNotebook) -> None:
    """H10: the user's own click into a surface is honoured; the keys typed then reach it."""
    notebook = open_notebook([SETUP.format(config=""), ""])
    notebook.execute(CLICKABLE)
    page = notebook.page
    box = surface_input(page)
    box.hover()
    page.wait_for_timeout(100)  # a person's pointer rests before it presses
    box.click()
    page.keyboard.type("hello", delay=40)
    expect(box).to_have_value("hello")
    page.wait_for_timeout(300)
    notebook.round_trip()
    events, errors = received(notebook)
    assert "".join(e["data"]["k"] for e in events if e["event"] == "key") == "hello"
    assert not [e for e in errors if e["code"] == "focus_stolen"]


def test_tab_into_the_surface_gives_it_the_keys(open_notebook: OpenNotebook) -> None:
    """H10: Tab from the page into a surface is the user's move too."""
    notebook = open_notebook([SETUP.format(config=""), ""])
    notebook.execute(CLICKABLE)
    wait_until_up(notebook)
    page = notebook.page
    close = page.locator('.lineup-surface[data-instance-id="form"] button.lineup-close')
    close.focus()
    page.keyboard.press("Tab")
    box = surface_input(page)
    expect(box).to_be_focused()
    page.keyboard.type("tabbed", delay=40)
    expect(box).to_have_value("tabbed")
    page.wait_for_timeout(300)
    notebook.round_trip()
    events, errors = received(notebook)
    assert "".join(e["data"]["k"] for e in events if e["event"] == "key") == "tabbed"
    assert not [e for e in errors if e["code"] == "focus_stolen"]
