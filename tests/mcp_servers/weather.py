"""A small weather and clock MCP server with MCP Apps, written with the official SDK.

Run as ``python weather.py`` (stdio) or ``python weather.py http`` (streamable HTTP on a free
port of 127.0.0.1, printed as the first line of stdout once the socket listens). Tests also
connect to ``build()`` in-process.

Its tools: ``show_weather`` (an app for the model and the app, read-only), ``refresh_weather``
(the app's only, read-only), ``forecast_text`` (the model's only: never callable by an app),
``set_alarm`` (destructive), ``clock`` (an app with no annotations), ``plain_echo`` (no UI).
"""

from __future__ import annotations

import socket
import sys
from typing import Any

from mcp.server.apps import Apps, ResourceCsp
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

WEATHER_URI = "ui://weather/app.html"
CLOCK_URI = "ui://clock/app.html"
WEATHER_HTML = """<!doctype html>
<html><head><title>Weather</title></head>
<body><main id="app">Weather</main>
<script type="module">document.getElementById("app").textContent = "ready";</script>
</body></html>"""
CLOCK_HTML = "<!doctype html><html><body><p id='t'>clock</p><script>1</script></body></html>"

ALARMS: list[str] = []  # what set_alarm did: in-process tests look


def build() -> MCPServer[Any]:
    apps = Apps()

    @apps.tool(
        resource_uri=WEATHER_URI,
        title="Show the weather",
        description="The weather of a city, with an app",
        annotations=ToolAnnotations(readOnlyHint=True),
    )
    def show_weather(city: str) -> dict[str, Any]:
        return {"city": city, "temperature": 21}

    @apps.tool(
        resource_uri=WEATHER_URI,
        visibility=["app"],
        description="Refresh the weather (the app's button)",
        annotations=ToolAnnotations(readOnlyHint=True),
    )
    def refresh_weather(city: str) -> dict[str, Any]:
        return {"city": city, "temperature": 22}

    @apps.tool(
        resource_uri=WEATHER_URI,
        visibility=["model"],
        description="The forecast as text, for the model only",
    )
    def forecast_text(city: str) -> str:
        return f"Sunny in {city}"

    @apps.tool(
        resource_uri=CLOCK_URI,
        description="Set an alarm",
        annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False),
    )
    def set_alarm(time: str) -> str:
        ALARMS.append(time)
        return f"alarm set for {time}"

    @apps.tool(resource_uri=CLOCK_URI, description="The time, with an app")
    def clock() -> str:
        return "12:00"

    apps.add_html_resource(
        WEATHER_URI,
        WEATHER_HTML,
        csp=ResourceCsp(
            connect_domains=["https://api.weather.example"],
            resource_domains=["https://cdn.weather.example"],
            frame_domains=["https://frames.example"],
        ),
        prefers_border=True,
    )
    apps.add_html_resource(CLOCK_URI, CLOCK_HTML)
    server: MCPServer[Any] = MCPServer(
        "weather", version="1.2.0", extensions=[apps], log_level="WARNING"
    )

    @server.tool(description="Echo, no UI")
    def plain_echo(text: str) -> str:
        return text

    return server


def serve_http(server: MCPServer[Any]) -> None:
    """Serve on a free port of 127.0.0.1; the port is printed once the socket listens."""
    import anyio
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(sock.getsockname()[1], flush=True)  # the test waits for this line, not a timer
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))


def main(server: MCPServer[Any]) -> None:
    if sys.argv[1:] == ["http"]:
        serve_http(server)
    else:
        server.run("stdio")


if __name__ == "__main__":
    main(build())
