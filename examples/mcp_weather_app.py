"""A small MCP server with an MCP App, for notebooks/09-mcp-apps.ipynb.

The server is written with the official ``mcp`` SDK (``pip install 'lineup-jupyter[mcp]'``);
its app with the official MCP Apps App SDK (``@modelcontextprotocol/ext-apps``, from npm),
whose ``app-with-deps`` build is inlined into the app's one HTML file, as an app's author
ships it: the app then loads nothing from anywhere. Run it as ``python mcp_weather_app.py``
(stdio): ``host.connect_mcp([sys.executable, "mcp_weather_app.py"])``.

Tools: ``show_weather`` (its app; the model and the app may call it; read-only),
``refresh_weather`` (the app's only: ``visibility=["app"]``), ``forecast_text`` (the model's
only: an app can never call it).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mcp.server.apps import Apps
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

# The App SDK as npm installs it (this repository's devDependency: `npm ci`).
SDK = (
    Path(__file__).resolve().parents[1]
    / "node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"
)
URI = "ui://weather/app.html"

BODY = """
<main style="font: 14px var(--font-sans, sans-serif); padding: 8px">
  <h3 id="city">Weather</h3>
  <p id="temperature">waiting for the tool's result</p>
  <button id="refresh">Refresh</button> <button id="tell">Tell the model</button>
</main>
"""

# The app: hears the tool's input and result, calls refresh_weather (the host asks the user
# first), tells the model what it shows, follows the notebook's theme.
SCRIPT = """
const app = new App({ name: "weather", version: "1.0.0" });
let city = "";
const show = (weather) => {
  document.getElementById("city").textContent = weather.city;
  document.getElementById("temperature").textContent = `${weather.temperature} °C`;
};
app.ontoolinput = ({ arguments: args }) => {
  city = args.city;
};
app.ontoolresult = (result) => show(result.structuredContent);
app.onhostcontextchanged = (context) => {
  if (context.theme) document.documentElement.style.colorScheme = context.theme;
};
document.getElementById("refresh").onclick = async () => {
  const result = await app.callServerTool({ name: "refresh_weather", arguments: { city } });
  show(result.structuredContent);
};
document.getElementById("tell").onclick = () =>
  app.updateModelContext({ content: [{ type: "text", text: `The user is looking at ${city}.` }] });
await app.connect();
"""


def app_html() -> str:
    """The app's HTML: the SDK's final `export{qB as App, ...}` becomes `const App = qB, ...`,
    so the SDK and the app's script are one module script."""
    sdk = SDK.read_text(encoding="utf-8")
    exports = re.search(r"export\s*\{([^}]*)\}\s*;?\s*$", sdk)
    if exports is None:
        raise RuntimeError(f"{SDK}: no final export statement")
    names = [item.strip().partition(" as ") for item in exports.group(1).split(",")]
    bindings = ", ".join(f"{exported or local} = {local}" for local, _, exported in names)
    module = f"{sdk[: exports.start()]}\nconst {bindings};\n{SCRIPT}"
    return f'<!doctype html><html><body>{BODY}<script type="module">{module}</script></body></html>'


def build() -> MCPServer[Any]:
    apps = Apps()
    temperatures = {"count": 21}

    @apps.tool(
        resource_uri=URI,
        title="Show the weather",
        description="The weather of a city, with an app",
        annotations=ToolAnnotations(readOnlyHint=True),
    )
    def show_weather(city: str) -> dict[str, Any]:
        return {"city": city, "temperature": temperatures["count"]}

    @apps.tool(
        resource_uri=URI,
        visibility=["app"],
        description="Refresh the weather (the app's button)",
        annotations=ToolAnnotations(readOnlyHint=True),
    )
    def refresh_weather(city: str) -> dict[str, Any]:
        temperatures["count"] += 1
        return {"city": city, "temperature": temperatures["count"]}

    @apps.tool(resource_uri=URI, visibility=["model"], description="The forecast, for the model")
    def forecast_text(city: str) -> str:
        return f"Sunny in {city}"

    apps.add_html_resource(URI, app_html())
    return MCPServer("weather-app", version="1.0.0", extensions=[apps])


if __name__ == "__main__":
    build().run("stdio")
