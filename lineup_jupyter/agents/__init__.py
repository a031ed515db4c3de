"""The agents layer (docs/architecture.md)."""
