"""Agent surfaces drawn by the Host widget in a real JupyterLab / Notebook 7 page.

The page shows ``div.lineup-host`` with one ``div.lineup-surface[data-instance-id]`` per open
surface: a header with ``button.lineup-close`` and the host-owned ``iframe.lineup-shell``, which
holds exactly one ``iframe``, the surface frame. Rule numbers: docs/rules.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import FrameLocator, Locator, Page, expect

from .conftest import FRESH_PAGE, UIS, OpenNotebook
from .jupyter import UI, NotebookPage

WEATHER = "weather.dashboard.01"

SETUP = """\
import json
from lineup_jupyter import Host

host = Host(conversation_id="conv_01")
agent = host.connect_agent("agent_hermes_main")
events = []  # the payload of every ui.event the agent received, in order

@agent.on_event()
def record(event):
    events.append(event.envelope["payload"])

@agent.on_event("refresh")
def refresh(event):
    agent.patch(event.instance_id, {"city": "Shanghai", "temperature": 28})

host
"""

# The seed's weather example (lineup-ui-surface-protocol.md).
OPEN_WEATHER = """\
agent.open(
    "weather.dashboard.01",
    app_id="com.lineup.weather.dashboard",
    version="1.0.0",
    html="<main><button id='refresh'>Refresh</button><p id='city'></p></main>",
    js="LineUpSurface.onState(s => document.querySelector('#city').textContent = "
    "s.city + ' ' + s.temperature); "
    "document.querySelector('#refresh').onclick=()=>LineUpSurface.event('refresh',{unit:'c'})",
    state={"city": "Beijing", "temperature": 22},
)
"""

# js/frames.js surfaceCsp as it must reach the DOM: S3's minimum first (script-src stricter: the
# hash of the one script, docs/security.md), then more 'none's.
SURFACE_CSP = re.compile(
    r"default-src 'none'; connect-src 'none'; img-src data: blob:; style-src 'unsafe-inline'; "
    r"script-src 'sha256-[A-Za-z0-9+/]{43}='; font-src data:; media-src data: blob:; "
    r"frame-src 'none'; child-src 'none'; worker-src 'none'; object-src 'none'; "
    r"form-action 'none'; manifest-src 'none'"
)


def card(page: Page, instance_id: str) -> Locator:
    return page.locator(f'.lineup-host .lineup-surface[data-instance-id="{instance_id}"]')


def shell_selector(instance_id: str) -> str:
    return f'.lineup-host .lineup-surface[data-instance-id="{instance_id}"] iframe.lineup-shell'


def surface(page: Page, instance_id: str, view: int = 0) -> FrameLocator:
    """The surface frame inside the shell frame of ``instance_id`` in the ``view``-th view."""
    return page.frame_locator(shell_selector(instance_id)).nth(view).frame_locator("iframe")


def agent_events(notebook: NotebookPage) -> list[dict[str, Any]]:
    received: list[dict[str, Any]] = json.loads(notebook.run_cell("print(json.dumps(events))"))
    return received


def open_weather(open_notebook: OpenNotebook, ui: UI = "lab") -> NotebookPage:
    notebook = open_notebook([SETUP, OPEN_WEATHER], ui=ui)
    expect(surface(notebook.page, WEATHER).locator("#city")).to_have_text("Beijing 22")
    # The view may draw the surface from the synced trait before the kernel has answered its
    # "sync" (until then a click is dropped): one round trip later it has.
    notebook.round_trip()
    return notebook


@pytest.mark.parametrize("ui", UIS)
def test_weather_surface_click_and_patch(open_notebook: OpenNotebook, ui: UI) -> None:
    """U4: the surface gets its state once ready and on every patch. U6-U8: a click calls
    LineUpSurface.event, and the agent receives exactly the seed's ui.event payload."""
    notebook = open_weather(open_notebook, ui)
    page = notebook.page
    expect(page.locator(".lineup-host")).to_have_count(1)
    expect(page.locator(".lineup-host .lineup-surface")).to_have_count(1)
    city = surface(page, WEATHER).locator("#city")

    surface(page, WEATHER).locator("#refresh").click()
    expect(city).to_have_text("Shanghai 28")  # the agent's handler patched it
    assert agent_events(notebook) == [
        {"instance_id": WEATHER, "event": "refresh", "data": {"unit": "c"}}
    ]

    notebook.run_cell(f'agent.patch("{WEATHER}", {{"city": "Hangzhou", "temperature": 19}})')
    expect(city).to_have_text("Hangzhou 19")


def test_open_with_the_same_id_replaces_the_surface(open_notebook: OpenNotebook) -> None:
    """U1: a ui.open with an existing instance_id replaces it. U5: a new bundle is a new
    surface (new content, not a patched one)."""
    notebook = open_weather(open_notebook)
    page = notebook.page
    notebook.run_cell(
        f'agent.open("{WEATHER}", app_id="com.lineup.weather.dashboard", version="1.1.0", '
        "html=\"<h1 id='title'>v2</h1><p id='city'></p>\", "
        "js=\"LineUpSurface.onState(s => document.querySelector('#city').textContent = s.city)\", "
        'state={"city": "Paris"})'
    )
    frame = surface(page, WEATHER)
    expect(frame.locator("#title")).to_have_text("v2")
    expect(frame.locator("#city")).to_have_text("Paris")
    expect(frame.locator("#refresh")).to_have_count(0)
    expect(page.locator(".lineup-host .lineup-surface")).to_have_count(1)
    expect(card(page, WEATHER)).to_have_count(1)


def test_agent_close_removes_the_surface(open_notebook: OpenNotebook) -> None:
    """U10: ui.close from the agent removes the surface; it is not echoed back as a user
    close."""
    notebook = open_weather(open_notebook)
    expect(card(notebook.page, WEATHER)).to_have_count(1)
    notebook.run_cell(f'agent.close("{WEATHER}", reason="done")')
    expect(card(notebook.page, WEATHER)).to_have_count(0)
    expect(notebook.page.locator(".lineup-host")).to_have_count(1)
    assert agent_events(notebook) == []


def test_a_quick_run_of_events_arrives_whole_and_in_order(open_notebook: OpenNotebook) -> None:
    """U8: 80 events in well under a second (within the rate limit's burst) all reach the
    agent, in order, although the view batches them once they come thick."""
    notebook = open_notebook(
        [
            SETUP,
            'agent.open("quick", html="<p>quick</p>", js="let n = 0; const t = setInterval(() => '
            "{ LineUpSurface.event('tick', {n: ++n}); if (n === 80) clearInterval(t); }, 5)\")",
        ]
    )
    expect(notebook.page.locator('.lineup-surface[data-instance-id="quick"]')).to_have_count(1)
    received: list[int] = []
    for _ in range(50):
        notebook.round_trip()
        received = [e["data"]["n"] for e in agent_events(notebook) if e["event"] == "tick"]
        if len(received) == 80:
            break
        notebook.page.wait_for_timeout(200)
    assert received == list(range(1, 81))


def test_close_button_closes_and_tells_the_agent(open_notebook: OpenNotebook) -> None:
    """U10: when the user closes a surface, the agent receives ui.event 'close'."""
    notebook = open_weather(open_notebook)
    card(notebook.page, WEATHER).locator("button.lineup-close").click()
    expect(card(notebook.page, WEATHER)).to_have_count(0)
    assert agent_events(notebook) == [{"instance_id": WEATHER, "event": "close", "data": {}}]
    assert notebook.run_cell("print(list(host.surfaces))") == "[]\n"


@FRESH_PAGE
def test_reload_restores_surfaces_with_their_latest_state(open_notebook: OpenNotebook) -> None:
    """U4: after a page reload (kernel alive, nothing re-run) every open surface is back and
    receives its latest state, not the one it was opened with."""
    notebook = open_weather(open_notebook)
    page = notebook.page
    surface(page, WEATHER).locator("#refresh").click()
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Shanghai 28")
    notebook.run_cell(
        'agent.open("notes.01", html="<p id=n></p>", '
        'js="LineUpSurface.onState(s => n.textContent = s.text)", state={"text": "first"})\n'
        'agent.patch("notes.01", {"text": "latest"})'
    )
    expect(surface(page, "notes.01").locator("#n")).to_have_text("latest")
    notebook.run_cell(f'agent.patch("{WEATHER}", {{"city": "Chengdu", "temperature": 30}})')
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Chengdu 30")

    notebook.reload()
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Chengdu 30")
    expect(surface(page, "notes.01").locator("#n")).to_have_text("latest")
    expect(page.locator(".lineup-host .lineup-surface")).to_have_count(2)
    notebook.round_trip()
    surface(page, WEATHER).locator("#refresh").click()  # and still connected to the kernel
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Shanghai 28")
    assert [e["event"] for e in agent_events(notebook)] == ["refresh", "refresh"]


@pytest.mark.parametrize("how", ["display", "output-view"])
def test_two_views_show_the_same_surface(open_notebook: OpenNotebook, how: str) -> None:
    """U4: every view of the host shows the same surfaces and states; a click in either view
    is one ui.event (U8)."""
    notebook = open_weather(open_notebook)
    page = notebook.page
    if how == "display":
        notebook.run_cell("display(host)")
    else:  # JupyterLab's "Create New View for Cell Output" on the cell that shows the host
        notebook.select_cell(0)
        notebook.command("notebook:create-output-view")
    expect(page.locator(".lineup-host")).to_have_count(2)
    for view in (0, 1):
        expect(surface(page, WEATHER, view).locator("#city")).to_have_text("Beijing 22")
    notebook.round_trip()  # the new view's "sync" is answered
    surface(page, WEATHER, 1).locator("#refresh").click()
    for view in (0, 1):
        expect(surface(page, WEATHER, view).locator("#city")).to_have_text("Shanghai 28")
    assert [e["event"] for e in agent_events(notebook)] == ["refresh"]


def test_frames_are_sandboxed_and_start_with_the_csp(open_notebook: OpenNotebook) -> None:
    """S2: shell and surface frames are sandbox="allow-scripts" exactly, srcdoc documents of an
    opaque origin. S3, S6: the surface's srcdoc starts with the CSP meta tag, which is enforced.
    U6: the surface sees exactly event, onState, resize."""
    notebook = open_weather(open_notebook)
    page = notebook.page
    shell = card(page, WEATHER).locator("iframe.lineup-shell")
    expect(shell).to_have_count(1)
    inner = page.frame_locator(shell_selector(WEATHER)).locator("iframe")
    expect(inner).to_have_count(1)
    for frame in (shell, inner):
        assert frame.get_attribute("sandbox") == "allow-scripts"
        assert frame.get_attribute("src") is None
        assert frame.get_attribute("srcdoc")
    srcdoc = inner.get_attribute("srcdoc") or ""
    meta = re.match(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', srcdoc)
    assert meta and SURFACE_CSP.fullmatch(meta[1]), srcdoc[:400]

    shell_frame = shell.element_handle().content_frame()
    surface_frame = inner.element_handle().content_frame()
    assert shell_frame is not None and surface_frame is not None
    assert shell_frame.evaluate("() => [window.origin, typeof LineUpSurface]") == [
        "null",
        "undefined",
    ]
    assert surface_frame.evaluate("() => [window.origin, Object.keys(LineUpSurface).sort()]") == [
        "null",
        ["event", "onState", "resize"],
    ]
    # The CSP is in force, not just present: script-src without 'unsafe-eval' refuses eval.
    # (Asked from the surface's own script: Playwright's evaluate is exempt from CSP.)
    notebook.run_cell(
        'agent.open("probe.01", html="<p id=r></p>", '
        "js=\"try { eval('1'); r.textContent = 'ran' } catch (e) { r.textContent = e.name }\")"
    )
    expect(surface(page, "probe.01").locator("#r")).to_have_text("EvalError")


FOCUS_FORM = """\
agent.open(
    "form",
    html="<input id='name'><button id='go'>Next</button>",
    js="document.querySelector('#go').onclick = () => {"
    " const input = document.querySelector('#name'); input.focus();"
    " LineUpSurface.event('focused', {ok: document.activeElement === input}); };",
)
"""


def test_a_surface_the_user_clicked_may_move_its_own_focus(open_notebook: OpenNotebook) -> None:
    """H10: the focus guard stops a surface taking the keyboard from the notebook, but a
    surface the user is working in may still move focus between its own fields."""
    notebook = open_notebook([SETUP, FOCUS_FORM])
    notebook.round_trip()
    surface(notebook.page, "form").locator("#go").click()
    expect(surface(notebook.page, "form").locator("#name")).to_be_focused()
    notebook.round_trip()
    assert agent_events(notebook) == [
        {"instance_id": "form", "event": "focused", "data": {"ok": True}}
    ]


RESIZE = """\
agent.open(
    "sized",
    html="<button id='small'>small</button><button id='huge'>huge</button>",
    js="document.querySelector('#small').onclick = () => LineUpSurface.resize(300);"
    " document.querySelector('#huge').onclick = () => LineUpSurface.resize(5000);",
)
"""


def test_resize_is_applied_and_clamped(open_notebook: OpenNotebook) -> None:
    """U6: resize(height) sets the frame's height, clamped to the host's maximum (H11)."""
    notebook = open_notebook([SETUP, RESIZE])
    notebook.round_trip()
    shell = notebook.page.locator(shell_selector("sized"))
    surface(notebook.page, "sized").locator("#small").click()
    expect(shell).to_have_attribute("style", "height: 300px;")
    surface(notebook.page, "sized").locator("#huge").click()
    expect(shell).to_have_attribute("style", "height: 800px;")


def test_surfaces_follow_the_notebook_theme(open_notebook: OpenNotebook) -> None:
    """H11: a surface gets light or dark and the theme's colours, and follows a switch."""
    notebook = open_weather(open_notebook)
    root = surface(notebook.page, WEATHER).locator("html")
    expect(root).to_have_attribute("data-theme", "light")
    notebook.command("apputils:change-theme", {"theme": "JupyterLab Dark"})
    expect(root).to_have_attribute("data-theme", "dark")
    background = root.evaluate("e => getComputedStyle(e).getPropertyValue('--lineup-background')")
    assert background.strip()  # the theme's colour, not empty
    notebook.command("apputils:change-theme", {"theme": "JupyterLab Light"})
    expect(root).to_have_attribute("data-theme", "light")
