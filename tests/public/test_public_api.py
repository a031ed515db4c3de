"""The public surface is exactly what __all__ says (httpx's discipline)."""

from __future__ import annotations

import types

import lineup_jupyter
import lineup_jupyter.protocol
import lineup_jupyter.testing

PUBLIC = {
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
}


def test_top_level_all_is_exactly_the_public_surface() -> None:
    assert set(lineup_jupyter.__all__) == PUBLIC
    assert len(lineup_jupyter.__all__) == len(PUBLIC)


def test_every_public_name_is_exported_and_nothing_else() -> None:
    for module in (lineup_jupyter, lineup_jupyter.protocol, lineup_jupyter.testing):
        exported = set(module.__all__)
        for name in exported:
            assert hasattr(module, name), name
        public = {
            n
            for n, v in vars(module).items()
            if not n.startswith("_") and n != "annotations" and not isinstance(v, types.ModuleType)
        }
        assert public <= exported, public - exported


def test_the_testing_kit_is_two_names() -> None:
    """lineup_jupyter.testing, for agent authors' tests (docs/agents.md)."""
    assert lineup_jupyter.testing.__all__ == ["ScriptedModel", "ScriptedUser"]


def test_the_contract_names_exist() -> None:
    """ARCHITECTURE (contract): Host(conversation_id=...), Host.receive, Host.subscribe."""
    host = lineup_jupyter.Host(conversation_id="c")
    assert callable(host.receive) and callable(host.subscribe)
