"""lineup-jupyter: the LineUp UI Surface & App Capability protocol, live in Jupyter.

The public names are exactly those in ``__all__``; everything in a module whose name starts
with an underscore is private and may change.
"""

from __future__ import annotations

from ._agent import Agent, SurfaceEvent
from ._bus import History, Record, Subscription
from ._errors import LineUpError, ProtocolError, UsageError
from ._host import Host
from ._surfaces import SurfaceChange, SurfaceInstance
from .protocol import Limits, bundle_integrity, validate_envelope

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "History",
    "Host",
    "Limits",
    "LineUpError",
    "ProtocolError",
    "Record",
    "Subscription",
    "SurfaceChange",
    "SurfaceEvent",
    "SurfaceInstance",
    "UsageError",
    "__version__",
    "bundle_integrity",
    "validate_envelope",
]
