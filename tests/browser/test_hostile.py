"""Every hostile surface bundle, run for real in JupyterLab.

The bundles are the project's own (tests/vectors/hostile_surfaces.py); a corpus named by
``LINEUP_EXTRA_CORPORA`` is run as well, held to the same SPECS by class (tests/vectors).

One page, one kernel, one Host for the module; a benign victim surface stays open beside each
hostile one. For every bundle the test opens it with ``agent.open``, does what its attack needs
(clicks, focus, keys), waits, and asserts the attack failed:

- 0 TCP connections, HTTP requests and UDP datagrams at the loopback canary, and no request
  from any frame other than the notebook page itself (S3);
- the page did not navigate, no popup, dialog or download, the marker planted in the page and
  its globals unchanged (S2);
- the victim received nothing and the kernel got no event for it (S4, the instance is the
  sender's frame);
- every event the host accepted from the hostile instance is one the bundle may send through
  LineUpSurface.event, and the refusals are the expected ones (U7, U9, H2, S4 rate limit);
- the page's heartbeat goes on (it never froze), and the victim still answers a click.

Rules: docs/rules.md (S2 sandbox, S3 CSP, S4 source, U7 event envelope, U9 event
names and data, L1 device abilities); docs/protocol.md H10/H11 for the frames.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Download, Page, Request, expect

from ..vectors import SKIP_EXTRA
from .canary import Canary, CanaryServer
from .conftest import hold_devices
from .hostile import (
    KERNEL_SETUP,
    PAGE_SETUP,
    PAGE_SNAPSHOT,
    RUN_CODE,
    VICTIM,
    Spec,
    class_of,
    extra_bundles,
    instance_of,
    own_bundles,
    prepare,
)
from .jupyter import JupyterServer, NotebookPage, output_text, write_notebook

NOTEBOOK = "hostile-surfaces.ipynb"
CLIPBOARD_BEFORE = "clipboard-before-hostile"
# The page's heartbeat (a 50 ms interval) must go on after a bundle ran: a surface that froze
# the page would stop it for good (an endless loop on the page's thread), and the wait below
# would time out. Its longest gap is printed, never asserted: a loaded machine was seen at
# 1 292 ms with the loop contained in its own process, so time says nothing here.
LIVE_BEATS = 5
CSP = ("csp_violation", "S3")
BLOCKED = {"csp", "origin", "net::ERR_BLOCKED_BY_CSP"}

OWN = own_bundles()
EXTRA = extra_bundles()
BUNDLES = OWN + EXTRA

# What each bundle needs and may achieve (see hostile.Spec). Absent: no clicks, 1 s, nothing
# accepted, nothing refused but CSP reports.
FULL = "a.full"
SPECS: dict[str, Spec] = {
    "control-benign": Spec(accepted=["hello"], rules="U7, U8 (positive control)"),
    "read-parent-dom": Spec(accepted=["exfil"], rules="S2"),
    "host-origin-relative-nav": Spec(clicks=[FULL], rules="S2, S3 (H10 base about:srcdoc)"),
    "a-target-top-click": Spec(clicks=[FULL], rules="S2"),
    "base-href-link": Spec(clicks=[FULL], rules="S3 (H10 first <base> wins)"),
    "form-submit": Spec(clicks=["#b1"], rules="S2, S3"),
    "history-traversal": Spec(wait=1.5, rules="S2"),
    "popups": Spec(clicks=[FULL], rules="S2"),
    "ws-sse-beacon-ping": Spec(clicks=["#p"], rules="S3"),
    "window-name-clobber": Spec(wait=1.2, rules="S2"),
    "fullscreen-pointerlock": Spec(clicks=[FULL], rules="S2, L1"),
    "clipboard": Spec(clicks=[FULL], rules="L1 (H10 execCommand deleted)"),
    "permissions": Spec(clicks=[FULL], rules="L1"),
    "download": Spec(clicks=[FULL], rules="S2"),
    "pm-wrong-namespace": Spec(refused={("invalid", "U7")}, min_refused=5, rules="U7"),
    "pm-forged-instance": Spec(refused={("invalid", "U7")}, min_refused=6, rules="S4, U7"),
    "pm-oversized": Spec(
        accepted=["size.under"],
        refused={("too_large", "U9"), ("invalid_json", "H2")},
        min_refused=4,
        rules="U9",
    ),
    "pm-non-object": Spec(
        accepted=["nonobj"],
        refused={("invalid", "U7"), ("invalid", "U9")},
        min_refused=10,
        rules="U7, U9",
    ),
    "pm-non-json": Spec(
        accepted=["nonjson.node", "nonjson.negzero"],
        refused={("invalid", "H2"), ("invalid_json", "H2"), ("invalid", "U9")},
        min_refused=12,
        rules="U9, H2",
    ),
    "pm-proto-keys": Spec(
        accepted=["constructor", "toString", "hasOwnProperty", "valueOf"],
        refused={("invalid", "H2")},
        min_refused=1,
        rules="U9, H2",
    ),
    # The shell relays a message's data, never its transfer list: a port never reaches the
    # host (checked in check_specific); a buffer in the data is not JSON (H2).
    "pm-ports-transfer": Spec(
        accepted=None, refused={("invalid", "U7"), ("invalid", "H2")}, min_refused=1, rules="U7, H2"
    ),
    "pm-flood": Spec(
        wait=2.5,
        accepted=None,
        refused={("rate_limited", "S4")},
        min_refused=1,
        rules="S4 (rate limit)",
    ),
    "pm-to-sibling": Spec(rules="S4"),
    # What it posts to its own shell is relayed as its own, and refused (U7).
    "extra-sibling-via-top-frames": Spec(
        refused={("invalid", "U7")}, rules="S4 (the victim's bridge takes only its shell's)"
    ),
    "nested-srcdoc-forge": Spec(rules="S4"),
    # A meta policy that admits no inline script (the extra corpus's: `default-src *`, no
    # 'unsafe-inline') lands in the head, before the bridge's script, and blocks it too: the
    # surface breaks itself and stays silent, and the host says so 2 s after it loaded (U4),
    # inside the test's window or after it, as the machine's load has it.
    "nested-srcdoc-relaxed-csp": Spec(refused={("invalid", "U4")}, rules="S3 (policies add up)"),
    "template-breakout": Spec(accepted=None, rules="S3, U6 (H10 scriptSafe)"),
    "focus-steal": Spec(wait=0, rules="L1, H10 (focus stays with the notebook)"),
    "extra-raw-bad-event-names": Spec(
        accepted=["a" * 64],
        refused={("invalid", "U9"), ("invalid", "H2")},
        min_refused=18,
        rules="U9, H2",
    ),
}
DOS = {"infinite-loop": "about-to-hang", "memory-bomb": "about-to-eat"}


@dataclass
class Observed:
    """Everything the browser showed during the module, appended as it happens."""

    requests: list[tuple[Request, str, bool]] = field(default_factory=list)  # frame url, main
    popups: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    navigations: list[str] = field(default_factory=list)  # of the page's main frame
    probes: list[tuple[str, str, Any]] = field(default_factory=list)  # instance, key, value
    console: list[str] = field(default_factory=list)
    crashed: list[str] = field(default_factory=list)


@dataclass
class Session:
    page: Page
    notebook: NotebookPage
    canary: Canary
    jupyter: JupyterServer
    seen: Observed
    bundles: dict[str, dict[str, Any]]

    def run(self, code: str) -> str:
        return output_text(self.page.evaluate(RUN_CODE, [NOTEBOOK, code]))

    def report(self, since: int) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.run(f"hostile_report({since})"))
        return result

    def settled_report(self, since: int, timeout: float = 10.0) -> dict[str, Any]:
        """The kernel's record once it stops growing (two equal reads 0.3 s apart)."""
        deadline = time.monotonic() + timeout
        previous = self.report(since)
        while time.monotonic() < deadline:
            self.page.wait_for_timeout(300)  # never time.sleep: frames freeze (docs/testing.md)
            current = self.report(since)
            if current["last"] == previous["last"]:
                return current
            previous = current
        return previous

    def card(self, instance_id: str) -> Any:
        return self.page.locator(f'.lineup-host .lineup-surface[data-instance-id="{instance_id}"]')

    def surface(self, instance_id: str) -> Any:
        shell = (
            f'.lineup-host .lineup-surface[data-instance-id="{instance_id}"] iframe.lineup-shell'
        )
        return self.page.frame_locator(shell).frame_locator("iframe")

    def victim_clicks(self, since: int) -> int:
        report = self.report(since)
        return sum(1 for e in report["accepted"] if e["instance"] == VICTIM)

    def victim_answers(self, since: int, timeout: float = 15.0) -> bool:
        """Click the victim's button; True once the kernel has its 'victim.click'."""
        before = self.victim_clicks(since)
        self.surface(VICTIM).locator("#b").click(timeout=timeout * 1000)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.victim_clicks(since) > before:
                return True
            self.page.wait_for_timeout(200)
        return False

    def probes(self, instance_id: str) -> dict[str, Any]:
        return {key: value for inst, key, value in self.seen.probes if inst == instance_id}

    def snapshot(self) -> dict[str, Any]:
        snap: dict[str, Any] = self.page.evaluate(PAGE_SNAPSHOT)
        snap["pages"] = len(self.page.context.pages)
        return snap


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    server = CanaryServer()
    yield server.canary
    server.stop()


@pytest.fixture(scope="module")
def session(browser: Browser, jupyter: JupyterServer, canary: Canary) -> Iterator[Session]:
    bundles = {
        b["id"]: prepare(
            b, canary_url=canary.url, canary_port=canary.http_port, stun_port=canary.udp_port
        )
        for b in BUNDLES
    }
    (jupyter.root / "hostile-bundles.json").write_text(json.dumps(list(bundles.values())))
    write_notebook(jupyter.root, NOTEBOOK, [KERNEL_SETUP])

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(60_000)
    # As the session's context (conftest.py): the devices a user may have allowed the
    # notebook's origin; a surface still gets none of them (the permissions bundle).
    hold_devices(context, jupyter, "clipboard-read", "clipboard-write")
    seen = Observed()
    context.on("page", lambda p: seen.popups.append(p.url))

    def on_request(request: Request) -> None:
        try:
            frame = request.frame
            seen.requests.append((request, frame.url, frame.parent_frame is None))
        except Exception:  # a worker's request has no frame: never the notebook page's own
            seen.requests.append((request, "(worker)", False))

    context.on("request", on_request)
    page = context.new_page()

    def on_console(message: ConsoleMessage) -> None:
        text = message.text
        if text.startswith("PROBE "):
            try:
                inst, key, value = json.loads(text[6:])
            except ValueError:
                inst, key, value = "?", "?", text
            seen.probes.append((inst, key, value))
        else:
            seen.console.append(f"{message.type}: {text}"[:300])

    def on_dialog(dialog: Dialog) -> None:
        seen.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def on_download(download: Download) -> None:
        seen.downloads.append(download.suggested_filename)
        download.cancel()

    page.on("console", on_console)
    page.on("dialog", on_dialog)
    page.on("download", on_download)
    page.on("crash", lambda p: seen.crashed.append("page crashed"))
    page.on(
        "framenavigated",
        lambda f: seen.navigations.append(f.url) if f.parent_frame is None else None,
    )
    # A first history entry on the server, so a surface sending the page "back" would show.
    page.goto(f"{jupyter.url}/api/status?start")
    notebook = NotebookPage(page, jupyter, NOTEBOOK, "lab").open()
    notebook.run_all()
    page.evaluate(PAGE_SETUP)
    s = Session(page, notebook, canary, jupyter, seen, bundles)
    expect(s.surface(VICTIM).locator("#b")).to_be_visible()
    assert s.victim_answers(0), "the victim surface does not reach the kernel before any attack"
    yield s
    context.close()
    jupyter.shutdown_kernels()


@dataclass
class Baseline:
    since: int
    snap: dict[str, Any]
    canary: tuple[int, int, int]
    requests: int
    navigations: int
    popups: int
    dialogs: int
    downloads: int
    crashed: int
    beats: int


def begin(s: Session, bundle_id: str) -> Baseline:
    s.page.evaluate(
        "() => Object.assign(window.__hb, { maxGap: 0, gaps: [], last: performance.now() })"
    )
    base = Baseline(
        since=0,
        snap=s.snapshot(),
        canary=(len(s.canary.connections), len(s.canary.requests), len(s.canary.datagrams)),
        requests=len(s.seen.requests),
        navigations=len(s.seen.navigations),
        popups=len(s.seen.popups),
        dialogs=len(s.seen.dialogs),
        downloads=len(s.seen.downloads),
        crashed=len(s.seen.crashed),
        beats=s.page.evaluate("() => window.__hb.beats"),
    )
    base.since = int(s.run(f"hostile_open({bundle_id!r})").strip())
    expect(s.card(instance_of(bundle_id)).locator("iframe.lineup-shell")).to_have_count(1)
    return base


def assert_contained(s: Session, bundle_id: str, base: Baseline, report: dict[str, Any]) -> None:
    """Everything the issue lists, for any bundle."""
    inst = instance_of(bundle_id)
    # Let late attempts (timers up to 600 ms in the bundles) reach the canary if they can.
    s.canary.wait_for(lambda: False, timeout=0.3)
    c = s.canary
    jupyter = s.jupyter.url
    # What the browser itself says: requests from a surface (or anywhere but the notebook's
    # server), with how they ended. CSP-blocked ones never leave the browser.
    tried = [
        (request.url[:120], frame, request.failure)
        for request, frame, main in s.seen.requests[base.requests :]
        if not main or not request.url.startswith(jupyter)
        if not request.url.startswith(("data:", "blob:", "about:"))
    ]
    hits = (
        [(r.method, r.path) for r in c.requests[base.canary[1] :]],
        c.datagrams[base.canary[2] :],
    )
    assert hits == ([], []), (
        f"{bundle_id}: reached the canary (HTTP requests, UDP datagrams): {hits}; the "
        f"browser's requests from surfaces (url, frame, failure): {tried}"
    )
    # Chromium's reasons for blocking before sending: the CSP, or a cross-origin document
    # where only a same-document reference is allowed (CSS filter url()).
    leaks = [entry for entry in tried if entry[2] not in BLOCKED]
    assert leaks == [], f"{bundle_id}: requests from a surface not blocked: {leaks}"
    assert s.seen.navigations[base.navigations :] == [], f"{bundle_id}: the page navigated"
    assert s.seen.popups[base.popups :] == [], f"{bundle_id}: a popup opened"
    assert s.seen.dialogs[base.dialogs :] == [], f"{bundle_id}: a dialog showed"
    assert s.seen.downloads[base.downloads :] == [], f"{bundle_id}: a download started"
    assert s.seen.crashed[base.crashed :] == [], f"{bundle_id}: the notebook page crashed"
    snap = s.snapshot()
    assert snap == base.snap, f"{bundle_id}: the notebook page changed"
    s.page.wait_for_function("(n) => window.__hb.beats >= n", arg=base.beats + LIVE_BEATS)
    gap = s.page.evaluate("() => window.__hb.maxGap")
    print(f"[{bundle_id}] the notebook page's longest heartbeat gap: {gap:.0f} ms")

    # S4: nothing for or from the victim but our own clicks; no refusal filed against it.
    victim = [e for e in report["accepted"] if e["instance"] == VICTIM]
    assert all(e["event"] == "victim.click" for e in victim), f"forged victim events: {victim}"
    assert [r for r in report["refused"] if r["instance"] == VICTIM] == []
    others = [e for e in report["accepted"] if e["instance"] not in (VICTIM, inst)]
    assert others == [], f"events for instances never opened: {others}"
    assert not any(e["secret"] for e in report["accepted"]), "an event carried TOPSECRET"
    assert report["problems"] == [], report["problems"]
    log = s.surface(VICTIM).locator("#log")
    expect(log).to_have_text("", timeout=5000)


def assert_no_connection(s: Session, bundle_id: str, base: Baseline) -> None:
    """Checked last, so a bare TCP connect is reported after every other check has passed."""
    connections = s.canary.connections[base.canary[0] :]
    assert connections == [], (
        f"{bundle_id}: {len(connections)} TCP connection(s) reached the canary {connections} "
        "with no HTTP request on them and no request visible to the browser's network log"
    )


def close(s: Session, inst: str) -> None:
    """The hostile surface is closed and its card gone, whatever the test found."""
    s.run(f"hostile_close({inst!r})")
    expect(s.card(inst)).to_have_count(0, timeout=10_000)


def click(s: Session, inst: str, selector: str) -> None:
    s.surface(inst).locator(selector).first.click(timeout=10_000)


def hostile_events(report: dict[str, Any], inst: str) -> list[dict[str, Any]]:
    return [e for e in report["accepted"] if e["instance"] == inst]


def check_kernel(bundle_id: str, spec: Spec, report: dict[str, Any]) -> None:
    inst = instance_of(bundle_id)
    events = hostile_events(report, inst)
    if spec.accepted is not None:
        assert [e["event"] for e in events] == spec.accepted, (
            f"{bundle_id}: the host accepted {[e['event'] for e in events]}"
        )
    refused = [(r["code"], r["rule"]) for r in report["refused"] if r["instance"] != VICTIM]
    unexpected = [r for r in refused if r not in spec.refused and r != CSP]
    assert unexpected == [], f"{bundle_id}: unexpected refusals {unexpected}"
    wanted = [r for r in refused if r != CSP]
    assert len(wanted) >= spec.min_refused, (
        f"{bundle_id}: {len(wanted)} refusals, expected at least {spec.min_refused}: "
        f"{report['refused']}"
    )


# Measured without the bridge's focus guard (Chromium 156 headless): a surface's focus() on
# a 50 ms timer, with no click, took every key typed into the notebook's focused input
# (docs/security.md: `inert`, parent focus listeners and the focus-without-user-activation
# policy do not stop it). The bridge lets focus() work only in a surface that already has
# focus; focus-steal is now an ordinary test that the attack fails.
RESIDUAL: dict[str, str] = {}
# Measured here: a navigation the shell's CSP blocks, and a nested frame the bridge removes,
# still make Chromium open a TCP connection to the target first. No request and no byte of
# the surface's data is sent on it (the canary records none), but the target, port and timing
# are the surface's choice. Documented in docs/security.md as a residual risk until the host
# can stop the connect itself.
_CONNECT = (
    "residual risk (docs/security.md): Chromium opened 1 bare TCP connection to the canary "
    "before CSP blocked the {what}; 0 requests, 0 bytes of data"
)
for _bundle, _what in (
    ("meta-refresh-self", "meta refresh"),
    ("location-self-exfil", "self-navigation"),
    ("window-name-carrier", "self-navigation"),
    ("nested-iframe-remote", "nested remote frame"),
):
    RESIDUAL[_bundle] = _CONNECT.format(what=_what)
PLAIN = [
    pytest.param(b["id"], marks=pytest.mark.xfail(strict=True, reason=RESIDUAL[class_of(b["id"])]))
    if class_of(b["id"]) in RESIDUAL
    else b["id"]
    for b in BUNDLES
    if class_of(b["id"]) not in DOS
]
# Without LINEUP_EXTRA_CORPORA the run says so: one skipped test, with the reason.
if not EXTRA:
    PLAIN.append(pytest.param("corpus-*", marks=SKIP_EXTRA))


@pytest.mark.parametrize("bundle_id", PLAIN)
def test_hostile_bundle_is_contained(session: Session, bundle_id: str) -> None:
    """S2 (sandbox="allow-scripts" twice), S3 (CSP, shell frame-src 'none', base
    about:srcdoc, WebRTC and nested frames removed), S4 (the instance is the frame), U7 and U9
    (envelope, names, data under 16 KiB), L1 (no device abilities): the bundle gets nothing
    out, changes nothing outside its frame, and only what it may send is accepted."""
    s = session
    spec = SPECS.get(class_of(bundle_id), Spec())
    inst = instance_of(bundle_id)
    clipboard = class_of(bundle_id) == "clipboard"
    if clipboard:
        s.page.bring_to_front()
        s.page.evaluate(f"() => navigator.clipboard.writeText({CLIPBOARD_BEFORE!r})")
    base = begin(s, bundle_id)
    try:
        attack(s, bundle_id, spec, base, clipboard)
        assert s.victim_answers(base.since), "the victim surface no longer reaches the kernel"
        assert_no_connection(s, bundle_id, base)
    finally:
        close(s, inst)


def attack(s: Session, bundle_id: str, spec: Spec, base: Baseline, clipboard: bool) -> None:
    inst = instance_of(bundle_id)
    if class_of(bundle_id) == "focus-steal":
        typed = focus_steal(s, inst)
    else:
        if spec.clicks or spec.wait:
            s.surface(inst).locator(":root").wait_for(state="attached", timeout=15_000)
        for selector in spec.clicks:
            click(s, inst, selector)
        s.page.wait_for_timeout(spec.wait * 1000)
    report = s.settled_report(base.since)
    mine = hostile_events(report, inst)
    print(
        f"\n[{bundle_id}] accepted={[e['event'][:20] for e in mine][:8]} (n={len(mine)}) "
        f"refused={sorted(Counter((r['code'], r['rule']) for r in report['refused']).items())} "
        f"probes={json.dumps(s.probes(inst))[:300]}"
    )
    assert_contained(s, bundle_id, base, report)
    check_kernel(bundle_id, spec, report)
    check_specific(s, bundle_id, report)
    if clipboard:
        s.page.bring_to_front()
        now = s.page.evaluate("() => navigator.clipboard.readText()")
        assert now == CLIPBOARD_BEFORE, f"the clipboard was changed to {now!r}"
    if class_of(bundle_id) == "focus-steal":
        value = s.page.evaluate("() => document.getElementById('hostile-keys').value")
        probes = s.probes(inst)
        assert value == typed and "keys" not in probes, (
            f"focus stolen: the notebook's input got {value!r} of {typed!r}; the surface "
            f"logged keys {probes.get('keys')!r}"
        )


def focus_steal(s: Session, inst: str) -> str:
    """Keep the notebook's own input focused and type while the surface tries to take focus."""
    typed = ""
    box = s.page.locator("#hostile-keys")
    box.evaluate("(input) => { input.value = ''; }")
    box.focus()
    for ch in "notebook":
        time.sleep(0.35)  # the bundle refocuses itself every 50 ms for 3 s
        s.page.keyboard.type(ch)
        typed += ch
    time.sleep(0.3)
    return typed


def check_specific(s: Session, bundle_id: str, report: dict[str, Any]) -> None:
    """What the bundle itself reports (its probes) and what it would have achieved."""
    inst = instance_of(bundle_id)
    probes = s.probes(inst)
    events = hostile_events(report, inst)
    kind = class_of(bundle_id)
    if kind == "control-benign":
        assert events[0]["data"] == {"x": 1, "s": "ok"}
    elif kind == "read-parent-dom":
        read = events[0]["data"]
        for key in ("parentBody", "topBody", "parentSecretGlobal", "parentLocationHref"):
            assert read[key] == "SecurityError", read
        assert "TOPSECRET" not in json.dumps(read)
    elif kind == "write-parent-dom":
        assert "write" in probes, "the bundle did not run"
        assert "NO ERROR" not in json.dumps(probes["write"]), probes
    elif kind == "storage-cookies":
        assert "storage" in probes, "the bundle did not run"
        text = json.dumps(probes)
        for success in ("OPENED", "GRANTED", "NO ERROR"):
            assert success not in text, probes
    elif kind == "workers":
        assert "REGISTERED" not in json.dumps(probes), probes
    elif kind == "pm-ports-transfer":
        assert "port" not in probes, probes  # the host never answered on a smuggled port
        assert all(e["data"] == {} for e in events), events  # and no port reached the kernel
    elif kind == "pm-flood":
        flood = [e for e in events if e["event"] == "flood"]
        assert [e["event"] for e in events] == ["flood"] * len(flood)
        # 100 in a burst, then 50 a second for the ~2 s of the flood (with slack).
        assert 50 <= len(flood) <= 100 + 50 * 4, len(flood)
    elif kind == "template-breakout":
        names = [e["event"] for e in events]
        assert "tpl.js-normal" in names, names
        assert "tpl.css-breakout" not in names and "tpl.js-breakout" not in names, names
        assert set(names) <= {"tpl.js-normal", "tpl.html", "tpl.html-quote"}, names
    elif kind == "clipboard":
        assert probes.get("exec") == "TypeError", probes  # execCommand is gone (H10)
        assert probes.get("cw") != "WRITTEN" and not str(probes.get("cr", "")).startswith("READ")
    elif kind == "fullscreen-pointerlock":
        text = json.dumps(probes)
        assert "FULLSCREEN" not in text and "LOCKED" not in text, probes
    elif kind == "permissions":
        granted = [k for k, v in probes.items() if str(v).startswith("OK") and v != "OK denied"]
        assert granted == [], json.dumps(probes)
        assert "notif-show" not in probes or probes["notif-show"] != "SHOWN", probes
    elif kind == "dialog-spam":
        assert probes.get("dlg") == "done", probes
    elif kind == "webrtc-stun-turn":
        assert "ice" not in probes, probes  # no candidate gathered
        assert str(probes.get("webrtc", "")).startswith("TypeError"), probes
    elif kind == "pm-bad-event-names":
        # LineUpSurface.event refused the first bad name in the sender: nothing was posted
        # (the raw variant, extra-raw-bad-event-names, shows the host's own refusals).
        assert "must match" in str(probes.get("uncaught")), probes
    elif kind == "pm-non-json":
        # The bundle's script runs in <head> (it has no html), so document.body is null: {n:
        # null} is valid JSON. -0 is the number 0. Nothing else got through.
        assert [e["data"] for e in events] == [{"n": None}, {"z": 0}], events
    elif kind == "extra-sibling-via-top-frames":
        assert probes.get("reached", 0) >= 1, probes  # the victim's frame got the forgeries
    elif kind == "pm-proto-keys":
        assert s.snapshot()["polluted"] == ["undefined"] * 3


# Debian's Chromium 156: the memory bomb crashed the whole notebook page in 2 runs of 2 on
# 2026-12-02 (a loaded machine) and was contained in 7 of 7 on 2026-12-03. Not strict: it
# passes when contained. Residual risk in docs/security.md until the host can contain it.
_BOMB_CRASHES_THE_PAGE = pytest.mark.xfail(
    reason="residual risk (docs/security.md): Chromium 156 may crash the notebook page when a "
    "surface exhausts its memory",
    strict=False,
)


@pytest.mark.parametrize(
    "bundle_id",
    [
        pytest.param(
            b["id"], marks=_BOMB_CRASHES_THE_PAGE if class_of(b["id"]) == "memory-bomb" else ()
        )
        for b in BUNDLES
        if class_of(b["id"]) in DOS
    ],
)
def test_stuck_surface_is_stopped_and_frees_the_others(session: Session, bundle_id: str) -> None:
    """H11 ping/pong: a surface in an endless loop (or eating memory until its renderer dies)
    is marked as not responding after 5 s of silence, with a Stop button; Stop closes it
    (the agent hears 'unresponsive' and a user close) and the victim, which shares the stuck
    renderer, comes back and answers. The notebook page stays responsive throughout; no
    other contact (S2, S3). Never touches the stuck frames, only the page and the kernel."""
    s = session
    inst = instance_of(bundle_id)
    base = begin(s, bundle_id)
    try:
        stuck(s, bundle_id, base)
    finally:
        close(s, inst)


def stuck(s: Session, bundle_id: str, base: Baseline) -> None:
    inst = instance_of(bundle_id)
    # The kernel hears the bundle's last word before it hangs.
    deadline = time.monotonic() + 15
    last_word = DOS[class_of(bundle_id)]
    while not any(e["event"] == last_word for e in hostile_events(s.report(base.since), inst)):
        assert time.monotonic() < deadline, "the bundle never started"
        s.page.wait_for_timeout(300)
    card = s.card(inst)
    stop = card.locator(".lineup-stalled button.lineup-stop")
    expect(stop).to_be_visible(timeout=30_000)
    stalled_at = s.page.evaluate(
        "() => [...document.querySelectorAll('.lineup-surface:has(.lineup-stalled)')]"
        ".map((c) => c.dataset.instanceId)"
    )
    stop.click()
    expect(card).to_have_count(0, timeout=15_000)
    expect(s.card(VICTIM).locator(".lineup-stalled")).to_have_count(0, timeout=20_000)
    assert s.victim_answers(base.since, timeout=30), (
        f"the victim does not answer after Stop (stalled cards were {stalled_at})"
    )
    report = s.settled_report(base.since)
    assert [e["event"] for e in hostile_events(report, inst)] == [last_word, "close"]
    hostile_refusals = [(r["code"], r["rule"]) for r in report["refused"] if r["instance"] == inst]
    assert ("unresponsive", "S4") in hostile_refusals, report["refused"]
    assert inst not in report["open"]
    print(
        f"\n[{bundle_id}] stalled cards {stalled_at}; page gaps over 250 ms:",
        s.page.evaluate("() => window.__hb.gaps"),
    )
    assert_contained(s, bundle_id, base, report)
    assert_no_connection(s, bundle_id, base)
