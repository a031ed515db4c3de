"""MCP servers written with the official SDK, for tests/test_mcp*.py (and notebooks/09)."""
