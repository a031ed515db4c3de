"""An MCP app's ``ui://`` resource: what the host accepts of it, checked before anything shows.

A tool's ``_meta.ui.resourceUri`` names the app; ``resources/read`` gives its HTML. This host
shows it only if the URI is ``ui://``, the content's MIME type is exactly
``text/html;profile=mcp-app`` and its text is at most ``max_bytes`` of UTF-8 (MAX_HTML_BYTES
by default, ``connect_mcp(max_html_bytes=...)``); anything else is refused with the reason.
Its ``_meta.ui.csp`` is read here: ``connectDomains`` and ``resourceDomains`` are kept (each
an https or wss origin, else refused: a domain goes into a CSP, where a space or a ``;``
would add a directive), ``frameDomains`` and ``baseUriDomains`` and every ``permissions``
entry are refused, each with its own reason (docs/mcp-apps.md). A wildcard is kept only over a
registrable domain: ``https://*.com``, ``https://*.github.io`` or ``https://*.s3.amazonaws.com``
would let the app reach sites anyone registers there, and are refused (the Public Suffix List,
protocol/_owners.py). The owner of each kept domain goes to the card with it.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from ..protocol._owners import is_public_suffix, owners_of, url_host

__all__ = [
    "APP_MIME_TYPE",
    "GRANTABLE",
    "MAX_HTML_BYTES",
    "AppResource",
    "ResourceRefused",
    "app_resource",
    "over",
]

APP_MIME_TYPE = "text/html;profile=mcp-app"
# Apps are kept in memory for the kernel's life and shipped to the page, never saved in the
# notebook. Real apps inline their libraries: the official pdf example is 4 336 789 bytes.
MAX_HTML_BYTES = 8 * 1024 * 1024
GRANTABLE = ("connectDomains", "resourceDomains")
# An origin a CSP source list can hold as one token: a scheme, a host (its first label may
# be *), a port. Nothing else: no path, no quote, no space, no ';'.
_ORIGIN = re.compile(
    r"^(https|wss)://(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*"
    r"(:[0-9]{1,5})?$"
)
_MAX_DOMAINS = 32  # per directive
_REFUSED_DIRECTIVES = {
    "frameDomains": "nested frames would undo the host's shell frame: never granted",
    "baseUriDomains": "a base URI elsewhere would move the app's relative URLs: never granted",
}

# Why each of `_meta.ui.permissions` is refused (docs/mcp-apps.md, "Device permissions").
# Camera and microphone are the browser's refusal, not only ours: Chromium gives no media
# device to an opaque origin, whatever the frame's allow attribute (measured; tested in
# tests/browser/test_mcp_apps.py test_no_app_frame_gets_a_device), and an app's frame is one.
_NO_MEDIA = (
    "the browser gives no camera or microphone to an opaque origin, and an app's frame is one "
    "here (its containment): no grant could give it"
)
_REFUSED_PERMISSIONS = {
    "camera": _NO_MEDIA,
    "microphone": _NO_MEDIA,
    "geolocation": "this host never shares your location with an app",
    "clipboardWrite": "an app never writes your clipboard here (copy and cut are kept from it)",
}


class ResourceRefused(Exception):
    """Why a ``ui://`` resource is not shown (the message is the user's to read)."""


@dataclass(frozen=True)
class AppResource:
    """A checked app resource, as the host keeps it per (server, version, uri)."""

    uri: str
    html: str
    csp: dict[str, list[str]]  # connectDomains, resourceDomains: as declared and accepted
    refused_csp: list[dict[str, str]] = field(default_factory=list)
    # The registrable domain of each kept domain's host (a wildcard's: of its base), keyed by
    # the host as the browser spells it: what the card marks as who is behind it.
    owners: dict[str, str] = field(default_factory=dict)
    prefers_border: bool | None = None


def app_resource(uri: str, read: dict[str, Any], max_bytes: int = MAX_HTML_BYTES) -> AppResource:
    """Check a ``resources/read`` result (as JSON, by alias) for ``uri``, its HTML at most
    ``max_bytes``; raise ResourceRefused."""
    if not uri.startswith("ui://"):
        raise ResourceRefused(f"{uri!r} is not a ui:// resource; MCP Apps are served as ui://")
    contents = read.get("contents")
    if not isinstance(contents, list) or not contents:
        raise ResourceRefused(f"{uri!r}: the server sent no content")
    content = next((c for c in contents if isinstance(c, dict) and c.get("uri") == uri), None)
    content = content if content is not None else contents[0]
    if not isinstance(content, dict):
        raise ResourceRefused(f"{uri!r}: the content is not an object")
    mime = content.get("mimeType")
    if mime != APP_MIME_TYPE:
        raise ResourceRefused(
            f"{uri!r} is served as {mime!r}, not {APP_MIME_TYPE!r}: not an MCP app"
        )
    html = _text_of(uri, content, max_bytes)
    size = len(html.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise ResourceRefused(f"{uri!r} is {size} bytes of HTML, {over(max_bytes)}")
    meta = content.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    ui = ui if isinstance(ui, dict) else {}
    csp, refused = _csp(ui.get("csp"))
    permissions = ui.get("permissions")
    if isinstance(permissions, dict):
        for name in list(permissions)[:_MAX_DOMAINS]:
            refused.append(
                {
                    "directive": "permissions",
                    "domain": str(name)[:100],
                    "reason": _REFUSED_PERMISSIONS.get(str(name), "unknown permission"),
                }
            )
    border = ui.get("prefersBorder")
    return AppResource(
        uri, html, csp, refused, _owners(csp), border if isinstance(border, bool) else None
    )


def over(max_bytes: int) -> str:
    """The end of a refusal for size: the bound and how to raise it."""
    return (
        f"over this host's {max_bytes} ({max_bytes / 1024 / 1024:g} MiB); "
        "host.connect_mcp(..., max_html_bytes=...) allows more"
    )


def _text_of(uri: str, content: dict[str, Any], max_bytes: int) -> str:
    text = content.get("text")
    if isinstance(text, str):
        return text
    blob = content.get("blob")
    if isinstance(blob, str):
        if len(blob) > max_bytes * 4 // 3 + 4:
            raise ResourceRefused(f"{uri!r}: its blob is {over(max_bytes)}")
        try:
            return base64.b64decode(blob, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise ResourceRefused(f"{uri!r}: its blob is not base64 of UTF-8 text") from None
    raise ResourceRefused(f"{uri!r}: the content has neither text nor blob")


def _csp(declared: Any) -> tuple[dict[str, list[str]], list[dict[str, str]]]:
    csp: dict[str, list[str]] = {name: [] for name in GRANTABLE}
    refused: list[dict[str, str]] = []
    if not isinstance(declared, dict):
        return csp, refused
    for directive, domains in declared.items():
        if not isinstance(domains, list):
            continue
        for domain in domains[:_MAX_DOMAINS]:
            shown = str(domain)[:200]
            if directive in _REFUSED_DIRECTIVES:
                refused.append(
                    {
                        "directive": directive,
                        "domain": shown,
                        "reason": _REFUSED_DIRECTIVES[directive],
                    }
                )
            elif directive not in GRANTABLE:
                refused.append(
                    {
                        "directive": str(directive)[:100],
                        "domain": shown,
                        "reason": "unknown directive",
                    }
                )
            elif not isinstance(domain, str) or not _ORIGIN.fullmatch(domain.lower()):
                refused.append(
                    {
                        "directive": directive,
                        "domain": shown,
                        "reason": "not an https:// or wss:// origin (scheme, host, port)",
                    }
                )
            elif (wide := _public_wildcard(domain.lower())) is not None:
                refused.append(
                    {
                        "directive": directive,
                        "domain": shown,
                        "reason": f"a wildcard over the public suffix {wide}: it covers every "
                        "site anyone registers there, so it is never granted",
                    }
                )
            elif domain.lower() not in csp[directive]:
                csp[directive].append(domain.lower())
    return csp, refused


def _base(origin: str) -> str:
    """The origin a wildcard spans (``https://*.a.example`` -> ``https://a.example``)."""
    return origin.replace("://*.", "://", 1)


def _public_wildcard(origin: str) -> str | None:
    """The public suffix a wildcard origin (``https://*.co.uk``) spans, or None."""
    host = url_host(_base(origin))
    if "://*." not in origin or host is None:
        return None
    return host if is_public_suffix(host) else None


def _owners(csp: dict[str, list[str]]) -> dict[str, str]:
    return owners_of(_base(domain) for domains in csp.values() for domain in domains)
