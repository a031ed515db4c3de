"""MCP Apps: MCP servers as agents of the host, their ``ui://`` apps in its view.

See docs/mcp-apps.md.
"""
