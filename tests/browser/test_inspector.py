"""The inspector (`host.inspector`) in real JupyterLab: it shows what the kernel's history
holds, both ways and in order, refusals with their rule and path (H3), filters by type and
instance, each surface's states by revision (U4, H6), the calls (C9-C11), and exports the
history as JSON lines; a reloaded page rebuilds it from the kernel."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Page, expect

from .conftest import FRESH_PAGE, OpenNotebook, Screenshot
from .jupyter import NotebookPage
from .test_surfaces import OPEN_WEATHER, SETUP, WEATHER, surface

INSPECT = """\
@host.capability("demo.lookup", risk="display_only")
def lookup(arguments):
    return {"found": arguments.get("q")}

host.inspector
"""


def kernel(notebook: NotebookPage, expression: str) -> Any:
    return json.loads(notebook.run_cell(f"print(json.dumps({expression}))"))


def rows(page: Page) -> Any:
    return page.locator(".lineup-inspector-body > .lineup-inspector-row")


@FRESH_PAGE
def test_the_inspector_shows_filters_and_exports_the_history(
    open_notebook: OpenNotebook, screenshot: Screenshot
) -> None:
    notebook = open_notebook([SETUP, OPEN_WEATHER, INSPECT])
    page = notebook.page
    inspector = page.locator(".lineup-inspector")
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Beijing 22")
    notebook.round_trip()

    surface(page, WEATHER).locator("#refresh").click()  # ui.event, then the agent's ui.patch
    expect(surface(page, WEATHER).locator("#city")).to_have_text("Shanghai 28")
    notebook.run_cell(
        "host.receive('{\"v\": 1}')\n"  # refused: its record says why
        'agent.call("demo.lookup", {"q": "oslo"}, reason="look it up", call_id="call_1")\n'
        'agent.call("app.open_url", {"url": "https://example.com"}, reason="docs", '
        'call_id="call_2")'  # waits for the user
    )
    expected = kernel(notebook, "[r.seq for r in host.history]")
    expect(rows(page)).to_have_count(len(expected))  # every record, nothing else
    assert [int(s) for s in rows(page).evaluate_all("rs => rs.map(r => r.dataset.seq)")] == (
        expected
    )

    error = kernel(notebook, "host.history.select(kind='refused')[-1].error")
    refused = inspector.locator('.lineup-inspector-row[data-kind="refused"]')
    expect(refused).to_have_count(1)
    expect(refused.locator(".lineup-inspector-problem")).to_contain_text(
        f"{error['code']} {error['rule']} {error['path']}: {error['message'][:40]}"
    )
    screenshot(inspector, "inspector")

    # Filter by instance: exactly the records the kernel has for it.
    inspector.get_by_label("Filter by surface instance").select_option(WEATHER)
    mine = kernel(notebook, f"[r.seq for r in host.history.select(instance_id={WEATHER!r})]")
    expect(rows(page)).to_have_count(len(mine))
    patch = rows(page).filter(has_text="lineup.v1.ui.patch")
    expect(patch).to_have_count(1)
    patch.locator("summary").click()  # expandable JSON, drawn when opened
    expect(patch.locator("pre")).to_contain_text('"city": "Shanghai"')
    inspector.get_by_label("Filter by surface instance").select_option("")
    inspector.get_by_label("Filter by type").select_option("lineup.v1.ui.event")
    expect(rows(page)).to_have_count(1)
    expect(rows(page)).to_contain_text(WEATHER)

    inspector.get_by_role("tab", name="Calls").click()
    expect(inspector.locator("tr", has_text="call_1")).to_contain_text("completed")
    expect(inspector.locator("tr", has_text="call_2")).to_contain_text("waiting for the user")

    inspector.get_by_role("tab", name="Inventory").click()
    expect(inspector.locator("tr", has_text="agent_hermes_main")).not_to_have_count(0)

    inspector.get_by_role("tab", name="Surfaces").click()
    inspector.get_by_role("button", name=f"States of {WEATHER}").click()
    states = inspector.locator(".lineup-inspector-state-list > details")
    expect(states).to_have_count(2)  # opened, then patched by the click
    states.nth(1).locator("summary").click()
    expect(states.nth(1)).to_contain_text("revision 2")
    expect(states.nth(1).locator("pre")).to_contain_text('"temperature": 28')

    with page.expect_download() as download:
        inspector.get_by_role("button", name="Export JSON lines").click()
    path = download.value.path()
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    everything = kernel(notebook, "[r.to_json() for r in host.history]")
    assert lines == everything  # whole records, none shortened
    assert download.value.suggested_filename == "lineup-conv_01-history.jsonl"

    # A reloaded page rebuilds the inspector from the kernel's history.
    notebook.reload()
    count = len(kernel(notebook, "[r.seq for r in host.history]"))
    expect(page.locator(".lineup-inspector-body > .lineup-inspector-row")).to_have_count(count)
