"""What this host accepts of a ui:// resource (lineup_jupyter/mcp/_resources.py): checked
before anything reaches a page. Pure: the read result as a server's JSON."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from lineup_jupyter.mcp._resources import (
    APP_MIME_TYPE,
    MAX_HTML_BYTES,
    ResourceRefused,
    app_resource,
)

URI = "ui://demo/app.html"


def read(ui: dict[str, Any] | None = None, **content: Any) -> dict[str, Any]:
    item = {"uri": URI, "mimeType": APP_MIME_TYPE, "text": "<p>hi</p>", **content}
    if ui is not None:
        item["_meta"] = {"ui": ui}
    return {"contents": [item]}


def test_an_app_resource_is_kept_with_its_csp_and_border() -> None:
    csp = {"connectDomains": ["https://API.example.com", "wss://live.example.com:8443"]}
    resource = app_resource(URI, read({"csp": csp, "prefersBorder": False}))
    assert resource.html == "<p>hi</p>"
    assert resource.csp == {
        "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
        "resourceDomains": [],
    }
    assert (resource.refused_csp, resource.prefers_border) == ([], False)


@pytest.mark.parametrize(
    "domain",
    [
        "https://a.example; script-src *",  # a second directive, smuggled
        "https://a.example 'unsafe-inline'",
        "http://a.example",  # not an encrypted origin
        "https://a.example/path",
        "*",
        "https://*",
        "javascript:alert(1)",
        "https://a.example\n",
    ],
)
def test_a_domain_that_is_not_one_origin_never_reaches_a_csp(domain: str) -> None:
    resource = app_resource(URI, read({"csp": {"resourceDomains": [domain]}}))
    assert resource.csp["resourceDomains"] == []
    (refused,) = resource.refused_csp
    assert refused["directive"] == "resourceDomains" and "origin" in refused["reason"]


@pytest.mark.parametrize(
    "wildcard",
    [
        "https://*.com",
        "https://*.co.uk",
        "https://*.github.io",
        "https://*.s3.amazonaws.com",
        "wss://*.firebaseapp.com",
        "https://*.blob.core.windows.net",
        "https://*.xn--p1ai",  # .рф, as punycode
    ],
)
def test_a_wildcard_over_a_public_suffix_is_refused(wildcard: str) -> None:
    """H31, issue 22: `https://*.com` was offered as "wildcard.com (and every subdomain)" and,
    once allowed, let the app reach a host of the attacker's choosing."""
    resource = app_resource(URI, read({"csp": {"connectDomains": [wildcard]}}))
    assert resource.csp["connectDomains"] == []
    (refused,) = resource.refused_csp
    assert "public suffix" in refused["reason"] and refused["domain"] == wildcard


def test_a_wildcard_over_a_registrable_domain_is_kept_with_its_owner() -> None:
    """The control: a wildcard over one site's name is grantable, and the card is told who
    owns each domain by the Public Suffix List (not by the last two labels)."""
    domains = [
        "https://*.example.co.uk",
        "https://evil-corp.s3.amazonaws.com",
        "https://*.tiles.example.com",
        "https://user.github.io",
    ]
    resource = app_resource(URI, read({"csp": {"resourceDomains": domains}}))
    assert resource.csp["resourceDomains"] == domains and resource.refused_csp == []
    assert resource.owners == {
        "example.co.uk": "example.co.uk",
        "evil-corp.s3.amazonaws.com": "evil-corp.s3.amazonaws.com",
        "tiles.example.com": "example.com",
        "user.github.io": "user.github.io",
    }


def test_frame_and_base_domains_and_permissions_are_refused_with_reasons() -> None:
    ui = {
        "csp": {"frameDomains": ["https://f.example"], "baseUriDomains": ["https://b.example"]},
        "permissions": {"camera": {}, "clipboardWrite": {}},
    }
    refused = app_resource(URI, read(ui)).refused_csp
    assert [(r["directive"], r["domain"]) for r in refused] == [
        ("frameDomains", "https://f.example"),
        ("baseUriDomains", "https://b.example"),
        ("permissions", "camera"),
        ("permissions", "clipboardWrite"),
    ]
    assert all(r["reason"] for r in refused)


def test_each_permission_is_refused_with_its_own_reason() -> None:
    """L1: MCP Apps' four permissions, each refused for its own reason (docs/mcp-apps.md, "Device
    permissions"): the camera and microphone because the browser gives none to an opaque
    origin (tests/browser/test_mcp_apps.py test_no_app_frame_gets_a_device), the rest by this
    host's rule; a name the spec does not have is unknown; at most 32 are listed."""
    names = ["camera", "microphone", "geolocation", "clipboardWrite", "teleport"]
    ui = {"permissions": {name: {} for name in names + [f"p{i}" for i in range(100)]}}
    refused = app_resource(URI, read(ui)).refused_csp
    reasons = {r["domain"]: r["reason"] for r in refused}
    assert len(refused) == 32 and list(reasons)[:5] == names
    assert reasons["camera"] == reasons["microphone"]
    assert "opaque origin" in reasons["microphone"]
    assert "location" in reasons["geolocation"]
    assert "clipboard" in reasons["clipboardWrite"]
    assert reasons["teleport"] == "unknown permission"


def test_a_blob_is_base64_of_utf8() -> None:
    blob = base64.b64encode("<p>é</p>".encode()).decode()
    assert app_resource(URI, read(text=None, blob=blob)).html == "<p>é</p>"
    with pytest.raises(ResourceRefused, match="not base64 of UTF-8"):
        app_resource(URI, read(text=None, blob="@@@"))


@pytest.mark.parametrize(
    ("uri", "result", "why"),
    [
        ("https://a.example/app.html", read(), "not a ui:// resource"),
        (URI, read(mimeType="text/html"), "served as 'text/html'"),
        (URI, read(text="x" * (MAX_HTML_BYTES + 1)), "over this host's"),
        (URI, {"contents": []}, "no content"),
        (URI, read(text=None), "neither text nor blob"),
    ],
)
def test_what_is_not_an_app_is_refused_with_the_reason(
    uri: str, result: dict[str, Any], why: str
) -> None:
    with pytest.raises(ResourceRefused, match=why):
        app_resource(uri, result)


def test_the_limit_is_the_html_s_bytes_not_its_characters() -> None:
    """The control at the edge: exactly the bound (8 MiB) of UTF-8 is shown; one byte more is
    not, and a bound the user set is the one that holds."""
    assert app_resource(URI, read(text="x" * MAX_HTML_BYTES)).html
    with pytest.raises(ResourceRefused):
        app_resource(URI, read(text="é" * (MAX_HTML_BYTES // 2) + "x"))
    assert app_resource(URI, read(text="x" * 1000), max_bytes=1000).html
    with pytest.raises(ResourceRefused, match=r"1001 bytes of HTML, over this host's 1000"):
        app_resource(URI, read(text="x" * 1001), max_bytes=1000)
