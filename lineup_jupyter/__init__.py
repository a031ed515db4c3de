"""lineup-jupyter: the LineUp UI Surface & App Capability protocol, live in Jupyter.

The public names are exactly those in ``__all__``; everything in a module whose name starts
with an underscore is private and may change.
"""

from __future__ import annotations

from ._agent import Agent, SurfaceEvent
from ._apps import AppCenter, AppInfo, AppVerification, shipped_apps
from ._audit import Audit, AuditTable, AuditVerification
from ._authoring import Surface, SurfaceWatcher
from ._broker import PendingCall
from ._bus import History, Record, Subscription
from ._calls import CallHandle, CallResult
from ._capabilities import Capabilities, Capability, Policy
from ._errors import CapabilityError, LineUpError, ProtocolError, UsageError
from ._host import Host
from ._listener import WebSocketListener
from ._markdown import render_markdown
from ._remote import RemoteAgent
from ._stdio import ProcessAgent
from ._surfaces import StateRevision, SurfaceChange, SurfaceInstance
from ._trust import BundleTrust, SigningKey
from ._websocket import WebSocketAgent
from .protocol import Limits, bundle_integrity, validate_envelope

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AppCenter",
    "AppInfo",
    "AppVerification",
    "Audit",
    "AuditTable",
    "AuditVerification",
    "BundleTrust",
    "CallHandle",
    "CallResult",
    "Capabilities",
    "Capability",
    "CapabilityError",
    "History",
    "Host",
    "Limits",
    "LineUpError",
    "PendingCall",
    "Policy",
    "ProcessAgent",
    "ProtocolError",
    "Record",
    "RemoteAgent",
    "SigningKey",
    "StateRevision",
    "Subscription",
    "Surface",
    "SurfaceChange",
    "SurfaceEvent",
    "SurfaceInstance",
    "SurfaceWatcher",
    "UsageError",
    "WebSocketAgent",
    "WebSocketListener",
    "__version__",
    "bundle_integrity",
    "render_markdown",
    "shipped_apps",
    "validate_envelope",
]
