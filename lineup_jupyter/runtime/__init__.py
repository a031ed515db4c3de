"""The runtime layer (docs/architecture.md)."""
