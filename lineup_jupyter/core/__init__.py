"""The core layer (docs/architecture.md)."""
