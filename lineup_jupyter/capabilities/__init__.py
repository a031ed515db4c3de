"""The capabilities layer (docs/architecture.md)."""
