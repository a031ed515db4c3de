"""Fresh ids for the messages the host and its agents write."""

from __future__ import annotations

import uuid

__all__ = ["new_id"]


def new_id(prefix: str) -> str:
    """A fresh message id matching the id rule (H1)."""
    return f"{prefix}_{uuid.uuid4().hex}"
