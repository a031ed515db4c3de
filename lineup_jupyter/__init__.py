"""lineup-jupyter: the LineUp UI Surface & App Capability protocol, live in Jupyter.

The public names are exactly those in ``__all__``; everything in a module whose name starts
with an underscore is private and may change.
"""

from __future__ import annotations

from ._authoring import Surface, SurfaceWatcher
from .agents._agent import Agent, SurfaceEvent
from .agents._calls import CallHandle, CallResult
from .agents._listener import WebSocketListener
from .agents._remote import RemoteAgent
from .agents._stdio import ProcessAgent
from .agents._websocket import WebSocketAgent
from .appcenter._apps import AppCenter, AppInfo, AppVerification, shipped_apps
from .appcenter._trust import BundleTrust, SigningKey
from .capabilities._audit import Audit, AuditTable, AuditVerification
from .capabilities._broker import PendingCall
from .capabilities._capabilities import Capabilities, Capability, Policy
from .core._bus import History, Record, Subscription
from .core._markdown import render_markdown
from .core._surfaces import StateRevision, SurfaceChange, SurfaceInstance
from .host._host import Host
from .mcp._apps import McpApp
from .mcp._server import McpServer, McpTool
from .protocol import Limits, bundle_integrity, validate_envelope
from .protocol._errors import CapabilityError, LineUpError, ProtocolError, UsageError

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
    "McpApp",
    "McpServer",
    "McpTool",
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
