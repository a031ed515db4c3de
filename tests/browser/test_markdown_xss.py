"""Every XSS vector, as agent Markdown and as agent text, drawn into a real JupyterLab page and
poked: 0 script executions, 0 navigations, 0 popups, 0 requests (S6, H15, L2).

The vectors are the project's own (tests/vectors/xss.py and markdown.py); the extra corpora
named by ``LINEUP_EXTRA_CORPORA`` (docs/testing.md) are a second, optional run. Detection:

- an init script in every frame, before any page script, turns alert, confirm, prompt, print,
  open and document.write into reporters (JupyterLab uses none of them);
- the DevTools protocol records every script compiled in a page's own JavaScript world while
  the vectors are drawn and poked: an inline handler or a ``javascript:`` URL that runs is a
  compiled script even when it calls nothing we hooked. Playwright's own work runs in another
  world, or is one of the functions this test hands to ``page.evaluate``; JupyterLab's code
  comes from its static URLs and ours from the widget's module. Anything else counts;
- every request leaving the page is recorded, every popup and every navigation of the page;
- then each element is hovered, pressed, clicked, focused and typed at, with synthetic events
  for all of them and a real mouse for the Markdown-clothed ones. A click on a link that may
  be followed (http, https, mailto) is cancelled and recorded instead of opening a tab; any
  other link is left to do what it does, so a surviving ``javascript:`` URL would run.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Request, expect

from lineup_jupyter.protocol import rules

from ..vectors import SKIP_EXTRA, extra_corpus_or_empty
from ..vectors import markdown as markdown_vectors
from ..vectors import xss as xss_vectors
from . import jupyter as harness
from .jupyter import JupyterServer, NotebookPage, write_notebook

REPO = Path(__file__).resolve().parents[2]
# The vector sets: (Markdown vectors, XSS vectors), each a list of {"payload": ...}.
SETS = {
    "own": (markdown_vectors.VECTORS, xss_vectors.VECTORS),
    "extra": (
        extra_corpus_or_empty("markdown-vectors.json"),
        extra_corpus_or_empty("xss-vectors.json"),
    ),
}

REPORTERS = """
(() => {
  const reports = [];
  Object.defineProperty(window, "__lineupXss", { value: reports });
  const report = (what, args) => reports.push(`${what}(${[...args].map(String).join(", ")})`);
  for (const name of ["alert", "confirm", "prompt", "print", "open"]) {
    window[name] = function () { report(name, arguments); return null; };
  }
  Document.prototype.write = function () { report("document.write", arguments); };
  Document.prototype.writeln = function () { report("document.writeln", arguments); };
  // Links that may be followed are recorded, not followed (a new tab is what the user asked
  // for); any other link is left alone, so a javascript: URL that survived would run.
  const followed = [];
  Object.defineProperty(window, "__lineupFollowed", { value: followed });
  addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (link && /^(https?|mailto):/i.test(link.getAttribute("href"))) {
      followed.push(link.getAttribute("href"));
      event.preventDefault();
    }
  }, true);
})();
"""

POKE = """
(root) => {
  const events = [
    ["pointerover", PointerEvent], ["mouseover", MouseEvent], ["mouseenter", MouseEvent],
    ["mousemove", MouseEvent], ["pointerdown", PointerEvent], ["mousedown", MouseEvent],
    ["pointerup", PointerEvent], ["mouseup", MouseEvent], ["click", MouseEvent],
    ["dblclick", MouseEvent], ["contextmenu", MouseEvent], ["auxclick", MouseEvent],
    ["focus", FocusEvent], ["focusin", FocusEvent], ["keydown", KeyboardEvent],
    ["keyup", KeyboardEvent], ["input", InputEvent], ["blur", FocusEvent],
    ["mouseout", MouseEvent], ["mouseleave", MouseEvent], ["wheel", WheelEvent],
    ["copy", ClipboardEvent], ["animationstart", AnimationEvent],
    ["transitionend", TransitionEvent],
  ];
  let poked = 0, handlers = 0;
  for (const node of root.querySelectorAll("*")) {
    poked += 1;
    if (node instanceof HTMLElement) node.focus();
    for (const [type, Kind] of events) {
      // Not bubbling: each element gets its own events, and JupyterLab's shortcuts and menus
      // above the output never see a synthetic key or context menu.
      node.dispatchEvent(new Kind(type, { bubbles: false, cancelable: true, key: "Enter" }));
    }
    for (const name of node.getAttributeNames()) {
      if (!name.startsWith("on")) continue;
      handlers += 1;  // must stay 0; dispatch it anyway so the hooks would see it run
      node.dispatchEvent(new Event(name.slice(2), { bubbles: false, cancelable: true }));
    }
    if (node instanceof HTMLElement) node.click();
  }
  return { poked, handlers };
}
"""

# What the kernel-side policy allows into the page (H15), checked on the live DOM.
CHECK_DOM = """
([tags, attributes, imagePattern]) => {
  const problems = [];
  const image = new RegExp(imagePattern);
  for (const body of document.querySelectorAll(".lineup-components .lineup-markdown")) {
    for (const node of body.querySelectorAll("*")) {
      const tag = node.localName;
      if (!tags.includes(tag)) problems.push(`<${tag}>`);
      for (const name of node.getAttributeNames()) {
        if (!(attributes[tag] ?? []).includes(name)) problems.push(`<${tag} ${name}>`);
      }
      const href = node.getAttribute("href");
      if (tag === "a" && href !== null && !/^(https?|mailto):/i.test(href)) problems.push(href);
      if (tag === "img" && !image.test(node.getAttribute("src") ?? "")) problems.push("img src");
    }
  }
  return problems;
}
"""


SHOW_CORPORA = """\
import json
from lineup_jupyter import Host, Limits

# Every vector at once, past the default count of components (H44): a test's own choice.
host = Host(conversation_id="conv_xss", limits=Limits(max_components=5000))
agent = host.connect_agent("agent_xss")
xss = json.load(open({xss!r}, encoding="utf-8"))
markdown = json.load(open({markdown!r}, encoding="utf-8"))
for n, vector in enumerate(markdown):
    agent.say(vector["payload"], component_id=f"md.{{n}}")
for n, vector in enumerate(xss):
    agent.say(vector["payload"], component_id=f"xss.{{n}}")
    agent.text(vector["payload"], component_id=f"text.{{n}}")
print(len(host.components))
host
"""


@pytest.fixture
def xss_page(browser: Browser) -> Iterator[tuple[BrowserContext, Page]]:
    """A context of its own: the reporters are installed in every frame of every page."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(120_000)
    context.add_init_script(REPORTERS)
    page = context.new_page()
    yield context, page
    context.close()


@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "vector_set", ["own", pytest.param("extra", marks=() if SETS["extra"][1] else SKIP_EXTRA)]
)
def test_no_xss_vector_runs_navigates_or_loads_anything(
    xss_page: tuple[BrowserContext, Page], jupyter: JupyterServer, vector_set: str
) -> None:
    """S6, H15, L2: every Markdown and XSS vector as Markdown, the XSS ones as text too, every
    element poked."""
    context, page = xss_page
    markdown, xss = SETS[vector_set]
    expected = len(markdown) + 2 * len(xss)
    popups: list[str] = []
    context.on("page", lambda popup: popups.append(popup.url))
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    name = f"xss-{vector_set}.ipynb"
    (jupyter.root / f"xss-{vector_set}.json").write_text(json.dumps(xss), encoding="utf-8")
    (jupyter.root / f"markdown-{vector_set}.json").write_text(
        json.dumps(markdown), encoding="utf-8"
    )
    show = SHOW_CORPORA.format(xss=f"xss-{vector_set}.json", markdown=f"markdown-{vector_set}.json")
    write_notebook(jupyter.root, name, [show])
    notebook = NotebookPage(page, jupyter, name, "lab").open()

    # From here on, anything the page asks of the network or compiles is the vectors' doing.
    requests: list[str] = []

    def on_request(request: Request) -> None:
        # anywidget loads the widget's module from a blob: URL; only a script can make one,
        # and any script of the vectors is caught below.
        if request.url.startswith(f"blob:{jupyter.url}/"):
            return
        if not _jupyter_own(request.url, jupyter.url):
            requests.append(request.url)

    page.on("request", on_request)
    navigations: list[str] = []
    page.on(
        "framenavigated",
        lambda frame: navigations.append(frame.url) if frame == page.main_frame else None,
    )
    cdp = context.new_cdp_session(page)
    page_worlds: set[int] = set()  # the pages' own JavaScript worlds, not Playwright's
    cdp.on(
        "Runtime.executionContextCreated",
        lambda event: (
            page_worlds.add(event["context"]["id"])
            if event["context"].get("auxData", {}).get("isDefault")
            else None
        ),
    )
    compiled: list[dict[str, Any]] = []
    cdp.on("Debugger.scriptParsed", lambda script: compiled.append(script))
    cdp.send("Runtime.enable")
    cdp.send("Debugger.enable")
    page.wait_for_timeout(200)
    baseline = len(compiled)  # the scripts of JupyterLab before the vectors arrived

    notebook.run_all()
    expect(page.locator(".lineup-components .lineup-component")).to_have_count(
        expected, timeout=120_000
    )

    problems = page.evaluate(
        CHECK_DOM,
        [list(rules.MARKDOWN_TAGS), rules.MARKDOWN_ATTRIBUTES, rules.MARKDOWN_IMAGE_PATTERN],
    )
    assert problems == [], f"elements or attributes outside the allowlist: {problems[:20]}"

    poked = page.evaluate(POKE, page.locator(".lineup-components").element_handle())
    assert poked["handlers"] == 0
    assert poked["poked"] > expected  # every card and what is inside it was poked

    started = time.monotonic()
    for body in page.locator(".lineup-components [data-component-id^='md.']").all():
        body.scroll_into_view_if_needed()
        body.hover(timeout=5_000)
        body.click(position={"x": 5, "y": 5}, timeout=5_000)
    print(f"real mouse on the Markdown vectors: {time.monotonic() - started:.1f} s")

    notebook.round_trip()  # whatever the pokes started has had a kernel round trip to finish
    page.wait_for_timeout(500)

    def foreign(scripts: list[dict[str, Any]]) -> list[str]:
        """The sources of scripts compiled in a page's world that neither Playwright, this
        test, JupyterLab nor the widget's module account for."""
        found = []
        for script in scripts:
            if script["executionContextId"] not in page_worlds:
                continue  # Playwright's utility world: nothing of the page runs there
            if _jupyter_own(script.get("url", ""), jupyter.url):
                continue
            source = cdp.send("Debugger.getScriptSource", {"scriptId": script["scriptId"]})
            text = source["scriptSource"].strip()
            if text not in ours:
                found.append(text[:200])
        return found

    bundle = (REPO / "lineup_jupyter" / "static" / "lineup.js").read_text(encoding="utf-8")
    ours = {s.strip() for s in (POKE, CHECK_DOM, INSERT_RAW, *HARNESS_SCRIPTS, bundle)}
    ours |= PLAYWRIGHT_MAIN_WORLD
    compiled_by_vectors = foreign(compiled[baseline:])
    executed = page.evaluate("() => window.__lineupXss")
    followed = page.evaluate("() => window.__lineupFollowed")

    assert executed == [], f"agent text ran script: {executed[:10]}"
    assert dialogs == []
    assert compiled_by_vectors == [], f"the page compiled vector scripts: {compiled_by_vectors[:5]}"
    assert requests == [], f"requests left the page: {requests[:10]}"
    assert popups == []
    assert navigations == []
    assert all(re.match(r"^(https?|mailto):", href, re.I) for href in followed)
    # The page is alive and still the notebook.
    assert notebook.run_cell("print(len(host.components))") == f"{expected}\n"

    # The control: the same detectors, on a few vectors put into the page raw (no host in the
    # way), must see them run. Otherwise the zeros above would prove nothing.
    control_start = len(compiled)
    page.evaluate(INSERT_RAW, CONTROL_VECTORS)
    page.evaluate(POKE, page.locator("#lineup-control").element_handle())
    page.wait_for_timeout(500)
    assert page.evaluate("() => window.__lineupXss") != []  # the hooks saw alert()
    compiled_raw = foreign(compiled[control_start:])
    assert any("void 0" in source for source in compiled_raw)  # CDP saw a silent handler


INSERT_RAW = """
(vectors) => {
  const control = document.createElement("div");
  control.id = "lineup-control";
  control.innerHTML = vectors.join("");
  document.body.append(control);
}
"""
CONTROL_VECTORS = [
    '<img src="data:," onerror="alert(1)">',
    '<a href="javascript:alert(2)">link</a>',
    '<b onclick="void 0">calls nothing the hooks know</b>',
]

# What Playwright 1.65 compiles in the page's world (page.evaluate's wrapper, the preview of an
# element handle), and the harness's functions (tests/browser/jupyter.py).
PLAYWRIGHT_MAIN_WORLD = {
    "((utilityScript, ...args) => utilityScript.evaluate(...args))",
    '(injected, e) => "JSHandle@" + injected.previewNode(e)',
}
HARNESS_SCRIPTS = (
    harness._KERNEL_IDLE,
    harness._RUN_ALL,
    harness._RUN_CELL,
    harness._ROUND_TRIP,
    harness._SELECT,
    harness._COMMAND,
)

# Not the page's own URL: Chromium names an inline handler's script after its document.
_JUPYTER_PATHS = ("/api/", "/lab/api/", "/static/", "/lab/extensions/", "/kernelspecs/")


def _jupyter_own(url: str, base: str) -> bool:
    """A request or script of JupyterLab itself: its API, its static files, its extensions."""
    if not url.startswith(base):
        return False
    path = url[len(base) :]
    return path.startswith(_JUPYTER_PATHS)
