"""Views that come back: a cell JupyterLab detached while it was off-screen, and a saved
notebook reopened after its kernel is gone (issue 3, "Restoring"). Rule numbers:
shared/spec/REQUIREMENTS.md."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import expect

from .conftest import OpenNotebook
from .jupyter import JupyterServer
from .test_surfaces import OPEN_WEATHER, SETUP, WEATHER, agent_events, card, surface

NOTEBOOK_SETTINGS = "@jupyterlab/notebook-extension:tracker"
WIDGET_SETTINGS = "@jupyter-widgets/jupyterlab-manager:plugin"

# Cells tall enough to push the host's cell far out of the viewport.
FILLER = "print('\\n'.join(str(i) for i in range(80)))"


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


def test_a_cell_detached_off_screen_comes_back_with_the_latest_state(
    open_notebook: OpenNotebook, jupyter: JupyterServer
) -> None:
    """U4: with JupyterLab's 'full' windowing, a cell scrolled out of view leaves the DOM (its
    frames are destroyed). Scrolled back, the view is rebuilt from the kernel: the surface has
    the state patched while it was away, and a click still reaches the agent once."""
    with lab_settings(jupyter, NOTEBOOK_SETTINGS, {"windowingMode": "full"}):
        notebook = open_notebook([SETUP, OPEN_WEATHER, *[FILLER] * 30])
        page = notebook.page
        notebook.select_cell(0)
        expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")

        notebook.select_cell(31)  # the last cell: the host's cell is detached
        expect(page.locator(".lineup-host")).to_have_count(0)
        notebook.run_cell(f'agent.patch("{WEATHER}", {{"city": "Chengdu", "temperature": 30}})')
        expect(page.locator(".lineup-host")).to_have_count(0)  # still away while patched

        notebook.select_cell(0)
        expect(surface(page, WEATHER).locator("#city")).to_have_text("Chengdu 30")
        expect(card(page, WEATHER)).to_have_count(1)
        notebook.round_trip()
        surface(page, WEATHER).locator("#refresh").click()
        expect(surface(page, WEATHER).locator("#city")).to_have_text("Shanghai 28")
        assert [e["event"] for e in agent_events(notebook)] == ["refresh"]


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
        notebook.reload()  # JupyterLab starts a new kernel, which knows no host

        status = page.locator(".lineup-host .lineup-status")
        expect(status).to_have_text(
            "Disconnected: showing the last saved state, read-only. "
            "Run the cell again to reconnect."
        )
        expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")
        surface(page, WEATHER).locator("#refresh").click()
        card(page, WEATHER).locator("button.lineup-close").click()
        expect(card(page, WEATHER)).to_have_count(1)  # nothing to close it: read-only
        expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")
        assert errors == []
