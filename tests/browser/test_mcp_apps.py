"""MCP Apps in a real JupyterLab page (issue 18, docs/mcp-apps.md): a real MCP server written
with the ``mcp`` SDK (tests/mcp_servers/sdk_apps.py) over stdio and streamable HTTP, its
``board`` app written with the official App SDK (``app-with-deps`` inlined), clicked for real;
and a hostile app that posts raw JSON-RPC, contained and reported.

Each app shows as ``.lineup-mcp`` in the host view: a shell frame holding the app's frame
(js/mcp_frames.js), spoken to by js/mcp_host.js. What an app heard is read from its own
``#log`` (one line per message), what the kernel did from the kernel.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    BrowserContext,
    ConsoleMessage,
    FrameLocator,
    Locator,
    Page,
    Route,
    expect,
)

from tests.mcp_servers.sdk_apps import EGRESS, FORGED_RISK, PUBLIC_WILDCARDS

from .canary import Canary
from .conftest import DEVICE_PERMISSIONS, FRESH_PAGE, OpenNotebook, Screenshot, decide, settled
from .containment import OFF_WEBRTC_GUARD, Seen, control_page, mcp_shell_document, without
from .jupyter import CellError, JupyterServer, NotebookPage

REPO = Path(__file__).resolve().parents[2]

SETUP = """\
import json, os, sys
from mcp import StdioServerParameters
from lineup_jupyter import Host

host = Host(conversation_id="conv_mcp")
REPO = {repo!r}
ENV = {{"PYTHONPATH": REPO, "PATH": os.environ["PATH"], "LINEUP_TEST_CANARY": {canary!r},
       "LINEUP_TEST_CANARY_UDP": {udp!r}}}
STDIO = StdioServerParameters(
    command=sys.executable, args=["-m", "tests.mcp_servers.sdk_apps"], cwd=REPO, env=ENV
)
host
"""


def setup(canary: Canary) -> str:
    return SETUP.format(repo=str(REPO), canary=canary.url, udp=str(canary.udp_port))


def card(page: Page) -> Locator:
    return page.locator(".lineup-host .lineup-mcp")


def app_frame(page: Page) -> FrameLocator:
    return page.frame_locator(".lineup-mcp iframe.lineup-shell:not([hidden])").frame_locator(
        "iframe"
    )


def log(page: Page) -> Locator:
    return app_frame(page).locator("#log li")


def line(page: Page, start: str) -> Locator:
    """The app's log line that starts with ``start`` (exactly one)."""
    return log(page).filter(has_text=re.compile(f"^{re.escape(start)}"))


def allow_card(page: Page, views: int = 1) -> None:
    """Allow the one waiting consent card (shown in each of ``views`` views of the host), once
    it takes a click (js/prompts.js)."""
    prompt = page.locator(".lineup-host .lineup-consent .lineup-prompt")
    expect(prompt).to_have_count(views)
    decide(prompt.last.locator("button.lineup-allow"))
    expect(prompt).to_have_count(0)


@pytest.fixture
def console(page: Page) -> Iterator[list[str]]:
    """What the page's frames print, for this test alone (the page goes on to the next)."""
    lines: list[str] = []

    def heard(message: ConsoleMessage) -> None:
        lines.append(message.text)

    page.on("console", heard)
    yield lines
    page.remove_listener("console", heard)


def kernel_json(notebook: NotebookPage, expression: str) -> object:
    return json.loads(notebook.execute(f"print(json.dumps({expression}))"))


def wait_for_console(page: Page, console: list[str], prefix: str) -> None:
    """Until a console line (of any frame) starts with ``prefix``: waits on the page, never
    by sleeping the test's process (docs/testing.md)."""
    for _ in range(300):
        if any(text.startswith(prefix) for text in console):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"no console line starting with {prefix!r}: {console[-20:]}")


def nested_copy_contained(page: Page, console: list[str], canary: Canary, app: str) -> None:
    """The app's script copied into a nested frame ran the guard first (its WebRTC found no
    constructor), and nothing reached the canary."""
    wait_for_console(page, console, f"{app} rtc nested")
    page.wait_for_timeout(1000)  # time for a datagram or a request to reach the canary
    assert f"{app} rtc nested blocked TypeError" in console, console[-20:]
    assert not any(text.startswith(f"{app} rtc nested started") for text in console)
    assert canary.total() == 0, canary.summary()


def open_board(notebook: NotebookPage, connect: str) -> Page:
    notebook.execute(f"server = host.connect_mcp({connect})")
    notebook.execute('app = server.open("show_board", {"city": "Oslo"})')
    page = notebook.page
    expect(card(page)).to_have_count(1)
    expect(line(page, "initialized")).to_have_count(1)
    return page


def test_board_over_stdio_every_message(
    open_notebook: OpenNotebook, canary: Canary, context: BrowserContext, screenshot: Screenshot
) -> None:
    """The App SDK's app in the host view: ui/initialize -> initialized (the host context),
    tool-input and tool-result, tools/call of an app-only tool through a consent card,
    model-only and undeclared tools refused, ui/open-link through app.open_url's card,
    ui/message and ui/update-model-context shown and kept, resources/read, size-changed
    bounded, ui/resource-teardown before the card goes; every message in the kernel's
    history for the inspector."""
    notebook = open_notebook([setup(canary)])
    page = open_board(notebook, "STDIO")
    heading = card(page).locator(".lineup-header .lineup-title")
    expect(heading).to_contain_text("Show the board")
    expect(heading).to_contain_text("MCP app · server sdkapps 1.0.0 · tool show_board")

    initialized = json.loads(line(page, "initialized").inner_text().split(" ", 1)[1])
    assert initialized["theme"] == "light" and initialized["displayMode"] == "inline"
    assert initialized["modes"] == ["inline", "fullscreen"] and initialized["width"] > 100
    assert initialized["locale"]
    expect(line(page, "tool-input")).to_have_text('tool-input {"city":"Oslo"}')
    expect(line(page, "tool-result")).to_have_text('tool-result {"city":"Oslo","temperature":21}')
    expect(card(page).locator(".lineup-mcp-grant")).to_have_count(1)
    screenshot(card(page), "mcp-app")

    # tools/call of the app-only tool: a consent card, then the result reaches the app.
    app_frame(page).locator("#refresh").click()
    # Issue 22 §2: the tool's title, dressed as a host line, is quoted as the server's words;
    # the host's own lines are the Risk line and its summary of the call.
    prompt = page.locator(".lineup-host .lineup-consent .lineup-prompt")
    expect(prompt.locator(".lineup-prompt-risk")).to_have_count(1)
    expect(prompt.locator(".lineup-prompt-risk")).not_to_contain_text("verified")
    expect(prompt.locator(".lineup-prompt-described")).to_contain_text("its own words")
    expect(prompt.locator(".lineup-prompt-words")).to_have_text(FORGED_RISK)
    expect(prompt.locator(".lineup-prompt-reason")).to_contain_text("lineup-jupyter's summary")
    expect(prompt.locator(".lineup-prompt-reason")).not_to_contain_text("the agent's words")
    allow_card(page)
    expect(line(page, "refresh")).to_contain_text(
        '"structuredContent":{"city":"Oslo","temperature":23}'
    )
    # Model-only and undeclared tools: refused without a card, the app told why.
    app_frame(page).locator("#secret").click()
    expect(line(page, "secret")).to_contain_text("secret error")
    app_frame(page).locator("#nope").click()
    expect(line(page, "nope")).to_contain_text("nope error")
    expect(page.locator(".lineup-consent .lineup-prompt")).to_have_count(0)

    # ui/open-link: app.open_url's card; Allow opens the tab in the click.
    context.route(
        "https://example.org/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body="<title>w</title>"),
    )
    try:
        app_frame(page).locator("#link").click()
        with context.expect_page() as opened:
            allow_card(page)
        assert opened.value.url == "https://example.org/weather"
        opened.value.close()
    finally:
        context.unroute("https://example.org/**")
    expect(line(page, "link")).to_contain_text("link ok")

    # ui/message and ui/update-model-context: shown in the card, kept for the agent.
    app_frame(page).locator("#message").click()
    expect(line(page, "message")).to_contain_text("message ok")
    app_frame(page).locator("#context").click()
    expect(line(page, "context")).to_contain_text("context ok")
    notes = card(page).locator(".lineup-mcp-note")
    expect(notes.filter(has_text="message: Oslo looks sunny")).to_have_count(1)
    expect(notes.filter(has_text="model context: Oslo selected")).to_have_count(1)
    kept = kernel_json(notebook, "[app.messages[-1]['content'][0]['text'], app.model_context]")
    assert kept == ["Oslo looks sunny", {"content": [{"type": "text", "text": "Oslo selected"}]}]

    app_frame(page).locator("#read").click()
    expect(line(page, "read")).to_have_text("read ok 1")

    # size-changed: the card follows the app's height, within the host's bound.
    shell = card(page).locator("iframe.lineup-shell")
    app_frame(page).locator("#grow").click()
    expect(shell).to_have_attribute("style", "height: 800px;")

    # Every message both ways reached the kernel's history (the inspector's MCP rows).
    types = kernel_json(notebook, "sorted({r.type for r in host.history.select(kind='mcp')})")
    assert isinstance(types, list)
    for method in (
        "mcp.ui/initialize",
        "mcp.ui/notifications/initialized",
        "mcp.ui/notifications/tool-input",
        "mcp.ui/notifications/tool-result",
        "mcp.tools/call",
        "mcp.ui/open-link",
        "mcp.ui/message",
        "mcp.ui/update-model-context",
        "mcp.resources/read",
        "mcp.ui/notifications/size-changed",
    ):
        assert method in types, method

    # Close: the app hears ui/resource-teardown and answers before its card goes.
    card(page).locator(".lineup-close").click()
    expect(card(page)).to_have_count(0)
    notebook.round_trip()
    traffic = kernel_json(
        notebook,
        "[[r.envelope['dir'], r.envelope['jsonrpc']] for r in host.history.select(kind='mcp') "
        "if r.envelope.get('dir') in ('to_app', 'from_app')]",
    )
    assert isinstance(traffic, list)
    (asked,) = [
        m for d, m in traffic if d == "to_app" and m.get("method") == "ui/resource-teardown"
    ]
    assert ["from_app", {"jsonrpc": "2.0", "id": asked["id"], "result": {}}] in traffic
    assert kernel_json(notebook, "app.closed") is True


def test_display_modes_and_the_theme(open_notebook: OpenNotebook, canary: Canary) -> None:
    """Deny on the grant card grants nothing. ui/request-display-mode: fullscreen fills the
    page's viewport with an exit control, inline comes back; host-context-changed tells the
    app of each mode and of a theme switch."""
    notebook = open_notebook([setup(canary)])
    page = open_board(notebook, "STDIO")
    # Deny on the grant card: the row goes, nothing is granted, the frame is the same.
    row = card(page).locator(".lineup-mcp-grant")
    expect(row).to_have_count(1)
    decide(row.locator("button.lineup-mcp-deny"))
    expect(row).to_have_count(0)
    notebook.round_trip()
    assert kernel_json(notebook, "app.spec()['granted']") == {
        "connectDomains": [],
        "resourceDomains": [],
    }
    expect(line(page, "initialized")).to_have_count(1)

    # Full screen takes a click the user meant for the app: its frame stood still, then the
    # pointer came onto it (js/decision_input.js).
    shell = page.locator(".lineup-mcp iframe.lineup-shell:not([hidden])")
    settled(page)
    expect(shell).to_have_attribute("data-armed", "")
    page.mouse.move(1, 1)
    app_frame(page).locator("#full").click()
    expect(line(page, "mode")).to_have_text('mode ok {"mode":"fullscreen"}')
    expect(card(page)).to_have_attribute("data-mode", "fullscreen")
    box = card(page).bounding_box()
    viewport = page.viewport_size
    assert box and viewport
    assert (box["x"], box["y"]) == (0, 0)
    assert (box["width"], box["height"]) == (viewport["width"], viewport["height"])
    changed = line(page, "host-context-changed")
    expect(changed.filter(has_text='"displayMode":"fullscreen"')).to_have_count(1)
    exit_button = card(page).locator(".lineup-mcp-exit")
    expect(exit_button).to_be_visible()
    exit_button.click()
    expect(card(page)).to_have_attribute("data-mode", "inline")
    expect(changed.filter(has_text='"displayMode":"inline"')).to_have_count(1)

    notebook.command("apputils:change-theme", {"theme": "JupyterLab Dark"})
    try:
        expect(changed.filter(has_text='"theme":"dark"')).to_have_count(1)
    finally:
        notebook.command("apputils:change-theme", {"theme": "JupyterLab Light"})
    expect(changed.filter(has_text='"theme":"light"')).to_have_count(1)


@pytest.fixture
def http_server(canary: Canary) -> Iterator[str]:
    """The same server over streamable HTTP on 127.0.0.1: its URL once it listens."""
    env = {
        "PYTHONPATH": str(REPO),
        "PATH": "/usr/bin:/bin",
        "LINEUP_TEST_CANARY": canary.url,
        "LINEUP_TEST_CANARY_UDP": str(canary.udp_port),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_servers.sdk_apps", "http"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())  # printed once the socket listens
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_board_over_http_and_tool_cancelled(
    open_notebook: OpenNotebook, canary: Canary, http_server: str
) -> None:
    """Streamable HTTP on loopback: the same app, its tool call consented; a tool that never
    returns is cancelled at its deadline, and the app hears tool-cancelled."""
    notebook = open_notebook([setup(canary)])
    page = open_board(notebook, repr(http_server))
    expect(line(page, "tool-result")).to_have_text('tool-result {"city":"Oslo","temperature":21}')
    app_frame(page).locator("#refresh").click()
    allow_card(page)
    expect(line(page, "refresh")).to_contain_text('"temperature":23')
    card(page).locator(".lineup-close").click()
    expect(card(page)).to_have_count(0)

    # A deadline of 5 s on a second connection: the tool that never returns is cancelled.
    notebook.execute(f"quick = host.connect_mcp({http_server!r}, name='quick', timeout=5)")
    notebook.execute('stalled = quick.open("stall", {})')
    expect(line(page, "tool-input")).to_have_text("tool-input {}")
    expect(line(page, "tool-cancelled")).to_contain_text("tool-cancelled")


def test_a_hostile_app_is_contained_and_reported(
    open_notebook: OpenNotebook, canary: Canary, page: Page, console: list[str]
) -> None:
    """Raw JSON-RPC from an app: requests before initialized, forged response ids, malformed
    messages, a model-only and an undeclared tool, egress without a grant, WebRTC in its own
    frame and from a copy of its script in a nested frame (the guard is on every script), a
    message over the shell's limit and a size flood: each refused, none reaches the network
    (canary: 0), the card stays within its bound, and the card says what was refused."""
    notebook = open_notebook([setup(canary)])
    notebook.execute("server = host.connect_mcp(STDIO)")
    notebook.execute('hostile = server.open("show_hostile", {})')
    expect(card(page)).to_have_count(1)
    expect(line(page, "flooded")).to_have_count(1)
    expect(line(page, "early")).to_have_text("early error -32600")
    expect(line(page, "secret")).to_have_text("secret error -32000")
    expect(line(page, "nope")).to_have_text("nope error -32602")
    # Full screen without the user's click: answered with the mode in force, and the card
    # stays in the notebook (control: test_display_modes_and_the_theme clicks, and it goes).
    expect(line(page, "full")).to_have_text('full {"mode":"inline"}')
    expect(card(page)).not_to_have_attribute("data-mode", "fullscreen")
    expect(line(page, "fetch canary")).to_contain_text("fetch canary blocked")
    expect(line(page, "fetch egress")).to_contain_text("fetch egress blocked")
    expect(line(page, "rtc top")).to_contain_text("rtc top blocked")
    nested_copy_contained(page, console, canary, "HOSTILE")

    height = card(page).locator("iframe.lineup-shell").evaluate("e => e.offsetHeight")
    assert height <= 800
    notes = card(page).locator(".lineup-mcp-note")
    codes = {"not_initialized", "forged_id", "malformed", "too_large", "flood", "no_user_gesture"}
    for code in sorted(codes):
        expect(notes.filter(has_text=f"refused ({code})").first).to_be_visible()
    refused = kernel_json(
        notebook, "sorted({r.error['code'] for r in host.history.select(type='mcp.refused')})"
    )
    assert isinstance(refused, list)
    assert codes <= set(refused)
    # The model-only tool never reached the server.
    sent = kernel_json(
        notebook,
        "[json.dumps(r.envelope['jsonrpc']) for r in host.history.select(kind='mcp') "
        "if r.envelope.get('dir') == 'to_server']",
    )
    assert isinstance(sent, list) and not any("secret_plan" in text for text in sent)


def test_egress_needs_the_users_grant(
    open_notebook: OpenNotebook, canary: Canary, page: Page, context: BrowserContext
) -> None:
    """A declared https connectDomain is shown on the grant card, with the host as the browser
    reads it, and not granted: the app's fetch never leaves the page (the route that answers
    the domain sees 0 requests); an http origin and wildcards over public suffixes
    (`https://*.com`) are refused on the card. Control: Allow
    rebuilds the app's frame with the domain in its policy, the app initializes again (its
    tool-input replayed) and the same fetch arrives."""
    arrived: list[str] = []

    def answer(route: Route) -> None:
        arrived.append(route.request.url)
        route.fulfill(status=204)

    context.route("https://egress.example/**", answer)
    try:
        notebook = open_notebook([setup(canary)])
        notebook.execute("server = host.connect_mcp(STDIO)")
        notebook.execute('hostile = server.open("show_hostile", {})')
        expect(line(page, "fetch egress")).to_contain_text("fetch egress blocked")
        row = card(page).locator(".lineup-mcp-grant")
        expect(row).to_have_count(1)
        expect(row).to_contain_text(
            "send and receive data (fetch, WebSocket) with https://egress.example"
        )
        expect(row.locator("strong")).to_have_text("egress.example")  # who owns the host
        refused = card(page).locator(".lineup-mcp-grant-refused")
        expect(refused.filter(has_text=canary.url)).to_contain_text("connectDomains")
        for wildcard in PUBLIC_WILDCARDS:  # issue 22 §2: never offered, the reason shown
            expect(refused.filter(has_text=wildcard)).to_contain_text("public suffix")
        assert arrived == [] and canary.total() == 0, canary.summary()

        decide(row.locator("button.lineup-mcp-allow"))
        expect(row).to_have_count(0)
        expect(line(page, "fetch egress")).to_have_text("fetch egress sent")
        expect(line(page, "initialized")).to_have_count(1)  # the new frame's own
        assert arrived == ["https://egress.example/egress"]
        assert canary.total() == 0, canary.summary()  # never granted: not https
        granted = kernel_json(notebook, "hostile.spec()['granted']['connectDomains']")
        assert granted == ["https://egress.example"]
    finally:
        context.unroute("https://egress.example/**")


def test_the_apps_document_guards_every_script(
    open_notebook: OpenNotebook, canary: Canary, page: Page
) -> None:
    """Decision 5: the app frame's first node is its CSP, every inline script (ours and the
    app's) starts with the host's guard and is admitted by its hash, no 'unsafe-inline'
    ('unsafe-eval' is: test_eval_runs_after_the_guard_and_escapes_nothing), frames never;
    the shell's CSP has frame-src 'none' too."""
    notebook = open_notebook([setup(canary)])
    open_board(notebook, "STDIO")
    shell = page.frame_locator(".lineup-mcp iframe.lineup-shell")
    srcdoc = shell.locator("iframe").get_attribute("srcdoc")
    assert srcdoc
    head = srcdoc.split("<head>", 1)[1]
    assert head.startswith('<meta http-equiv="Content-Security-Policy"')
    csp = head.split('content="', 1)[1].split('"', 1)[0]
    assert "frame-src 'none'" in csp and "connect-src 'none'" in csp
    assert "'unsafe-eval'" in csp and "script-src 'sha256-" in csp  # eval: see below
    assert "unsafe-inline" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    scripts = page.frame_locator(".lineup-mcp iframe.lineup-shell").frame_locator("iframe")
    texts = scripts.locator("script").evaluate_all("els => els.map(e => e.textContent)")
    assert len(texts) == 2  # ours (the guard and the CSP reports), and the app's module
    assert all(text.startswith("(function realmGuard(config)") for text in texts)
    outer = page.locator(".lineup-mcp iframe.lineup-shell").get_attribute("srcdoc")
    assert outer and "frame-src 'none'" in outer


@FRESH_PAGE  # it reloads the page
def test_an_app_over_the_size_bound_is_refused_with_a_card(
    open_notebook: OpenNotebook, canary: Canary
) -> None:
    """An app whose HTML is over ``max_html_bytes`` is refused with a card in the host view,
    where the app would show: what was refused, its size, the bound and how to raise it; no
    frame, nothing to grant, and the user closes it. The same card comes back from the
    snapshot after a reload. Control: the same app under the default bound shows its frame."""
    notebook = open_notebook([setup(canary)])
    page = notebook.page
    notebook.execute("small = host.connect_mcp(STDIO, name='small', max_html_bytes=1000)")
    with pytest.raises(CellError, match="max_html_bytes"):  # the cell says so too
        notebook.execute('small.open("show_board", {"city": "Oslo"})')
    refused = card(page).locator(".lineup-blocked[data-kind='refused']")
    expect(card(page)).to_have_count(1)
    expect(card(page).locator(".lineup-title")).to_contain_text("server small")
    expect(refused).to_contain_text(
        re.compile(
            r"Not shown: 'ui://board/app\.html' is \d+ bytes of HTML, over this host's 1000 "
            r".*host\.connect_mcp\(\.\.\., max_html_bytes=\.\.\.\) allows more"
        )
    )
    expect(card(page).locator("iframe")).to_have_count(0)
    notebook.reload()
    expect(refused).to_have_count(1)
    card(page).locator("button.lineup-close").click()
    expect(card(page)).to_have_count(0)
    assert kernel_json(notebook, "len(small.apps)") == 0

    notebook.execute("server = host.connect_mcp(STDIO)")
    notebook.execute('app = server.open("show_board", {"city": "Oslo"})')
    expect(line(page, "initialized")).to_have_count(1)
    assert canary.total() == 0, canary.summary()


def test_eval_runs_after_the_guard_and_escapes_nothing(
    open_notebook: OpenNotebook,
    canary: Canary,
    page: Page,
    console: list[str],
    context: BrowserContext,
    jupyter: JupyterServer,
) -> None:
    """S3 and L1 for MCP apps. 'unsafe-eval' is in an app's policy (threejs runs its scenes with new
    Function): code made from strings runs only from a script already running, in a realm whose
    first statement was the guard. The eval app's eval, new Function and string timer reach for
    WebRTC, fetch, a data: import and the page's realm, make a script and a frame at run time,
    and copy themselves into a nested frame: eval works, every escape is blocked, 0 requests and
    0 datagrams reach the canary. Its own blob: script (``script-src blob:``, for PDF.js) runs
    when it imports it, after the guard (its WebRTC: TypeError); the same blob: as a nested
    frame's first script never runs (Chromium: "Not allowed to load local resource"), nor does a
    nested frame's script that would make a blob: of its own (no hash). Control: the same
    document as the page built it, with the guard's WebRTC deletion taken out (its hashes then
    under 'unsafe-inline' 'unsafe-eval' blob:): the eval'd and the blob: WebRTC start, and so
    does a nested frame's own blob: script, and datagrams reach the canary."""
    notebook = open_notebook([setup(canary)])
    notebook.execute("server = host.connect_mcp(STDIO)")
    notebook.execute('app = server.open("show_eval", {})')
    expect(line(page, "done")).to_have_count(1)
    expect(line(page, "eval ok")).to_have_text("eval ok 42 2")  # eval and new Function run
    for where in ("eval", "function", "timer"):
        expect(line(page, f"rtc {where} ")).to_have_text(f"rtc {where} blocked TypeError")
    expect(line(page, "fetch eval")).to_contain_text("fetch eval blocked")
    expect(line(page, "import data")).to_contain_text("import data blocked")
    # Its own blob: module runs in its realm (as PDF.js's worker does here), after the guard.
    expect(line(page, "import blob")).to_have_text("import blob done")
    expect(line(page, "rtc blob ")).to_have_text("rtc blob blocked TypeError")
    expect(line(page, "top")).to_have_text("top blocked SecurityError")
    nested_copy_contained(page, console, canary, "EVAL")
    escaped = [text for text in console if re.match(r"EVAL .*(started|ran|loaded)", text)]
    # The scripts and the frames made at run time never ran, nor did the app's blob: script in
    # a nested frame, which Chromium would not load there (another opaque origin).
    assert escaped == [], escaped
    assert any("Not allowed to load local resource: blob:" in text for text in console)

    shell = card(page).locator("iframe.lineup-shell:not([hidden])").get_attribute("srcdoc")
    assert shell and "'unsafe-eval'" in shell
    assert shell and " blob:" in shell.split("script-src", 1)[1].split(";", 1)[0]
    unguarded = without(shell, OFF_WEBRTC_GUARD).replace(
        "script-src 'unsafe-inline'", "script-src 'unsafe-inline' 'unsafe-eval' blob:"
    )
    control_console: list[str] = []

    def heard(message: ConsoleMessage) -> None:
        if message.page is not page:
            control_console.append(message.text)

    context.on("console", heard)  # before the control's frames run
    control = control_page(context, jupyter, Seen(), unguarded)
    try:
        # Both the datagram and the control's console line, which Playwright delivers only
        # while the test waits on the page: the datagram may come first.
        started = {"EVAL rtc eval started", "EVAL rtc blob started", "EVAL rtc own blob started"}
        for _ in range(100):
            if canary.datagrams and started <= set(control_console):
                break
            control.wait_for_timeout(100)
        assert canary.datagrams, f"control: no datagram reached the canary {control_console}"
        # The app's blob: script, and a nested frame's own blob: script, seen running.
        assert started <= set(control_console), control_console
    finally:
        context.remove_listener("console", heard)
        control.close()


# An app that starts a worker from a data: URL and one from a blob: URL; each tries every way
# out to an https origin (a path per worker and way) and WebTransport to the canary's UDP
# port, and says what happened: "WORKER <kind> <ways>".
WORKER_SCRIPT = """
const TARGET = %(target)s;
const UDP = %(udp)s;
const CODE = (kind) => `
  const out = ["rtc " + typeof RTCPeerConnection];
  const to = (way) => ${JSON.stringify(TARGET)} + "/" + ${JSON.stringify(kind)} + "/" + way;
  const settle = (way, start) => new Promise((done) => {
    try {
      const made = way === "worker" ? " started" : " sent";
      start(() => done(way + made), (why) => done(way + " blocked " + why));
    } catch (error) {
      done(way + " blocked " + error.name);
    }
    setTimeout(() => done(way + " no answer"), 1500);
  });
  // What the worker's policy blocked: "<directive> <last part of the URL>".
  const violations = [];
  self.addEventListener("securitypolicyviolation", (event) => {
    violations.push(event.effectiveDirective + " " + event.blockedURI.split("/").pop());
  });
  // Each way out: start(ok, no) tries it and says how it went.
  const WAYS = {
    fetch: (ok, no) => {
      fetch(to("fetch"), { mode: "no-cors" }).then(ok, (e) => no(e.name));
    },
    xhr: (ok, no) => {
      const x = new XMLHttpRequest();
      x.open("GET", to("xhr"));
      x.onload = ok;
      x.onerror = () => no("error");
      x.send();
    },
    ws: (ok, no) => {
      const w = new WebSocket(to("ws").replace("https:", "wss:"));
      w.onopen = ok;
      w.onerror = () => no("error");
    },
    sse: (ok, no) => {
      const s = new EventSource(to("sse"));
      s.onopen = ok;
      s.onerror = () => no("error");
    },
    import: (ok) => { importScripts(to("import")); ok(); },
    worker: (ok, no) => {
      const w = new Worker("data:text/javascript," + encodeURIComponent(
        "fetch(" + JSON.stringify(to("nested")) + ", { mode: 'no-cors' })"));
      w.onerror = () => no("error");
      setTimeout(ok, 500);
    },
    transport: (ok, no) => {
      const w = new WebTransport("https://127.0.0.1:" + ${UDP} + "/" + ${JSON.stringify(kind)});
      w.ready.then(ok, (e) => no(e.name));
    },
  };
  // Playwright intercepts a worker's requests only a moment after it starts: until then one
  // would go to the network (none here), and the control could not see it.
  new Promise((go) => setTimeout(go, 500)).then(() => Promise.all(
    Object.keys(WAYS).map((way) => settle(way, WAYS[way]))
  )).then((ways) => {
    postMessage(out.concat(ways).join("; ") + " | " + violations.sort().join(", "));
    // The routed ways again, 15 times 200 ms apart: on a loaded machine Playwright may begin
    // to intercept the worker's requests only after its first round (the control then sees
    // the later ones; blocked, they are blocked every time).
    let round = 0;
    const again = setInterval(() => {
      if (++round > 15) return clearInterval(again);
      for (const way of ["fetch", "xhr", "sse", "import", "worker"]) settle(way, WAYS[way]);
    }, 200);
  });
`;
for (const kind of ["data", "blob"]) {
  const text = CODE(kind);
  const url = kind === "data"
    ? "data:text/javascript," + encodeURIComponent(text)
    : URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
  try {
    const worker = new Worker(url);
    worker.onmessage = (event) => console.log(`WORKER ${kind} ran: ${event.data}`);
    worker.onerror = () => console.log(`WORKER ${kind} blocked error`);
  } catch (error) {
    console.log(`WORKER ${kind} blocked ${error.name}`);
  }
}
"""
# What a Playwright route sees arrive from each worker when the policy allows it (a worker's
# WebSocket is not routed: the policy's violation event says whether it was blocked).
ROUTED = ("fetch", "xhr", "sse", "import", "nested")


def console_said(page: Page, console: list[str], tag: str, names: set[str]) -> dict[str, str]:
    """What a script said for each of ``names`` in console lines ``<tag> <name> <what>``
    (the last line for a name wins), once it said something for each; waits on the page."""
    for _ in range(100):
        lines = [text.split(" ", 2) for text in console if text.startswith(f"{tag} ")]
        heard = {words[1]: words[2] if len(words) > 2 else "" for words in lines}
        if set(heard) == names:
            return heard
        page.wait_for_timeout(100)
    raise AssertionError(f"{tag}: not all of {sorted(names)} said something: {console[-20:]}")


def workers_heard(control: Page, console: list[str]) -> dict[str, str]:
    """What each worker said on the control page ("blocked ..." or "ran: <ways> | <blocked by
    the policy>")."""
    return console_said(control, console, "WORKER", {"data", "blob"})


def test_workers_inherit_the_apps_policy_and_reach_nothing(
    canary: Canary, context: BrowserContext, jupyter: JupyterServer
) -> None:
    """Why an app gets no workers, and what they would be (docs/mcp-apps.md, "Workers stay off"):
    an app's shell document built as the host builds it, whose script starts a data: and a
    blob: worker that try fetch, XHR, WebSocket, EventSource, importScripts and a nested
    worker's fetch to an https origin (a Playwright route, which sees every request the
    browser makes to it: the canary on loopback would not do, as Chromium's local network
    access checks block an opaque origin's requests there whatever the CSP), and WebTransport
    to the canary's UDP port. As shipped (worker-src 'none') neither starts. With worker-src
    data: blob: both run and every way out is blocked by the policy (its violation event, each
    way), as a worker made from a local-scheme URL inherits the app's policy (CSP3, and
    Chromium applies it): a nested worker starts, nothing reaches the route, 0 datagrams at the
    canary; WebRTC is not there. Control: the same with the origin in connect-src and
    script-src: each request, the nested worker's fetch too, reaches the route, and the
    WebSocket is no violation. (A worker's WebSocket is not routed, and WebTransport cannot be
    shown getting out: the tests' Chromium runs without QUIC.)"""
    arrived: list[str] = []

    def answer(route: Route) -> None:
        arrived.append(route.request.url)
        route.fulfill(status=200, content_type="text/javascript", body="")

    script = WORKER_SCRIPT % {"target": json.dumps(EGRESS), "udp": canary.udp_port}
    shipped = mcp_shell_document("<p>workers</p>", script)
    assert shipped.count("worker-src 'none'") == 2  # the shell's policy and the app's
    workers = shipped.replace("worker-src 'none'", "worker-src data: blob:")
    allowed = without(workers)
    loose = without(
        workers.replace("connect-src 'none'", f"connect-src {EGRESS} wss://egress.example")
    ).replace("script-src 'unsafe-inline'", f"script-src 'unsafe-inline' {EGRESS}")
    console: list[str] = []

    def heard(message: ConsoleMessage) -> None:
        console.append(message.text)

    context.route(f"{EGRESS}/**", answer)
    context.on("console", heard)
    try:
        results: list[dict[str, str]] = []
        for doc in (shipped, allowed):
            console.clear()
            control = control_page(context, jupyter, Seen(), doc)
            try:
                results.append(workers_heard(control, console))
                control.wait_for_timeout(3500)  # the repeated rounds: a request would arrive
            finally:
                control.close()
        assert arrived == [] and canary.total() == 0, (arrived, canary.summary())
        as_shipped, with_workers = results
        assert all(said.startswith("blocked") for said in as_shipped.values()), as_shipped
        for kind, said in with_workers.items():
            ways, violations = said.split(" | ")
            assert ways.startswith("ran: rtc undefined; "), (kind, said)
            assert " sent" not in ways, (kind, said)  # a nested worker starts: its fetch is blocked
            assert "worker started" in ways, (kind, said)
            # Blocked by the policy it inherited, each way (not by a network there is not).
            for way in ("fetch", "xhr", "ws", "sse"):
                assert f"connect-src {way}" in violations, (kind, way, said)
            assert re.search(r"script-src\S* import", violations), (kind, said)
            if "transport blocked ReferenceError" not in ways:  # WebTransport is there
                assert f"connect-src {kind}" in violations, (kind, said)

        console.clear()
        control = control_page(context, jupyter, Seen(), loose)
        try:
            loosened = workers_heard(control, console)
            routed = {f"{EGRESS}/{kind}/{way}" for kind in ("data", "blob") for way in ROUTED}
            for _ in range(60):  # each worker's ways that the loosened policy allows
                if routed <= set(arrived):
                    break
                control.wait_for_timeout(100)
        finally:
            control.close()
        for kind in ("data", "blob"):
            for way in ROUTED:
                assert f"{EGRESS}/{kind}/{way}" in arrived, (kind, way, arrived, loosened)
            assert "connect-src ws" not in loosened[kind], loosened  # allowed: no violation
    finally:
        context.remove_listener("console", heard)
        context.unroute(f"{EGRESS}/**")


# Asks for each of DEVICE_PERMISSIONS (console: "DEVICE <name> OK <tracks>" or the error).
DEVICES_SCRIPT = """
const say = (name, what) => console.log('DEVICE ' + name + ' ' + what);
const ask = (name, start) => {
  try {
    Promise.resolve(start()).then(
      (got) => say(name, 'OK ' + (got && got.getTracks ? got.getTracks().map((t) => t.label) : '')),
      (error) => say(name, error.name || 'code ' + error.code),
    );
  } catch (error) { say(name, 'threw ' + error.name); }
};
ask('microphone', () => navigator.mediaDevices.getUserMedia({ audio: true }));
ask('camera', () => navigator.mediaDevices.getUserMedia({ video: true }));
ask('geolocation', () => new Promise((ok, no) => navigator.geolocation.getCurrentPosition(ok, no)));
"""
SAME_ORIGIN_FRAME = """([script, allow]) => {
  const f = document.createElement('iframe');
  f.setAttribute('allow', allow);
  f.srcdoc = '<script>' + script + '<' + '/script>';
  document.body.append(f);
}"""


def test_no_app_frame_gets_a_device(context: BrowserContext, jupyter: JupyterServer) -> None:
    """L1 and S3 (no camera, no geolocation) for MCP apps, and why ``_meta.ui.permissions``
    is refused (docs/mcp-apps.md, "Device permissions"), as an attack: the notebook's origin
    holds the microphone, camera and location permissions (the session's context, as if a
    user allowed them for another tool) and Chromium has a fake camera and microphone. An
    app's shell document as the host builds it (no ``allow`` on the shell, ``'none'`` on the
    app's frame) asks for each: none is given. The same with both frames allowing all three
    (what a grant would write): location is given, so the frames' ``allow`` is what keeps
    it; the camera and microphone still are not (SecurityError): Chromium gives no media
    device to an opaque origin, and the app's is one, so no grant of this host could give
    them. Control: a same-origin frame of the same page allowing them gets all three (the
    fake devices' tracks), so the detector sees a device when one is given."""
    console: list[str] = []

    def heard(message: ConsoleMessage) -> None:
        console.append(message.text)

    shipped = mcp_shell_document("<p>devices</p>", DEVICES_SCRIPT)
    everything = "camera *; microphone *; geolocation *"
    allowed = without(
        shipped.replace("camera 'none'; microphone 'none'; geolocation 'none'", everything)
    )
    assert allowed != without(shipped)
    context.on("console", heard)
    try:
        said = []
        for doc, allow in ((shipped, None), (allowed, everything)):
            console.clear()
            page = control_page(context, jupyter, Seen(), doc, allow)
            said.append(console_said(page, console, "DEVICE", set(DEVICE_PERMISSIONS)))
            page.close()
        as_shipped, as_granted = said
        assert not any(what.startswith("OK") for what in as_shipped.values()), as_shipped
        assert as_granted["microphone"] == as_granted["camera"] == "SecurityError", as_granted
        assert as_granted["geolocation"].startswith("OK"), as_granted

        console.clear()
        page = control_page(context, jupyter, Seen(), "<!-- no app here -->")
        page.evaluate(SAME_ORIGIN_FRAME, [DEVICES_SCRIPT, everything])
        control = console_said(page, console, "DEVICE", set(DEVICE_PERMISSIONS))
        page.close()
        assert all(what.startswith("OK") for what in control.values()), control
        assert "Fake" in control["microphone"] and "fake" in control["camera"].lower(), control
    finally:
        context.remove_listener("console", heard)


@FRESH_PAGE
def test_a_reload_and_a_second_view_get_the_app_from_the_snapshot(
    open_notebook: OpenNotebook, canary: Canary
) -> None:
    """A reloaded page, and a second view of the same host, each build the app's frame from
    the kernel's snapshot: it initializes and hears its tool-input and tool-result again. Each
    view's requests carry its own ids to the kernel: an answer reaches only the app that
    asked (two apps whose JSON-RPC ids both start at 0)."""
    notebook = open_notebook([setup(canary)])
    page = open_board(notebook, "STDIO")
    expect(line(page, "tool-result")).to_have_count(1)
    notebook.reload()
    expect(card(page)).to_have_count(1)
    expect(line(page, "initialized")).to_have_count(1)
    expect(line(page, "tool-input")).to_have_text('tool-input {"city":"Oslo"}')
    expect(line(page, "tool-result")).to_have_text('tool-result {"city":"Oslo","temperature":21}')

    notebook.run_cell("display(host)")
    expect(card(page)).to_have_count(2)
    shells = page.locator(".lineup-mcp iframe.lineup-shell:not([hidden])")
    first = shells.nth(0).content_frame.locator("iframe").content_frame
    second = shells.nth(1).content_frame.locator("iframe").content_frame
    expect(second.locator("#log li").filter(has_text=re.compile("^tool-result"))).to_have_count(1)
    second.locator("#refresh").click()
    allow_card(page, views=2)
    expect(second.locator("#log li").filter(has_text=re.compile("^refresh ok"))).to_have_count(1)
    first.locator("#read").click()  # the first view's app still speaks with the kernel
    expect(first.locator("#log li").filter(has_text=re.compile("^read ok"))).to_have_count(1)
    expect(first.locator("#log li").filter(has_text=re.compile("^refresh"))).to_have_count(0)


def test_an_app_in_an_endless_loop_is_pinged_and_stopped(
    open_notebook: OpenNotebook, canary: Canary
) -> None:
    """The watchdog pings an initialized app with JSON-RPC ping; one that stops answering (an
    endless loop) is offered Stop after 5 s, and Stop closes it in the kernel, reported as
    unresponsive. Only the page is read: a frame stuck in a loop is never touched."""
    notebook = open_notebook([setup(canary)])
    notebook.execute("server = host.connect_mcp(STDIO)")
    notebook.execute('stuck = server.open("show_stuck", {})')
    page = notebook.page
    stalled = card(page).locator('.lineup-blocked[data-kind="stalled"]')
    expect(stalled).to_contain_text("This app has not answered for 5 s.")
    stalled.locator("button.lineup-stop").click()
    expect(card(page)).to_have_count(0)
    notebook.round_trip()
    assert kernel_json(notebook, "stuck.closed") is True
    codes = kernel_json(
        notebook, "[r.error['code'] for r in host.history.select(type='mcp.refused')]"
    )
    assert codes == ["unresponsive"]


def test_a_moved_cell_brings_the_app_back(open_notebook: OpenNotebook, canary: Canary) -> None:
    """Moving the host's cell takes its output out of the page and puts it back, which reloads
    every frame in it: the app initializes again, hears its tool's input and result again, and
    still reaches the kernel."""
    notebook = open_notebook([setup(canary), "1"])
    page = open_board(notebook, "STDIO")
    expect(line(page, "tool-result")).to_have_count(1)

    def app_window() -> Any:
        shell = card(page).locator("iframe.lineup-shell").element_handle().content_frame()
        assert shell is not None
        return shell.child_frames[0]

    app_window().evaluate("() => { window.__beforeMove = true; }")
    notebook.select_cell(0)  # the cell that displays the host
    notebook.command("notebook:move-cell-down")
    for _ in range(300):  # until the app's frame is a new one (the old one had the mark)
        try:
            if app_window().evaluate("() => window.__beforeMove") is None:
                break
        except Exception:  # detached while we asked
            pass
        page.wait_for_timeout(100)
    else:
        raise AssertionError("the app's frame was never rebuilt")
    expect(line(page, "initialized")).to_have_count(1)
    expect(line(page, "tool-result")).to_have_text('tool-result {"city":"Oslo","temperature":21}')
    app_frame(page).locator("#read").click()
    expect(line(page, "read")).to_have_text("read ok 1")
