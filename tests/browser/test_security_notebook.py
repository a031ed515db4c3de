"""notebooks/06-security.ipynb, the real file, in JupyterLab: its probe surface tries the
page, storage, cookies, a popup, WebRTC, a nested frame and the network (S2, S3, and the
bridge's removals), and every attempt must come back blocked, in the surface and in the
report the agent receives. Then the rest of the notebook runs without an error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
from playwright.sync_api import Page, expect

from .jupyter import JupyterServer, NotebookPage
from .test_surfaces import surface

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "06-security.ipynb"
ATTEMPTS = {
    "read the notebook page",
    "localStorage",
    "cookies",
    "popup",
    "WebRTC",
    "network",
    "nested frame",
}


def test_the_security_notebooks_probe_is_blocked_on_every_line(
    page: Page, jupyter: JupyterServer
) -> None:
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    probe = next(i for i, cell in enumerate(cells) if cell.source.startswith("PROBE_JS = "))
    shutil.copy(NOTEBOOK, jupyter.root / NOTEBOOK.name)
    notebook = NotebookPage(page, jupyter, NOTEBOOK.name, "lab").open()
    popups: list[str] = []
    page.context.on("page", lambda opened: popups.append(opened.url))

    notebook.run_cells(0, probe + 1)
    out = surface(page, "probe.01").locator("#out")
    expect(out).to_contain_text("nested frame: ")  # its last line, written after 500 ms
    notebook.round_trip()
    report = json.loads(notebook.execute("import json; print(json.dumps(reports[-1]))"))
    assert set(report) == ATTEMPTS
    assert all(verdict.startswith("blocked") for verdict in report.values()), report
    assert "LEAKED" not in out.inner_text() and "SENT" not in out.inner_text()
    assert popups == []

    outputs = notebook.run_cells(probe + 1, len(cells))  # a CellError fails the test
    assert any("refused" in text for text in outputs)
