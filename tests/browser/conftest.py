"""Real-browser fixtures: one JupyterLab server, one Chromium and one loaded JupyterLab page
per session (a worker), lent to each test in turn; a page of its own for a test marked
``fresh_page``.

Every test in this directory is marked ``browser`` and runs in the default suite, after the
others. Without /usr/bin/chromium they skip, except in CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Error,
    Locator,
    Page,
    expect,
    sync_playwright,
)

from .canary import Canary, CanaryServer
from .jupyter import (
    CHROMIUM_ARGS,
    UI,
    JupyterServer,
    NotebookPage,
    SharedLab,
    start_jupyter,
    write_notebook,
)

CHROMIUM = Path("/usr/bin/chromium")
DEVICE_PERMISSIONS = ["camera", "microphone", "geolocation"]
HERE = Path(__file__).parent
ARTIFACTS = Path(tempfile.gettempdir()) / "lineup-browser"
IMAGES = HERE.parent.parent / "docs" / "images"  # the README's screenshots
PAGE_TIMEOUT_MS = 60_000

expect.set_options(timeout=30_000)  # the CI machine has 2 cores

OpenNotebook = Callable[..., NotebookPage]
Screenshot = Callable[[Locator, str], Path]
_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()

# A test that reloads the page, loads another document into it (Notebook 7, a URL), or needs a
# page that has run no other test, says so: it gets a new page, closed after it.
FRESH_PAGE = pytest.mark.fresh_page
# The UIs a test runs in, as a parameter: Notebook 7 is another page than JupyterLab.
UIS = ["lab", pytest.param("notebook", marks=FRESH_PAGE)]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark this directory's tests ``browser`` and run them last: quick failures come first."""
    ours = [item for item in items if HERE in item.path.parents]
    for item in ours:
        item.add_marker(pytest.mark.browser)
    items[:] = [item for item in items if HERE not in item.path.parents] + ours


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    return report


def failed(request: pytest.FixtureRequest) -> bool:
    """Whether the requesting test has failed so far (for its fixtures' teardown)."""
    reports = request.node.stash.get(_REPORTS, {})
    return any(report.failed for report in reports.values())


@pytest.fixture(scope="session")
def chromium() -> str:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing: `./dev browser` installs it (apt-get install chromium)"
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"{message}; browser tests never skip in CI", pytrace=False)
        pytest.skip(message)
    return str(CHROMIUM)


@pytest.fixture(scope="session")
def browser(chromium: str) -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def jupyter(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServer]:
    server = start_jupyter(tmp_path_factory.mktemp("jupyter"))
    yield server
    server.stop()


def hold_devices(context: BrowserContext, jupyter: JupyterServer, *more: str) -> None:
    """The notebook's origin holds DEVICE_PERMISSIONS (and ``more``), with a position to
    give: what a user may have allowed it for other tools."""
    context.grant_permissions([*DEVICE_PERMISSIONS, *more], origin=jupyter.url)
    context.set_geolocation({"latitude": 59.91, "longitude": 10.75})


@pytest.fixture(scope="session")
def context(browser: Browser, jupyter: JupyterServer) -> Iterator[BrowserContext]:
    """One context for the session: its HTTP cache makes every JupyterLab load after the first
    faster. Tests share nothing else through it (each opens its own notebook and kernel).
    The notebook's origin holds the device permissions a user may have allowed it for other
    tools (the camera and microphone are CHROMIUM_ARGS' fakes): what a surface or an app is
    refused, the containment refused, not a prompt nobody answered."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    hold_devices(context, jupyter)
    yield context
    context.close()


@pytest.fixture(scope="session")
def shared_lab(context: BrowserContext, jupyter: JupyterServer) -> Iterator[SharedLab]:
    lab = SharedLab(context, jupyter)
    yield lab
    lab.close()


@pytest.fixture
def page(
    context: BrowserContext,
    jupyter: JupyterServer,
    shared_lab: SharedLab,
    request: pytest.FixtureRequest,
) -> Iterator[Page]:
    """The worker's JupyterLab page, already loaded; a new page for a test marked
    ``fresh_page``. On failure: a screenshot, the console, the server log. Afterwards the
    test's notebooks are closed and the kernels started during the test shut down; a failed
    test's page is not reused."""
    fresh = request.node.get_closest_marker("fresh_page") is not None
    before = jupyter.session_ids()
    # The kernel of the notebook the last test kept open (SharedLab): this test takes it over,
    # or it goes with this test's kernels; a test on a page of its own leaves it to the next.
    kept_before = shared_lab.kept() if not fresh else set()
    page = context.new_page() if fresh else shared_lab.borrow()
    console: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        console.append(f"{message.type}: {message.text}")

    def on_error(error: Error) -> None:
        console.append(f"pageerror: {error}")

    page.on("console", on_console)
    page.on("pageerror", on_error)
    yield page
    page.remove_listener("console", on_console)
    page.remove_listener("pageerror", on_error)
    test_failed = failed(request)
    if test_failed:
        ARTIFACTS.mkdir(exist_ok=True)
        shot = ARTIFACTS / (re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid) + ".png")
        try:
            page.screenshot(path=shot, full_page=True, timeout=10_000)
            print(f"screenshot: {shot}")
        except Exception as error:
            print(f"no screenshot: {error}")
        print("browser console:", *console[-50:], sep="\n  ")
        print("jupyter log (tail):", jupyter.log_tail(), sep="\n")
    if fresh:
        page.close()
        given_back = None
    else:
        given_back = shared_lab.give_back(reuse=not test_failed)
    shared_lab.shutdown_kernels(before, kept_before)
    if given_back == "navigated":
        pytest.fail(
            "the test loaded another document into the shared JupyterLab page: mark it fresh_page",
            pytrace=False,
        )


@pytest.fixture
def open_notebook(
    page: Page, jupyter: JupyterServer, shared_lab: SharedLab, request: pytest.FixtureRequest
) -> OpenNotebook:
    """``open_notebook(cells, ui="lab"|"notebook", run=True)``: write a notebook with these code
    cells into the server's root, open it in the page, wait for the kernel, run all cells. In
    the shared JupyterLab page, a test's first notebook takes over the one the last test kept
    (SharedLab.open_notebook: a kernel of its own all the same)."""
    count = 0
    shared = request.node.get_closest_marker("fresh_page") is None

    def open_(cells: Sequence[str], *, ui: UI = "lab", run: bool = True) -> NotebookPage:
        nonlocal count
        count += 1
        name = f"{re.sub(r'[^A-Za-z0-9_-]+', '-', request.node.name)}-{count}.ipynb"
        if shared and ui == "lab" and count == 1:
            notebook = shared_lab.open_notebook(name, cells)
        else:
            write_notebook(jupyter.root, name, cells)
            notebook = NotebookPage(page, jupyter, name, ui).open()
        if run:
            notebook.run_all()
        return notebook

    return open_


@pytest.fixture
def canary() -> Iterator[Canary]:
    """A loopback HTTP server and UDP socket recording whatever reaches them."""
    server = CanaryServer()
    yield server.canary
    server.stop()


@pytest.fixture
def screenshot() -> Screenshot:
    """``screenshot(locator, name)`` takes ``<name>.png``, a picture for the README cropped to
    that element, in the light theme, the mouse parked away from it. Tests take it right after
    checking what the element shows, so the README's pictures can stay true: with
    ``LINEUP_UPDATE_IMAGES=1`` it is written into docs/images/, else into the artifacts folder
    (a test run leaves the checkout as it found it)."""
    folder = IMAGES if os.environ.get("LINEUP_UPDATE_IMAGES") == "1" else ARTIFACTS / "images"

    def take(locator: Locator, name: str) -> Path:
        page = locator.page
        expect(page.locator("body")).to_have_attribute("data-jp-theme-light", "true")
        page.mouse.move(0, 0)  # no hover highlight
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.png"
        locator.screenshot(path=path, animations="disabled", caret="hide")
        return path

    return take


def settled(page: Page) -> None:
    """Two animation frames: what just moved has been measured by js/decision_input.js."""
    page.evaluate(
        "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"
    )


def decide(control: Locator, guarded: Locator | None = None) -> None:
    """Click a host control that decides something as a user would (js/decision_input.js,
    docs/security.md "Decisions"): in view, armed (visible and still for ARM_DELAY_MS), then
    the pointer comes onto it from elsewhere and clicks once. ``guarded`` is the element that
    carries ``data-armed`` when it is not ``control`` itself (an option's label)."""
    control.scroll_into_view_if_needed()
    settled(control.page)
    expect(guarded or control).to_have_attribute("data-armed", "")
    control.page.mouse.move(1, 1)
    control.click()
