"""Helpers for the containment tests (test_containment_*.py): a JupyterLab session with the
host and a victim surface (the kernel code of hostile.py), our own hostile bundles, and control
pages: the same bundle in the host's real frames built by js/frames.js, with one mechanism
taken out, so each test shows its detector sees the escape when containment is off.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, expect

from .canary import Canary
from .hostile import KERNEL_SETUP, RUN_CODE, VICTIM, instance_of, prepare
from .jupyter import UI, JupyterServer, NotebookPage, output_text, write_notebook

REPO_JS = Path(__file__).resolve().parents[2] / "js"

# Builds the shell document of a bundle exactly as the host view does (js/frames.js).
_BUILD = """
import { readFileSync } from "node:fs";
import { shellDocument, surfaceDocument } from "./frames.js";
const bundles = JSON.parse(readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(bundles.map((b) => shellDocument(surfaceDocument(b)))));
"""

# The shell document around an MCP app whose one script is given, built by js/mcp_frames.js as
# the host view does for an app with no grants: the app's policy (mcpCsp), our first script
# and the app's with the guard first, each admitted by its hash, in the shell
# (mcpShellDocument). The page parses an app's own HTML first (DOMParser, which node lacks);
# this app's HTML is written here.
_BUILD_MCP = """
import { readFileSync } from "node:fs";
import { FIRST_SCRIPT, guarded, mcpCsp, mcpShellDocument } from "./mcp_frames.js";
import { cspHash } from "./sha256.js";
const { body, script } = JSON.parse(readFileSync(0, "utf8"));
const ours = guarded(script);
const hashes = [cspHash(FIRST_SCRIPT), cspHash(ours)];
const sources = { connectDomains: [], resourceDomains: [] };
const srcdoc =
  `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" ` +
  `content="${mcpCsp(sources, hashes)}"><script>${FIRST_SCRIPT}</script></head>` +
  `<body>${body}<script>${ours}</script></body></html>`;
const app = { srcdoc, hashes, scripts: 2, sources, invalid: [] };
process.stdout.write(JSON.stringify(mcpShellDocument(app, 100, "control")));
"""


def _node(build: str, data: object) -> Any:
    """What a build script run by node in js/ writes, as JSON."""
    result = subprocess.run(
        ["node", "--input-type=module", "-e", build],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        cwd=REPO_JS,
        check=True,
    )
    return json.loads(result.stdout)


def shell_documents(bundles: list[dict[str, Any]]) -> list[str]:
    """The host's shell srcdoc for each bundle, from js/frames.js run by node."""
    documents: list[str] = _node(_BUILD, bundles)
    return documents


def mcp_shell_document(body: str, script: str) -> str:
    """The host's shell srcdoc around an MCP app of this body and one script (js/mcp_frames.js
    run by node)."""
    document: str = _node(_BUILD_MCP, {"body": body, "script": script})
    return document


# What each mechanism is in the built shell document, and the same document without it. A
# replacement must match (else the control would prove nothing): see ``without``.
_HASHED = re.compile(r"script-src [^;\"]*")
# Scripts run unchecked when the policy says 'unsafe-inline', as before (S3's baseline).
OFF_HASH = "hash CSP"
OFF_GATE = "shell gate"
OFF_MESSAGE_GUARD = "message guard"
OFF_COPY_GUARD = "copy guard"
OFF_FILE_GUARD = "file guard"
OFF_DROP_GUARD = "drop guard"
OFF_WEBRTC_GUARD = "WebRTC guard"
_EDITS = {
    OFF_GATE: ("if (larger(event.data, config.maxChars))", "if (false)"),
    OFF_MESSAGE_GUARD: ("source !== window) apply(stopAll, event, [])", "false) void 0"),
    OFF_COPY_GUARD: ("listen(window, type, (event) => apply(stopAll, event, []))", "void 0"),
    OFF_FILE_GUARD: ("if (!isFileInput(apply(composedPath, event, [])[0])) return;", "return;"),
    OFF_DROP_GUARD: ("if (carriesFiles(dragData, event))", "if (false)"),
    OFF_WEBRTC_GUARD: ("delete win[name];", "continue;"),
}


def without(document: str, *mechanisms: str) -> str:
    """The shell document with these mechanisms taken out. Any edit changes the one script, so
    its hash no longer matches: every control also runs under script-src 'unsafe-inline'."""
    for mechanism in mechanisms:
        if mechanism == OFF_HASH:
            continue
        old, new = _EDITS[mechanism]
        assert old in document, f"{mechanism}: {old!r} is not in the built document"
        document = document.replace(old, new)
    assert _HASHED.search(document), "no script-src in the built document"
    return _HASHED.sub("script-src 'unsafe-inline'", document)


# How many values a message holds (each array item, member and nested value one), counted up
# to a million: what the page's main thread paid to deserialize it, in a unit that does not
# depend on the machine's load.
WEIGH = """(data) => {
  let n = 0;
  const todo = [data];
  while (todo.length > 0 && n < 1000000) {
    const value = todo.pop();
    n += 1;
    if (value === null || typeof value !== 'object') continue;
    for (const key of Object.keys(value)) todo.push(value[key]);
  }
  return n;
}"""


# A page with one shell frame (a control): records what reaches the page from it, and its
# longest task.
CONTROL_PAGE = """([doc, allow]) => {
  window.__got = [];
  window.__heaviest = 0;
  window.__longest = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
  }).observe({ type: 'longtask', buffered: true });
  window.addEventListener('message', (e) => {
    if (e.source !== document.getElementById('shell').contentWindow) return;
    const d = e.data;
    window.__got.push(typeof d === 'object' && d ? String(d.type) : typeof d);
    window.__heaviest = Math.max(window.__heaviest, (WEIGH)(d));
  });
  const f = document.createElement('iframe');
  f.id = 'shell';
  f.setAttribute('sandbox', 'allow-scripts');
  f.setAttribute('referrerpolicy', 'no-referrer');
  if (allow !== null) f.setAttribute('allow', allow);
  f.style = 'width: 600px; height: 400px; border: 0';
  f.srcdoc = doc;
  document.body.append(f);
}""".replace("(WEIGH)", f"({WEIGH})")


@dataclass
class Seen:
    probes: list[tuple[str, str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # file choosers that opened

    def of(self, instance: str) -> dict[str, Any]:
        return {key: value for inst, key, value in self.probes if inst == instance}


def watch(page: Page, seen: Seen) -> None:
    """Probes (console lines 'PROBE [instance, key, value]' from any frame), file choosers."""

    def on_console(message: ConsoleMessage) -> None:
        if message.text.startswith("PROBE "):
            try:
                inst, key, value = json.loads(message.text[6:])
            except ValueError:
                return
            seen.probes.append((inst, key, value))

    page.on("console", on_console)
    page.on("filechooser", lambda chooser: seen.files.append(chooser.element.evaluate("e => e.id")))


def control_page(
    context: BrowserContext, jupyter: JupyterServer, seen: Seen, doc: str, allow: str | None = None
) -> Page:
    """A page of the notebook server's origin (so clipboard permissions apply) holding one
    shell frame built from ``doc`` (as the host's, with no ``allow`` attribute unless given).
    The page itself is fulfilled by Playwright: the server's own pages carry a CSP, which
    srcdoc frames would inherit."""
    page = context.new_page()
    watch(page, seen)
    url = f"{jupyter.url}/lineup-control"
    page.route(url, lambda route: route.fulfill(body="<!doctype html><body></body>"))
    page.goto(url)
    page.evaluate(CONTROL_PAGE, [doc, allow])
    return page


def control_surface(page: Page) -> Any:
    return page.frame_locator("#shell").frame_locator("iframe")


# The notebook page of the session: its longest task since the last reset, by the browser's
# own Long Tasks API (a task of the page's main thread over 50 ms), printed for information;
# and the heaviest message that reached the page (every message, before any listener of the
# page's own), which is what a test asserts: time depends on the machine, a count does not.
LONGTASKS = """() => {
  window.__longest = 0;
  window.__heaviest = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
  }).observe({ type: 'longtask' });
  addEventListener('message', (e) => {
    window.__heaviest = Math.max(window.__heaviest, (WEIGH)(e.data));
  }, { capture: true });
}""".replace("(WEIGH)", f"({WEIGH})")


@dataclass
class Lab:
    """One JupyterLab page, one kernel with a Host, a victim surface, and our bundles."""

    page: Page
    notebook: str
    canary: Canary
    jupyter: JupyterServer
    seen: Seen
    bundles: dict[str, dict[str, Any]]

    def run(self, code: str) -> str:
        return output_text(self.page.evaluate(RUN_CODE, [self.notebook, code]))

    def open(self, bundle_id: str) -> int:
        since = int(self.run(f"hostile_open({bundle_id!r})").strip())
        expect(self.card(instance_of(bundle_id)).locator("iframe.lineup-shell")).to_have_count(1)
        return since

    def close(self, bundle_id: str) -> None:
        inst = instance_of(bundle_id)
        self.run(f"hostile_close({inst!r})")
        expect(self.card(inst)).to_have_count(0, timeout=10_000)

    def report(self, since: int) -> dict[str, Any]:
        result: dict[str, Any] = json.loads(self.run(f"hostile_report({since})"))
        return result

    def settled(self, since: int) -> dict[str, Any]:
        """The kernel's record once it stops growing (two equal reads 300 ms apart)."""
        previous = self.report(since)
        for _ in range(40):
            self.page.wait_for_timeout(300)
            current = self.report(since)
            if current["last"] == previous["last"]:
                return current
            previous = current
        return previous

    def card(self, instance_id: str) -> Any:
        return self.page.locator(f'.lineup-host .lineup-surface[data-instance-id="{instance_id}"]')

    def shell(self, instance_id: str) -> Any:
        """The host-owned shell frame's element in the notebook page."""
        return self.page.locator(
            f'.lineup-host .lineup-surface[data-instance-id="{instance_id}"] iframe.lineup-shell'
        )

    def surface(self, instance_id: str) -> Any:
        return self.shell(instance_id).content_frame.frame_locator("iframe")

    def victim_log(self) -> str:
        text: str = self.surface(VICTIM).locator("#log").inner_text()
        return text


def lab_session(
    browser: Browser,
    jupyter: JupyterServer,
    canary: Canary,
    bundles: list[dict[str, Any]],
    name: str,
    ui: UI = "lab",
) -> Iterator[Lab]:
    """A module's session (a generator for a module-scoped fixture), in JupyterLab or, with
    ``ui="notebook"``, Notebook 7."""
    prepared = {
        b["id"]: prepare(
            b, canary_url=canary.url, canary_port=canary.http_port, stun_port=canary.udp_port
        )
        for b in bundles
    }
    data = f"{name}-bundles.json"
    (jupyter.root / data).write_text(json.dumps(list(prepared.values())))
    notebook = f"{name}.ipynb"
    write_notebook(jupyter.root, notebook, [KERNEL_SETUP.replace("hostile-bundles.json", data)])
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(60_000)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=jupyter.url)
    page = context.new_page()
    seen = Seen()
    watch(page, seen)
    NotebookPage(page, jupyter, notebook, ui).open().run_all()
    lab = Lab(page, notebook, canary, jupyter, seen, prepared)
    expect(lab.surface(VICTIM).locator("#b")).to_be_visible()
    page.evaluate(LONGTASKS)
    yield lab
    context.close()
    jupyter.shutdown_kernels()


def filled(lab: Lab, bundle: dict[str, Any]) -> dict[str, Any]:
    """A bundle's prepared form (placeholders filled, probe first), for a control page."""
    return lab.bundles[bundle["id"]]


def refusals(report: dict[str, Any], inst: str) -> list[tuple[str, str]]:
    return [(r["code"], r["rule"]) for r in report["refused"] if r["instance"] == inst]
