"""The app center end to end in JupyterLab: an installed app opened by id alone (C6), a user
drawing on it, and disabling it (C1, C2, H35). Rule numbers: docs/rules.md."""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import expect

from .conftest import OpenNotebook, Screenshot, decide
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


CENTER = """\
import json, tempfile
from IPython.display import display
from lineup_jupyter import BundleTrust, Host, ProtocolError, SigningKey

key = SigningKey.generate()
host = Host(conversation_id="conv_01", data_dir=tempfile.mkdtemp(),
            trust=BundleTrust.strict(keys=[key.public_key]))
agent = host.connect_agent("agent_hermes_main")
revisions = []
agent.on("client.inventory", lambda envelope: revisions.append(envelope["payload"]["revision"]))
for app_id in ("com.lineup.svg-canvas", "com.lineup.state-chart"):
    host.apps.install(app_id)
agent.open_app("canvas.01", "com.lineup.svg-canvas", "canvas")
agent.open("signed.01", html="<p id='p'>signed</p>", signature=key)
try:
    agent.open("unsigned.01", html="<p>unsigned</p>")
    refused = None
except ProtocolError as error:
    refused = [error.code, error.rule, error.path]
display(host.apps)
host
"""


def test_g2_the_app_center_view_shows_the_mode_and_its_buttons_act(
    open_notebook: OpenNotebook, screenshot: Screenshot
) -> None:
    """H37: the strict mode is visible in both views; a signed bundle opens, an unsigned one
    is refused. G2, H35, H32: the app center's Disable closes the app's surface and sends a
    new inventory revision; Verify all names a cached bundle changed on disk; Enable restores."""
    notebook = open_notebook([CENTER])
    page = notebook.page
    center = page.locator(".lineup-apps")
    expect(center.locator(".lineup-apps-trust")).to_have_text(
        "Strict mode: inline bundles open only if allowlisted or signed "
        "(0 allowlisted digests, 1 trusted key)."
    )
    expect(page.locator(".lineup-trust")).to_have_attribute("data-mode", "strict")
    expect(surface(page, "signed.01").locator("#p")).to_have_text("signed")
    expect(card(page, "unsigned.01")).to_have_count(0)
    assert kernel(notebook, "refused") == ["untrusted_bundle", "H37", "$.payload.app"]
    canvas_row = center.locator('tr[data-app-id="com.lineup.svg-canvas"]')
    expect(canvas_row).to_contain_text("enabled")
    expect(card(page, "canvas.01")).to_have_count(1)
    screenshot(center, "app-center")
    before = kernel(notebook, "revisions")

    decide(canvas_row.get_by_role("button", name="Disable SVG canvas"))
    expect(canvas_row).to_contain_text("disabled")
    expect(card(page, "canvas.01")).to_have_count(0)
    assert kernel(notebook, 'host.apps.get("com.lineup.svg-canvas").enabled') is False
    after = kernel(notebook, "revisions")
    assert len(after) == len(before) + 1 and after[-1] > before[-1]

    notebook.run_cell(
        "from lineup_jupyter.appcenter._apps import _cache_name\n"
        'digest = host.apps._installed("com.lineup.state-chart")[3]["bars"]\n'
        "blob = host.apps.cache / _cache_name(digest)\n"
        "blob.write_bytes(blob.read_bytes() + b'<script>evil()</script>')"
    )
    center.get_by_role("button", name="Verify all").click()
    chart_row = center.locator('tr[data-app-id="com.lineup.state-chart"]')
    expect(chart_row.locator("td.lineup-apps-bad")).to_contain_text("changed on disk")
    expect(canvas_row.locator("td.lineup-apps-good").last).to_have_text("ok")

    decide(canvas_row.get_by_role("button", name="Enable SVG canvas"))
    expect(canvas_row).to_contain_text("enabled")
    assert kernel(notebook, 'host.apps.get("com.lineup.svg-canvas").enabled') is True
