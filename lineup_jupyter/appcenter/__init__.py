"""The appcenter layer (docs/architecture.md)."""
