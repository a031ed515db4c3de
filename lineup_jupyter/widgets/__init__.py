"""The widgets layer (docs/architecture.md)."""
