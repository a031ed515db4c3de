"""notebooks/01-quickstart.ipynb, the real file, read in JupyterLab as its reader would.

Every cell runs in order, one at a time (Shift+Enter), and the test does what the notebook's
text asks of the reader between cells: click Refresh in the weather surface, Allow on the
consent card, pick a city in the question. Run All would not leave room for that: the notebook
answers for a reader who did nothing (``host.decide``, ``host.answer``) and closes the surface
in its last cell. Screenshots for the README are taken here (docs/images).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import nbformat
from playwright.sync_api import Page, expect

from .conftest import Screenshot, decide
from .jupyter import JupyterServer, NotebookPage
from .test_surfaces import card, surface

NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "01-quickstart.ipynb"
WEATHER = "weather.dashboard.01"
REFRESH = {"instance_id": WEATHER, "event": "refresh", "data": {"unit": "c"}}

# What the kernel says about the surface and the events the agent was sent (no cell added).
SURFACE = (
    "print(__import__('json').dumps({"
    f"'revision': host.surfaces[{WEATHER!r}].revision, "
    f"'state': host.surfaces[{WEATHER!r}].state, "
    "'events': [r.envelope['payload'] for r in host.history "
    "if r.envelope.get('type') == 'lineup.v1.ui.event']}))"
)


def index_of(cells: list[Any], start: str) -> int:
    """The index of the one cell whose source starts with ``start``."""
    found = [i for i, cell in enumerate(cells) if cell.source.startswith(start)]
    assert len(found) == 1, f"{NOTEBOOK.name}: expected one cell starting {start!r}, not {found}"
    return found[0]


def kernel_surface(notebook: NotebookPage) -> dict[str, Any]:
    seen: dict[str, Any] = json.loads(notebook.execute(SURFACE))
    return seen


def test_the_quickstart_runs_in_jupyterlab_with_its_surface_clicked(
    page: Page, jupyter: JupyterServer, screenshot: Screenshot
) -> None:
    """The weather surface appears, a real click on Refresh reaches the agent and its patch
    comes back to the surface; the consent card's Allow saves the note; the picked city is
    the answer; no cell shows an error."""
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    # Outputs are stripped in the repo: everything the page shows comes from this run.
    assert all(not cell.get("outputs") for cell in cells if cell.cell_type == "code")
    show_host, handler, save, deny, say, answer = (
        index_of(cells, start)
        for start in (
            "host  #",
            '@agent.on_event("refresh")',
            "note = agent.call(",
            "if not note.done():",
            "agent.say(",
            "if not next_city.done():",
        )
    )
    shutil.copy(NOTEBOOK, jupyter.root / NOTEBOOK.name)
    notebook = NotebookPage(page, jupyter, NOTEBOOK.name, "lab").open()

    # Open the surface and show the host: the surface draws the state it was opened with.
    notebook.run_cells(0, show_host + 1)
    city = surface(page, WEATHER).locator("#city")
    expect(city).to_have_text("Beijing 22°C")
    expect(page.locator(".lineup-host .lineup-surface")).to_have_count(1)
    # The agent's handler, and the notebook's stand-in for a click (host.user_event).
    notebook.run_cells(show_host + 1, handler + 1)
    expect(city).to_have_text("Shanghai 28°C")
    notebook.round_trip()  # the view's sync is answered: a click now reaches the kernel
    before = kernel_surface(notebook)
    assert before["events"] == [REFRESH]

    # The real click. The patch brings the same city again, so the text is blanked first:
    # only a state sent after the click can write it back.
    city.evaluate("node => { node.textContent = '' }")
    expect(city).to_have_text("")
    surface(page, WEATHER).locator("#refresh").click()
    expect(city).to_have_text("Shanghai 28°C")
    after = kernel_surface(notebook)
    assert after["events"] == [REFRESH, REFRESH]  # the click, as the agent received it
    assert after["revision"] == before["revision"] + 1  # and the agent's patch
    assert after["state"] == {"city": "Shanghai", "temperature": 28}
    screenshot(page.locator(".lineup-host"), "surface")

    # Bad input, a display_only capability, then one that asks the reader first.
    outputs = notebook.run_cells(handler + 1, save + 1)
    text = "".join(outputs)
    assert "[U5 invalid] $.payload.js" in text
    assert "('completed', {'city': 'Oslo', 'temperature': 21})" in text
    prompt = page.locator(".lineup-host .lineup-consent .lineup-prompt")
    expect(prompt).to_have_count(1)
    expect(prompt.locator(".lineup-prompt-capability")).to_have_text("artifact.save")
    expect(prompt.locator(".lineup-prompt-reason-text")).to_have_text("Keep the forecast for later")
    # Scrolled first: a card that moves waits 750 ms again before a click counts (and looks it).
    prompt.scroll_into_view_if_needed()
    expect(prompt).to_have_attribute("data-armed", "")
    screenshot(prompt, "consent")
    # The notebook's own scratch folder (issue 24: trying the demo leaves nothing behind).
    artifacts = Path(notebook.execute("print(host.artifacts_dir)").strip())
    assert not artifacts.is_relative_to(jupyter.root)
    saved = artifacts / "quickstart" / "note.txt"
    assert not saved.exists()
    decide(prompt.locator("button.lineup-allow"))
    expect(prompt).to_have_count(0)
    expect(page.locator(".lineup-consent-recent")).to_contain_text("completed")
    assert saved.read_text() == "Shanghai 28°C"
    assert notebook.run_cells(save + 1, deny + 1)[-1] == "'completed'"  # not the cell's deny

    # The audit, then components drawn by the host and a question for the reader.
    notebook.run_cells(deny + 1, say + 1)
    components = page.locator(".lineup-host .lineup-components")
    expect(components.locator(".lineup-kind-markdown strong")).to_have_text("Forecast")
    expect(components.locator(".lineup-kind-markdown")).to_contain_text("<script>alert(1)")
    expect(components.locator("script")).to_have_count(0)
    expect(components.locator(".lineup-kind-progress")).to_contain_text("50%")
    question = components.locator(".lineup-kind-choice")
    expect(question.locator("legend")).to_have_text("Which city next?")
    screenshot(components, "components")
    decide(question.get_by_label("Beijing"), question.locator("label", has_text="Beijing"))
    decide(question.get_by_role("button", name="Submit"))
    expect(question.locator(".lineup-outcome")).to_have_text("Answered: Beijing")
    assert notebook.run_cells(say + 1, answer + 1)[-1] == "'bj'"  # the pick, not the cell's 'hz'

    # The record, and the agent closes its surface.
    outputs = notebook.run_cells(answer + 1, len(cells))
    assert "to_agent envelope lineup.v1.ui.event" in "".join(outputs)
    assert outputs[-1] == "[]"
    expect(card(page, WEATHER)).to_have_count(0)

    shown = notebook.cells()
    assert [cell["type"] for cell in shown] == [cell.cell_type for cell in cells]
    counts = [cell["execution_count"] for cell in shown if cell["type"] == "code"]
    assert counts == list(range(1, len(counts) + 1))  # every code cell ran once, in order
    errors = [o for cell in shown for o in cell["outputs"] if o["output_type"] == "error"]
    assert errors == []
