"""Views that come back: a saved notebook reopened after its kernel is gone (issue 3,
"Restoring"). Reload and second views are in test_surfaces.py."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import expect

from .conftest import OpenNotebook
from .jupyter import JupyterServer
from .test_surfaces import OPEN_WEATHER, SETUP, WEATHER, card, surface

WIDGET_SETTINGS = "@jupyter-widgets/jupyterlab-manager:plugin"


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
