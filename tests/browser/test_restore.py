"""Views that come back (issue 3, "Restoring"): a saved notebook reopened after its kernel
is gone, and a cell whose output left the page and came back (moving it detaches and
re-attaches its DOM, as JupyterLab's windowing does with off-screen cells, and a browser
reloads every frame that is re-attached). Reload and second views are in test_surfaces.py."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import expect

from .conftest import FRESH_PAGE, OpenNotebook
from .jupyter import JupyterServer
from .test_kernel_gone import NOT_CONNECTED, click_surface
from .test_surfaces import OPEN_WEATHER, SETUP, WEATHER, card, surface
from .test_waiting import CALL

WIDGET_SETTINGS = "@jupyter-widgets/jupyterlab-manager:plugin"
UNSYNCED = (
    "no kernel has answered this view (a notebook reopened with a new kernel, or a kernel busy "
    "with a long cell): it shows what the notebook saved, read-only. Run the cell again to "
    "draw it live."
)


@contextmanager
def lab_settings(server: JupyterServer, plugin: str, values: dict[str, object]) -> Iterator[None]:
    """User settings for one JupyterLab plugin while the block runs (read at page load)."""

    def put(raw: dict[str, object]) -> None:
        request = urllib.request.Request(
            f"{server.url}/lab/api/settings/{plugin}",
            data=json.dumps({"raw": json.dumps(raw)}).encode(),
            method="PUT",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30):
            pass

    put(values)
    try:
        yield
    finally:
        put({})


@FRESH_PAGE
def test_a_notebook_reopened_without_its_kernel_says_so_and_stays_read_only(
    open_notebook: OpenNotebook, jupyter: JupyterServer
) -> None:
    """A saved notebook (widget state saved) reopened after its kernel is gone shows its
    surfaces drawn, not a blank or broken frame, and a clear read-only 'Disconnected' line.
    A click in a surface or on its close button changes nothing and raises nothing."""
    with lab_settings(jupyter, WIDGET_SETTINGS, {"saveState": True}):
        notebook = open_notebook([SETUP, OPEN_WEATHER])
        page = notebook.page
        expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))

        notebook.command("docmanager:save")
        jupyter.shutdown_kernels()  # the kernel that held the host is gone
        jupyter.start_kernel_for(notebook.name)  # a new kernel, which knows no host
        notebook.reload(save=False)

        status = page.locator(".lineup-host .lineup-kernel-gone")
        expect(status).to_have_text(f"Not connected to a kernel: {UNSYNCED}")
        expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")
        click_surface(page, WEATHER)  # the frame takes no pointer: the card answers
        expect(page.locator(".lineup-host .lineup-kernel-refused")).to_have_text(NOT_CONNECTED)
        card(page, WEATHER).locator("button.lineup-close").click()
        expect(card(page, WEATHER)).to_have_count(1)  # nothing to close it: read-only
        expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")
        assert errors == []


@FRESH_PAGE
def test_a_notebook_saved_with_jupyterlabs_defaults_reopens_on_its_saved_picture(
    open_notebook: OpenNotebook, jupyter: JupyterServer
) -> None:
    """JupyterLab saves no widget state by default (saveState off), and a reopened notebook
    showed "Error displaying widget: model not found" for the host and the waiting line. The
    views keep their own state in the notebook at each save (js/notebook_state.js): reopened
    with a new kernel, the host draws its surfaces as saved and the waiting line no longer
    says "waiting", each with the line that says it is not live and how to bring it back."""
    notebook = open_notebook([SETUP, OPEN_WEATHER, CALL], run=False)
    page = notebook.page
    page.evaluate("() => { void window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    waiting = page.locator(".jp-Cell").last.locator(".lineup-waiting-box")
    expect(waiting).to_contain_text("Waiting for your decision")
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")

    notebook.command("docmanager:save")
    jupyter.shutdown_kernels()
    jupyter.start_kernel_for(notebook.name)  # a new kernel, which knows no host
    notebook.reload(save=False)

    host = page.locator(".lineup-host")
    expect(host.locator(".lineup-kernel-gone")).to_have_text(
        f"Not connected to a kernel: {UNSYNCED}"
    )
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")
    expect(waiting).to_contain_text("no longer waiting (no kernel holds this wait)")
    expect(waiting.locator(".lineup-kernel-gone")).to_contain_text(UNSYNCED)
    expect(page.get_by_text("Error displaying widget")).to_have_count(0)


def test_a_moved_cell_rebuilds_its_surfaces_on_their_latest_state(
    open_notebook: OpenNotebook,
) -> None:
    """U4, "Restoring": moving the host's cell takes its output out of the page and puts it
    back, which unloads every frame in it (a browser reloads an iframe that is re-attached).
    The surface comes back on its latest state, not the one it was opened with, and still
    reaches the agent."""
    notebook = open_notebook([SETUP, OPEN_WEATHER])
    page = notebook.page
    surface(page, WEATHER).locator("#refresh").click()
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Shanghai 28")
    notebook.run_cell(f'agent.patch("{WEATHER}", {{"city": "Chengdu", "temperature": 30}})')
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Chengdu 30")
    frame = card(page, WEATHER).locator("iframe.lineup-shell").element_handle().content_frame()
    assert frame is not None
    inner = frame.child_frames[0]
    inner.evaluate("() => { window.__lineupBeforeMove = true; }")

    notebook.select_cell(0)  # the cell that displays the host
    notebook.command("notebook:move-cell-down")

    # The old frame is gone: the surface running now was built again from the kernel.
    moved = card(page, WEATHER).locator("iframe.lineup-shell").element_handle().content_frame()
    assert moved is not None
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Chengdu 30")
    assert moved.child_frames[0].evaluate("() => window.__lineupBeforeMove") is None
    notebook.round_trip()
    surface(page, WEATHER).locator("#refresh").click()  # and still connected to the kernel
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Shanghai 28")
    events = json.loads(notebook.run_cell("print(json.dumps(events))"))
    assert [e["event"] for e in events] == ["refresh", "refresh"]
