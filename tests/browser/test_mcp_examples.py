"""The official MCP Apps example servers in real JupyterLab (issue 23, docs/mcp-apps.md
"Compatibility"): each entry of tests/mcp_servers/examples.py is installed from npm (an exact
dev dependency), started offline (loopback only), connected with ``host.connect_mcp`` over
stdio or streamable HTTP and opened; its own UI must show in its frame, and where it has a
button that calls a tool, the click goes through the broker (a consent card, allowed) and the
tool's result reaches the app. An entry marked as not working is expected to fail (strict), so
the compatibility table cannot claim less, or more, than what was measured.

A worker opens one notebook and kernel for all the examples it runs (``examples_lab``, module
scoped): each test starts with the outputs cleared and a new ``Host`` displayed in a new cell,
and ends with its server and host closed. A failed test leaves that notebook to nobody: the
next one opens another.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import ConsoleMessage, FrameLocator, Locator, Page, expect

from tests.mcp_servers.examples import EXAMPLES, OFFLINE, Example, sample_pdf

from .conftest import decide, failed
from .jupyter import JupyterServer, NotebookPage, SharedLab, free_port, write_notebook

NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

SETUP = """\
import json
from lineup_jupyter import Host
"""
# Each test's host, in a cell of its own (the outputs before it cleared): a view with nothing
# of an earlier test's in it.
HOST = """\
host = Host(conversation_id={conversation!r})
host
"""
# Each test's end: its app's server ended, its host's files closed (names that are not there,
# when the test failed before making them, are no error).
CLOSE = """\
for name in ("server", "host"):
    if name in globals():
        globals().pop(name).close()
"""


def card(page: Page) -> Locator:
    return page.locator(".lineup-host .lineup-mcp")


def app_frame(page: Page) -> FrameLocator:
    return page.frame_locator(".lineup-mcp iframe.lineup-shell:not([hidden])").frame_locator(
        "iframe"
    )


def command(example: Example, pdf: Path) -> list[str]:
    assert NODE is not None
    args = [arg.replace("{pdf}", str(pdf)) for arg in example.extra_args]
    return [NODE, "--import", str(OFFLINE), str(example.entry), *args]


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    return sample_pdf(tmp_path / "sample.pdf")


@pytest.fixture
def server(request: pytest.FixtureRequest, pdf: Path) -> Iterator[str]:
    """What ``connect_mcp`` is given: the command (stdio), or the URL of the server this
    fixture started on 127.0.0.1 (streamable HTTP)."""
    example: Example = request.param
    if example.transport == "stdio":
        yield repr([*command(example, pdf), "--stdio"])
        return
    port = free_port()
    process = subprocess.Popen(
        command(example, pdf),
        env={"PORT": str(port), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        for text in process.stdout:  # the server says where it listens once it does
            if "listening" in text:
                break
        yield repr(f"http://127.0.0.1:{port}/mcp")
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


@dataclass
class ExamplesLab:
    """The worker's notebook for the examples, while no test has failed in it, and what its
    page printed during the current test."""

    notebook: NotebookPage
    console: list[str] = field(default_factory=list)
    tests: int = 0
    dirty: bool = False

    def __post_init__(self) -> None:
        self.notebook.page.on("console", self.heard)

    def heard(self, message: ConsoleMessage) -> None:
        self.console.append(f"{message.type}: {message.text}")

    def leave(self) -> None:
        """Stop listening to the page (it goes on to other tests)."""
        self.notebook.page.remove_listener("console", self.heard)


@pytest.fixture(scope="module")
def examples_lab(shared_lab: SharedLab, jupyter: JupyterServer) -> Iterator[list[ExamplesLab]]:
    """The notebooks (and kernels) this worker's examples share: one, opened at the first test
    that needs it, and another after each failed test. The worker's JupyterLab page is
    borrowed for the module and given back with every document closed."""
    before = jupyter.session_ids()
    # The notebook an earlier test kept open (SharedLab) is closed when this opens its own.
    kept_before = shared_lab.kept()
    labs: list[ExamplesLab] = []
    yield labs
    for lab in labs:
        lab.leave()
    if labs:
        shared_lab.give_back(reuse=not labs[-1].dirty)
    shared_lab.shutdown_kernels(before, kept_before)


@pytest.fixture
def examples_notebook(
    examples_lab: list[ExamplesLab],
    shared_lab: SharedLab,
    jupyter: JupyterServer,
    request: pytest.FixtureRequest,
) -> Iterator[NotebookPage]:
    """The shared notebook with a new host displayed, its earlier outputs cleared; the test's
    server and host closed after it. On failure: the console and the server log printed, and
    the notebook left for good (with its page: the next test loads another)."""
    if not examples_lab or examples_lab[-1].dirty:
        if examples_lab:
            shared_lab.give_back(reuse=False)
        name = f"mcp-examples-{len(examples_lab) + 1}.ipynb"
        write_notebook(jupyter.root, name, [SETUP])
        notebook = NotebookPage(shared_lab.borrow(), jupyter, name, "lab").open()
        notebook.run_all()
        examples_lab.append(ExamplesLab(notebook))
    lab = examples_lab[-1]
    lab.tests += 1
    lab.console.clear()
    notebook = lab.notebook
    notebook.command("notebook:clear-all-cell-outputs")
    notebook.run_cell(HOST.format(conversation=f"conv_examples_{lab.tests}"))
    yield notebook
    if failed(request):
        lab.dirty = True
        print("browser console:", *lab.console[-50:], sep="\n  ")
        print("jupyter log (tail):", jupyter.log_tail(), sep="\n")
    try:
        notebook.execute(CLOSE)
    except Exception as error:  # a kernel a failed test left busy: the notebook goes anyway
        lab.dirty = True
        print(f"closing the example's server failed: {error}")


def kernel_json(notebook: NotebookPage, expression: str) -> object:
    return json.loads(notebook.execute(f"print(json.dumps({expression}))"))


def prompts(page: Page) -> Locator:
    return page.locator(".lineup-host .lineup-consent .lineup-prompt")


def allow(prompt: Locator) -> None:
    """Allow a consent card as a user would (js/decision_input.js)."""
    decide(prompt.locator("button.lineup-allow"))


def not_failed(failed: Locator | None) -> None:
    """Fails at once when the app shows that it failed (waiting longer is no use)."""
    if failed is not None and failed.count() > 0:
        raise AssertionError(f"the app failed: {(failed.first.text_content() or '')[:300]}")


def allow_until(page: Page, shown: Locator, failed: Locator | None = None) -> int:
    """Allow each consent card the app's calls raise until ``shown`` is visible; how many.
    Fails at once when ``failed`` shows."""
    allowed = 0
    for _ in range(240):
        if shown.is_visible():
            return allowed
        not_failed(failed)
        if prompts(page).count() > 0 and allowed < 8:
            allow(prompts(page).first)
            allowed += 1
            continue
        page.wait_for_timeout(250)
    expect(shown).to_be_visible()  # fails with Playwright's own message
    return allowed


def params() -> list[object]:
    out: list[object] = []
    for example in EXAMPLES:
        marks = [] if example.works else [pytest.mark.xfail(reason=example.notes, strict=True)]
        out.append(pytest.param(example, example, id=example.id, marks=marks))
    return out


@pytest.mark.parametrize(("example", "server"), params(), indirect=["server"])
def test_example_app_renders_and_its_button_works(
    server: str, examples_notebook: NotebookPage, example: Example, pdf: Path
) -> None:
    # ``server`` first: set up before the notebook's host, so the host closes the session
    # (examples_notebook's teardown) before a server of its own goes.
    notebook = examples_notebook
    page = notebook.page
    name = re.sub(r"[^a-z0-9]", "", example.server)
    notebook.execute(f"server = host.connect_mcp({server}, name={name!r})")
    arguments = json.loads(json.dumps(example.arguments).replace("{pdf}", str(pdf)))
    notebook.execute(f"app = server.open({example.tool!r}, {arguments!r})")
    expect(card(page)).to_have_count(1)
    frame = app_frame(page)
    failed = None if example.broken is None else frame.get_by_text(example.broken)
    allow_until(page, frame.locator(example.rendered).first, failed)
    shell = card(page).locator("iframe.lineup-shell:not([hidden])")
    if example.tall:  # sized to the viewport: it keeps the height it started at
        assert shell.evaluate("e => e.offsetHeight") >= 400
    if example.broken is not None:  # its failure shows once its code ran: give it time
        page.wait_for_timeout(1500)
        expect(frame.locator("body")).not_to_contain_text(example.broken)
    if example.grant is not None:  # the domain it needs: offered, and its block said
        row = (
            f".lineup-mcp-grant[data-directive='{example.grant_directive}']"
            f"[data-domain='{example.grant}']"
        )
        expect(card(page).locator(row)).to_have_count(1)
        if example.press is not None:
            frame.locator(example.press).first.click()
        notes = card(page).locator(".lineup-mcp-note")
        expect(notes.filter(has_text=example.grant).first).to_be_visible()
    if example.button is not None and example.result is not None:
        shown = frame.locator("body")
        before = shown.inner_text()
        frame.locator(example.button).first.click()
        for _ in range(120):  # its call's consent card, or at once the app's failure
            if prompts(page).count() > 0:
                break
            not_failed(failed)
            page.wait_for_timeout(250)
        expect(prompts(page)).to_have_count(1)
        allow(prompts(page).first)
        expect(shown).not_to_have_text(before)
        expect(shown).to_contain_text(re.compile(example.result))
        expect(shown).not_to_contain_text("[ERROR]")
        # The click's call went through the broker: the user's decision is in the audit.
        capability = f"mcp.{name}.{example.button_tool}"
        decisions = kernel_json(
            notebook,
            f"[(r['decision'], r['decided_by']) for r in host.audit.query() "
            f"if r['capability'] == {capability!r} and r['decision']]",
        )
        assert isinstance(decisions, list) and ["allow", "user"] in decisions, decisions
    # Nothing was copied, so no note may say so (React registers copy listeners).
    expect(card(page).locator(".lineup-mcp-note").filter(has_text="copied")).to_have_count(0)
