"""The official MCP Apps example servers this host is tested against (docs/mcp-apps.md,
"Compatibility"): the npm packages ``@modelcontextprotocol/server-<name>``, exact-pinned dev
dependencies in package.json, started offline (``offline.mjs``: loopback only).

``EXAMPLES`` is the one list: tests/browser/test_mcp_examples.py runs each entry in real
JupyterLab, and the compatibility table in docs/mcp-apps.md is ``table()`` of it (drift-tested
by tests/mcp/test_mcp_examples_table.py), so the table says what the browser tests measured.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

REPO = Path(__file__).resolve().parents[2]
OFFLINE = Path(__file__).with_name("offline.mjs")
PACKAGES = REPO / "node_modules" / "@modelcontextprotocol"

Transport = Literal["stdio", "http"]


@dataclass(frozen=True)
class Example:
    """One example server, opened with one tool, and what proves its app works here."""

    server: str  # the npm package is @modelcontextprotocol/server-<server>
    transport: Transport
    tool: str
    arguments: dict[str, object]
    rendered: str  # a selector in the app's frame: its own UI, visible
    button: str | None  # what the user clicks: a tools/call through consent
    result: str | None  # a regular expression the app shows once that call's result is in
    works: bool
    notes: str
    extra_args: tuple[str, ...] = field(default=())  # after the entry; "{pdf}" is sample_pdf()
    grant: str | None = None  # a domain its grant card must offer, and its block name
    grant_directive: str = "resourceDomains"  # the directive ``grant`` is declared in
    press: str | None = None  # what the user clicks that needs ``grant`` (then its block shows)
    tall: bool = False  # sized to the viewport: its frame keeps the start height
    # Text the app shows when it failed (it must not): the test fails at once when it shows.
    broken: str | None = None
    calls: str | None = None  # the tool its button calls, when not the one opened

    @property
    def button_tool(self) -> str:
        return self.calls or self.tool

    @property
    def id(self) -> str:
        return f"{self.server}-{self.transport}"

    @property
    def package(self) -> str:
        return f"@modelcontextprotocol/server-{self.server}"

    @property
    def entry(self) -> Path:
        return PACKAGES / f"server-{self.server}" / "dist" / "index.js"

    def version(self) -> str:
        """The exact version package.json pins (what `npm ci` installs)."""
        pins = json.loads((REPO / "package.json").read_text())["devDependencies"]
        return str(pins[self.package])


TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
# What the shadertoy and sheet-music tools are given: the defaults their servers declare (the
# apps read the tool's input, which has only what the caller sent).
SHADER = """void mainImage(out vec4 fragColor, in vec2 fragCoord) {
    vec2 uv = fragCoord / iResolution.xy;
    fragColor = vec4(uv, 0.5 + 0.5*sin(iTime), 1.0);
}"""
TUNE = """X:1
T:Twinkle, Twinkle Little Star
M:4/4
L:1/4
K:C
C C G G | A A G2 | F F E E | D D C2 |"""


def get_time(server: str, notes: str) -> Example:
    """A basic-* example: its Get Server Time button calls get-time through a consent card."""
    button = "button:has-text('Get Server Time')"
    return Example(server, "stdio", "get-time", {}, button, button, TIME, True, notes)


EXAMPLES: tuple[Example, ...] = (
    Example(
        "basic-vanillajs",
        "stdio",
        "get-time",
        {},
        "#get-time-btn",
        "#get-time-btn",
        TIME,
        True,
        "Get Server Time: its get-time call through a consent card, the time back in the app",
    ),
    Example(
        "basic-vanillajs",
        "http",
        "get-time",
        {},
        "#get-time-btn",
        "#get-time-btn",
        TIME,
        True,
        "the same over streamable HTTP on 127.0.0.1",
    ),
    get_time(
        "basic-react",
        "React registers copy listeners: no copy note unless the user copies",
    ),
    get_time(
        "basic-vue",
        "Vue reads properties of window.parent: works with the same-realm parent (it "
        "failed with SecurityError on every button before)",
    ),
    Example(
        "basic-vue",
        "http",
        "get-time",
        {},
        "button:has-text('Get Server Time')",
        "button:has-text('Get Server Time')",
        TIME,
        True,
        "the same over streamable HTTP on 127.0.0.1",
    ),
    get_time("basic-preact", "Preact: the same button, its time back in the app"),
    get_time("basic-solid", "Solid: the same button, its time back in the app"),
    get_time("basic-svelte", "Svelte: the same button, its time back in the app"),
    Example(
        "pdf",
        "stdio",
        "display_pdf",
        {"url": "{pdf}"},
        "#text-layer span:has-text('LineUp sample page')",
        None,
        None,
        True,
        "4.3 MB of HTML opens; its read_pdf_bytes and poll_pdf_commands calls go through consent "
        "cards (no annotations: asked every time); PDF.js renders the page (its text layer "
        "says 'LineUp sample page') with its fake worker, a data: module made a blob: URL by "
        'this host (In the browser, "`blob:` scripts, for PDF.js"); its standard fonts come from '
        "https://unpkg.com, which it declares in resourceDomains: its card offers the grant and "
        "says the font was blocked (offline here; the page is drawn with a fallback font)",
        ("{pdf}",),
        grant="https://unpkg.com",
        broken="fake worker failed",
    ),
    Example(
        "threejs",
        "stdio",
        "show_threejs_scene",
        {},
        "canvas#threejs-canvas",
        None,
        None,
        True,
        "runs its scene's code with new Function: 'unsafe-eval' is in every app's policy, as "
        "eval'd code runs after the realm guard (an attack test with a control shows it "
        "escapes nothing); it showed the CSP error before",
        broken="Error:",  # its error overlay: the CSP's, or WebGL's
    ),
    Example(
        "system-monitor",
        "stdio",
        "get-system-info",
        {},
        "#poll-toggle-btn",
        "#poll-toggle-btn",
        r"\d+%",
        True,
        "Start polls its app-only poll-system-stats every 2 s: the tool declares no annotations, "
        "so each poll asks the user (a card every 2 s until Stop)",
        calls="poll-system-stats",
    ),
    Example(
        "budget-allocator",
        "stdio",
        "get-budget-data",
        {},
        "#sliders-container input.slider",
        None,
        None,
        True,
        "its sliders and Chart.js chart from the tool's result; no tool calls of its own",
    ),
    Example(
        "customer-segmentation",
        "stdio",
        "get-customer-data",
        {},
        "#legend .legend-item",
        None,
        None,
        True,
        "loads its data with its own get-customer-data call, through a consent card; the app "
        "makes that call on a 100 ms timer without awaiting its ui/initialize handshake, so on a "
        "loaded machine it can come before its initialized: held until then, not refused (it "
        "was refused, and the app never loaded, before)",
    ),
    Example(
        "cohort-heatmap",
        "stdio",
        "get-cohort-data",
        {},
        "[class*='heatmapGrid']",
        None,
        None,
        True,
        "React; loads its grid with its own get-cohort-data call, through a consent card",
    ),
    Example(
        "scenario-modeler",
        "stdio",
        "get-scenario-data",
        {},
        ".slider-input",
        None,
        None,
        True,
        "React; its sliders and projections from the tool's result",
    ),
    Example(
        "wiki-explorer",
        "http",
        "get-first-degree-links",
        {"url": "https://en.wikipedia.org/wiki/Notebook"},
        "#zoom-in",
        None,
        None,
        True,
        "sized to the viewport: its frame keeps the 480 px it starts at (it collapsed to 40 px "
        "before); offline its server cannot reach wikipedia",
        tall=True,
    ),
    Example(
        "map",
        "stdio",
        "show-map",
        {},
        "#loading",
        None,
        None,
        True,
        "sized to the viewport; CesiumJS loads from a CDN it declares: its card offers the "
        "grant and says the script was blocked; ungranted (offline here) the app says so",
        grant="https://cesium.com",
        tall=True,
    ),
    Example(
        "shadertoy",
        "stdio",
        "render-shadertoy",
        {"fragmentShader": SHADER},
        "canvas#canvas",
        None,
        None,
        True,
        "its canvas from the tool's input, a WebGL 2 shader (that it draws is not checked here)",
    ),
    Example(
        "sheet-music",
        "stdio",
        "play-sheet-music",
        {"abcNotation": TUNE},
        "#sheet-music svg",
        None,
        None,
        True,
        "its sheet drawn by abcjs from the tool's input; Play fetches soundfonts from "
        "https://paulrosen.github.io, which it declares in connectDomains: its card offers the "
        "grant and, once Play is clicked, says the fetch was blocked; ungranted (offline here) "
        "there is no sound",
        grant="https://paulrosen.github.io",
        grant_directive="connectDomains",
        press=".abcjs-midi-start",
    ),
    Example(
        "video-resource",
        "stdio",
        "play_video",
        {"videoId": "bunny-1mb"},
        "#error-message:has-text('test-videos.co.uk')",
        None,
        None,
        True,
        "the app reads the video with resources/read through this host; offline its server "
        "cannot fetch it from test-videos.co.uk, and the app shows the server's error (a video, "
        "a base64 blob of 1.4 MB in one answer, is under the 8 MiB read limit; not played here)",
    ),
    Example(
        "transcript",
        "stdio",
        "transcribe",
        {},
        "#start-btn",
        "#start-btn",
        ".",
        False,
        "its UI shows; Start needs the microphone (getUserMedia, then Web Speech), and Chromium "
        "gives no media device to an opaque origin, which an app's frame is here, whatever the "
        "frame allows (so _meta.ui.permissions is refused; In the browser, 'Device "
        "permissions'): the app says 'Microphone access denied' even with the notebook's "
        "origin allowed a (fake) microphone",
        broken="Microphone access denied",
    ),
)


def table() -> str:
    """The compatibility table of docs/mcp-apps.md, from EXAMPLES (write it with
    ``python -m tests.mcp_servers.examples``)."""
    rows = [
        "| server | version | transport | tool | works | notes |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for example in EXAMPLES:
        works = "yes" if example.works else "no"
        rows.append(
            f"| `{example.package}` | {example.version()} | {example.transport} "
            f"| `{example.tool}` | {works} | {example.notes} |"
        )
    return "\n".join(rows)


def sample_pdf(path: Path) -> Path:
    """A one-page PDF that says "LineUp sample page" (for the pdf server, which reads only
    the files it was started with)."""
    stream = b"BT /F1 24 Tf 72 720 Td (LineUp sample page) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path


TABLE_START = "<!-- compatibility table: python -m tests.mcp_servers.examples -->"
TABLE_END = "<!-- end of the compatibility table -->"
DOC = REPO / "docs" / "mcp-apps.md"


def written(text: str) -> str:
    """The docs page's text with the table as table() makes it."""
    start = text.index(TABLE_START) + len(TABLE_START)
    end = text.index(TABLE_END)
    return f"{text[:start]}\n{table()}\n{text[end:]}"


if __name__ == "__main__":
    DOC.write_text(written(DOC.read_text()))
