"""The app center end to end in JupyterLab: an installed app opened by id alone (C6), a user
drawing on it, and disabling it (C1, C2, H35). Rule numbers: shared/spec/REQUIREMENTS.md."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import expect

from .conftest import OpenNotebook
from .test_surfaces import card, surface

CANVAS = "canvas.01"

SETUP = """\
import json, tempfile
from lineup_jupyter import Host

host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp())  # a fresh app center
agent = host.connect_agent("agent_hermes_main")
events, revisions = [], []

@agent.on_event()
def record(event):
    events.append(event.envelope["payload"])

agent.on("client.inventory", lambda envelope: revisions.append(
    (int(envelope["payload"]["revision"]), [a["id"] for a in envelope["payload"]["applications"]])))

host.apps.install("com.lineup.svg-canvas")
host.send_inventory()
agent.open_app("canvas.01", "com.lineup.svg-canvas", "canvas")
host
"""


def kernel(notebook: Any, expression: str) -> Any:
    return json.loads(notebook.run_cell(f"print(json.dumps({expression}))"))


def test_c6_the_svg_canvas_opens_by_id_draws_and_closes_when_disabled(
    open_notebook: OpenNotebook,
) -> None:
    """C6: the agent opens the installed canvas by app id; a stroke drawn with the mouse
    reaches it as `draw`. C1, C2, H35: disabling the app closes the surface, the agent hears
    ui.event 'close', and a new, higher inventory revision arrives without the app."""
    notebook = open_notebook([SETUP])
    page = notebook.page
    canvas = surface(page, CANVAS).locator("#canvas")
    expect(canvas).to_be_visible()
    notebook.round_trip()  # the view's sync is answered before the user acts

    box = canvas.bounding_box()
    assert box is not None
    x, y = box["x"] + 40, box["y"] + 40
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 6):
        page.mouse.move(x + 20 * step, y + 10 * step)
    page.mouse.up()
    expect(surface(page, CANVAS).locator("polyline")).to_have_count(1)

    notebook.round_trip()
    draws = [e for e in kernel(notebook, "events") if e["event"] == "draw"]
    assert len(draws) == 1 and draws[0]["instance_id"] == CANVAS
    stroke = draws[0]["data"]
    assert stroke["color"] == "#1f6feb" and len(stroke["points"]) == 6
    assert stroke["points"][0] == [40, 40]

    before = kernel(notebook, "revisions")
    assert before[-1][1] == ["com.lineup.svg-canvas"]
    notebook.run_cell('host.apps.disable("com.lineup.svg-canvas")')
    expect(card(page, CANVAS)).to_have_count(0)
    closes = [e for e in kernel(notebook, "events") if e["event"] == "close"]
    assert closes == [
        {
            "instance_id": CANVAS,
            "event": "close",
            "data": {"reason": "app_disabled", "app_id": "com.lineup.svg-canvas"},
        }
    ]
    after = kernel(notebook, "revisions")
    assert after[: len(before)] == before and len(after) == len(before) + 1, after
    assert after[-1][0] > before[-1][0] and after[-1][1] == []
    assert kernel(notebook, "list(host.surfaces)") == []


SHIPPED = """\
import json, tempfile
from lineup_jupyter import Host

host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_hermes_main")
events = []

@agent.on_event()
def record(event):
    events.append(event.envelope["payload"])

for app_id in ("com.lineup.weather.dashboard", "com.lineup.state-chart"):
    host.apps.install(app_id)
agent.open_app("weather.01", "com.lineup.weather.dashboard", "dashboard",
               state={"city": "Beijing", "temperature": 22})
agent.open_app("chart.01", "com.lineup.state-chart", "bars",
               state={"title": "Rain", "unit": "mm", "series": [
                   {"label": "Mon", "value": 3}, {"label": "Tue", "value": 7}]})
host
"""


def test_c6_the_shipped_weather_and_chart_apps_run_under_the_surface_csp(
    open_notebook: OpenNotebook,
) -> None:
    """U3, S3: the weather app's icon is a local asset, inlined as a data: URL, and it loads
    under the surface CSP; the chart draws its state with DOM APIs. C6: their declared events
    (refresh, select) reach the agent with the data their schemas allow."""
    notebook = open_notebook([SHIPPED])
    page = notebook.page
    weather = surface(page, "weather.01")
    expect(weather.locator("#city")).to_have_text("Beijing")
    expect(weather.locator("#temperature")).to_have_text("22°C")
    icon = weather.locator("img")
    expect(icon).to_have_attribute("src", re.compile(r"^data:image/svg\+xml;base64,"))
    expect(icon).to_have_js_property("naturalWidth", 48)  # decoded, so the CSP allowed it
    chart = surface(page, "chart.01")
    expect(chart.locator("#title")).to_have_text("Rain")
    expect(chart.locator("rect.bar")).to_have_count(2)
    notebook.round_trip()

    weather.locator("#unit").select_option("f")
    weather.locator("#refresh").click()
    chart.locator("rect.bar").nth(1).click()
    notebook.round_trip()
    assert kernel(notebook, "events") == [
        {"instance_id": "weather.01", "event": "refresh", "data": {"unit": "f"}},
        {"instance_id": "chart.01", "event": "select", "data": {"label": "Tue", "value": 7}},
    ]
    assert kernel(notebook, "agent.errors") == []  # no CSP violation, no refused event
