"""The host layer (docs/architecture.md)."""
