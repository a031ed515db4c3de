"""lineup-jupyter: the LineUp UI Surface & App Capability protocol, live in Jupyter.

The public names are exactly those in ``__all__``; everything in a module whose name starts
with an underscore is private and may change.
"""

from __future__ import annotations

from ._authoring import Surface, SurfaceWatcher
from .agents._agent import Agent, Question, SurfaceEvent, TextStream
from .agents._calls import CallHandle, CallResult
from .agents._listener import WebSocketListener
from .agents._remote import RemoteAgent
from .agents._stdio import ProcessAgent
from .agents._websocket import WebSocketAgent
from .appcenter._apps import AppCenter, AppInfo, AppVerification, OpenedSurface, shipped_apps
from .appcenter._trust import BundleTrust, SigningKey
from .capabilities._audit import Audit, AuditTable, AuditVerification
from .capabilities._broker import PendingCall
from .capabilities._capabilities import Capabilities, Capability, Policy
from .core import _views
from .core._bus import History, Record, Subscription
from .core._components import Component, ComponentChange, ComponentsView
from .core._markdown import render_markdown
from .core._surfaces import StateRevision, SurfaceChange, SurfaceInstance, SurfacesView
from .host._host import Host
from .mcp._apps import McpApp, McpApps
from .mcp._resources import AppResource
from .mcp._server import McpServer
from .mcp._tools import McpTool
from .protocol import InlineApp, Limits, bundle_integrity, validate_envelope
from .protocol._errors import CapabilityError, LineUpError, ProtocolError, UsageError
from .runtime._problems import Problem, Problems

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AppCenter",
    "AppInfo",
    "AppResource",
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
    "Component",
    "ComponentChange",
    "ComponentsView",
    "History",
    "Host",
    "InlineApp",
    "Limits",
    "LineUpError",
    "McpApp",
    "McpApps",
    "McpServer",
    "McpTool",
    "OpenedSurface",
    "PendingCall",
    "Policy",
    "Problem",
    "Problems",
    "ProcessAgent",
    "ProtocolError",
    "Question",
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
    "SurfacesView",
    "TextStream",
    "UsageError",
    "WebSocketAgent",
    "WebSocketListener",
    "__version__",
    "bundle_integrity",
    "render_markdown",
    "shipped_apps",
    "validate_envelope",
]


def _load_views() -> _views.Views:
    """The widgets, imported when a view is first asked for (core/_views.py says why)."""
    from .widgets._widget import VIEWS

    return VIEWS


_views.provide(_load_views)
