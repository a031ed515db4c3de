"""An MCP server that gets MCP Apps wrong on purpose, written with the official SDK.

``huge`` points at a 3 MiB resource, ``wrong_mime`` at one served as text/html, ``not_ui`` at
an https:// URI, ``hang`` never returns, ``flood`` returns 5 MiB, ``bigint`` returns 2^53+1,
``die`` ends the process (stdio), ``bad_schema`` declares an inputSchema that is no JSON
Schema, ``fine`` works.
Run as ``python -m tests.mcp_servers.hostile`` from the checkout (``http`` as for weather.py).
The SDK's Apps helper refuses the wrong ones, so they are made with MCPServer's own tools
and resources, as a careless or hostile server would serve them.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.server.apps import APP_MIME_TYPE, Apps
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource

from tests.mcp_servers.weather import main

HUGE_BYTES = 3 * 1024 * 1024
FINE_HTML = "<!doctype html><html><body><p>fine</p></body></html>"


def build() -> MCPServer[Any]:
    apps = Apps()

    @apps.tool(resource_uri="ui://hostile/fine.html", description="Works")
    def fine() -> str:
        return "fine"

    @apps.tool(resource_uri="ui://hostile/fine.html", description="Never returns")
    async def hang() -> str:
        await anyio.sleep_forever()
        return "never"

    @apps.tool(resource_uri="ui://hostile/fine.html", description="A 5 MiB result")
    def flood() -> str:
        return "x" * (5 * 1024 * 1024)

    @apps.tool(resource_uri="ui://hostile/fine.html", description="An integer past 2^53")
    def bigint() -> dict[str, int]:
        return {"n": 2**53 + 1}

    @apps.tool(resource_uri="ui://hostile/fine.html", description="Ends the server's process")
    def die() -> str:
        sys.stderr.write("hostile: exiting on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    apps.add_html_resource("ui://hostile/fine.html", FINE_HTML)
    server: MCPServer[Any] = MCPServer(
        "hostile", version="0.1.0", extensions=[apps], log_level="WARNING"
    )

    def ui(uri: str) -> dict[str, Any]:
        return {"ui": {"resourceUri": uri}}

    @server.tool(description="A 3 MiB app", meta=ui("ui://hostile/huge.html"))
    def huge() -> str:
        return "huge"

    @server.tool(description="Served as text/html", meta=ui("ui://hostile/wrong.html"))
    def wrong_mime() -> str:
        return "wrong"

    @server.tool(description="Not a ui:// resource", meta=ui("https://evil.example/app.html"))
    def not_ui() -> str:
        return "not ui"

    @server.tool(description="Declares an inputSchema that is no JSON Schema")
    def bad_schema() -> str:
        return "bad"

    # The SDK makes schemas from signatures; a careless server can still send any JSON.
    tool = server._tool_manager.get_tool("bad_schema")
    assert tool is not None
    tool.parameters = {"type": "object", "properties": {"x": {"type": 5}}}

    big = "<!doctype html><p>" + "x" * HUGE_BYTES + "</p>"
    server.add_resource(
        TextResource(uri="ui://hostile/huge.html", name="huge", mime_type=APP_MIME_TYPE, text=big)
    )
    server.add_resource(
        TextResource(
            uri="ui://hostile/wrong.html", name="wrong", mime_type="text/html", text=FINE_HTML
        )
    )
    return server


if __name__ == "__main__":
    main(build())
