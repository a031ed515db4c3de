"""Views whose kernel is gone say so (issue 24, "Kernel gone"; docs/architecture.md "When the
kernel is gone"): shut down or restarted, every view (the host view with its surfaces and
consent cards, the inspector, the waiting line) shows that it is not connected, its controls
drawn disabled, and a click on one is answered "Not connected" instead of going nowhere. A run
of the cells draws them live again."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from .conftest import OpenNotebook, decide
from .jupyter import NotebookPage
from .test_surfaces import OPEN_WEATHER, WEATHER, card, surface
from .test_waiting import CALL

SETUP = """\
import tempfile
from lineup_jupyter import Host

host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_hermes_main")

@agent.on_event("refresh")
def refresh(event):
    agent.patch(event.instance_id, {"city": "Shanghai", "temperature": 28})

host
"""
INSPECTOR = "host.inspector"

# The notebook's session, found by its path, as JupyterLab's own commands use it.
_SESSION = """async ([name, action]) => {
  const panel = window.jupyterapp.shell.widgets('main').find((w) => w?.context?.path === name);
  if (action === 'shutdown') await panel.sessionContext.shutdown();
  else await panel.sessionContext.restartKernel();
}"""
NOT_CONNECTED = "Not connected: that did not reach the kernel, and nothing happened."


def session(notebook: NotebookPage, action: str) -> None:
    notebook.page.evaluate(_SESSION, [notebook.name, action])


def click_surface(page: Page, instance_id: str) -> None:
    """Where the user clicks a surface: the middle of its frame, by the pointer (a frame that
    takes no pointer leaves the click to the card around it)."""
    box = card(page, instance_id).locator("iframe.lineup-shell").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def test_a_shut_down_kernel_is_shown_on_every_view_and_clicks_are_answered(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP, OPEN_WEATHER, INSPECTOR, CALL], run=False)
    page = notebook.page
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    host = page.locator(".lineup-host")
    prompt = host.locator('.lineup-prompt[data-call-id="w1"]')
    waiting = page.locator(".jp-Cell").last.locator(".lineup-waiting-box")
    inspector = page.locator(".lineup-inspector")
    expect(prompt).to_have_count(1)
    expect(waiting).to_contain_text("Waiting for your decision")
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")
    for view in (host, waiting, inspector):
        expect(view.locator(".lineup-kernel-gone")).to_be_hidden()

    session(notebook, "shutdown")

    gone = "Not connected to a kernel: the kernel was shut down."
    for view in (host, waiting, inspector):
        expect(view.locator(".lineup-kernel-gone")).to_contain_text(gone)
    expect(waiting).to_contain_text("no longer waiting (no kernel holds this wait)")
    expect(waiting.get_by_role("button", name="Show")).to_be_hidden()
    frame = card(page, WEATHER).locator("iframe.lineup-shell")
    expect(frame).to_have_css("pointer-events", "none")  # drawn disabled
    expect(prompt.locator("button.lineup-allow")).to_have_css("cursor", "not-allowed")

    click_surface(page, WEATHER)
    expect(host.locator(".lineup-kernel-refused")).to_have_text(NOT_CONNECTED)
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")

    host.locator(".lineup-kernel-refused").evaluate("(node) => { node.textContent = ''; }")
    decide(prompt.locator("button.lineup-allow"))
    expect(host.locator(".lineup-kernel-refused")).to_have_text(NOT_CONNECTED)
    expect(prompt.locator("button.lineup-allow")).to_be_enabled()  # nothing was decided

    inspector.locator(".lineup-inspector-export").click()
    expect(inspector.locator(".lineup-kernel-refused")).to_have_text(NOT_CONNECTED)
    inspector.get_by_role("tab", name="Calls").click()  # reading what came needs no kernel
    expect(inspector.get_by_role("tab", name="Calls")).to_have_attribute("aria-selected", "true")


def test_a_restarted_kernel_is_shown_and_a_new_run_draws_the_view_live(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP, OPEN_WEATHER])
    page = notebook.page
    host = page.locator(".lineup-host")
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")

    session(notebook, "restart")

    expect(host.locator(".lineup-kernel-gone")).to_contain_text(
        "Not connected to a kernel: the kernel restarted, and this view's widget went with it. "
        "Run the cell again to draw it live."
    )
    click_surface(page, WEATHER)
    expect(host.locator(".lineup-kernel-refused")).to_have_text(NOT_CONNECTED)

    notebook.wait_for_kernel()
    notebook.run_all()
    expect(host.locator(".lineup-kernel-gone")).to_be_hidden()
    surface(page, WEATHER).locator("#refresh").click()
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Shanghai 28")
