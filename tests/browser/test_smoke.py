"""The real-browser harness itself works: in JupyterLab and Notebook 7, a click inside a
sandboxed frame of an inline anywidget reaches the kernel, and the kernel's answer reaches the
page; the loopback canary sees what the browser sends it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from .canary import Canary
from .conftest import FRESH_PAGE, UIS, OpenNotebook
from .jupyter import UI, CellError, JupyterServer, NotebookPage, start_jupyter, write_notebook

# A counter whose button lives in a sandboxed srcdoc frame, like a surface: click -> postMessage
# -> widget view -> custom message -> kernel -> synced trait -> view.
CLICKER = '''
import anywidget, traitlets

class Clicker(anywidget.AnyWidget):
    _esm = """
    export default { render({ model, el }) {
      const frame = document.createElement("iframe");
      frame.className = "smoke-frame";
      frame.setAttribute("sandbox", "allow-scripts");
      frame.srcdoc = "<button id=b>+1</button>"
        + "<script>b.onclick = () => parent.postMessage('click', '*')</script>";
      const count = document.createElement("span");
      count.className = "smoke-count";
      const show = () => { count.textContent = `count=${model.get("count")}`; };
      const onMessage = (event) => {
        if (event.source === frame.contentWindow) model.send({ kind: event.data });
      };
      window.addEventListener("message", onMessage);
      model.on("change:count", show);
      show();
      el.append(frame, count);
      return () => window.removeEventListener("message", onMessage);
    } };
    """
    count = traitlets.Int(0).tag(sync=True)

    def __init__(self):
        super().__init__()
        self.on_msg(lambda _w, content, _b: self._click(content))

    def _click(self, content):
        if content == {"kind": "click"}:
            self.count += 1

clicker = Clicker()
clicker
'''


@pytest.mark.parametrize("ui", UIS)
def test_click_in_a_frame_reaches_the_kernel_and_back(open_notebook: OpenNotebook, ui: UI) -> None:
    notebook = open_notebook([CLICKER], ui=ui)
    page = notebook.page
    expect(page.locator(".smoke-count")).to_have_text("count=0")
    button = page.frame_locator("iframe.smoke-frame").locator("#b")
    button.click()
    expect(page.locator(".smoke-count")).to_have_text("count=1")
    button.click()
    expect(page.locator(".smoke-count")).to_have_text("count=2")
    assert notebook.run_cell("print(clicker.count)") == "2\n"
    notebook.run_cell("clicker.count = 40")
    expect(page.locator(".smoke-count")).to_have_text("count=40")


# A surface whose button tells its agent, which the kernel records.
SURFACE = """
from lineup_jupyter import Host

host = Host(conversation_id="conv_smoke")
agent = host.connect_agent("agent_smoke")
events = []
agent.on_event()(lambda event: events.append(event.event))
agent.open(
    "smoke.surface.01",
    app_id="com.lineup.smoke",
    version="1.0.0",
    html="<button id='go'></button>",
    js="LineUpSurface.onState(s => document.querySelector('#go').textContent = s.label); "
    "document.querySelector('#go').onclick = () => LineUpSurface.event('go', {})",
    state={"label": "go"},
)
host
"""


@pytest.fixture(scope="module")
def every_extension(
    chromium: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[JupyterServer]:
    """A JupyterLab with every extension on: the other tests run in one with some turned off
    (jupyter.py, TRIMMED_EXTENSIONS)."""
    server = start_jupyter(tmp_path_factory.mktemp("every-extension"), all_extensions=True)
    yield server
    server.stop()


@FRESH_PAGE
def test_with_every_jupyterlab_extension_on_a_frame_and_a_surface_reach_the_kernel(
    page: Page, every_extension: JupyterServer
) -> None:
    """The extensions the other tests turn off (the debugger, completer, table of contents...)
    are on here: the clicker and a surface's event still reach the kernel."""
    write_notebook(every_extension.root, "every-extension.ipynb", [CLICKER, SURFACE])
    notebook = NotebookPage(page, every_extension, "every-extension.ipynb", "lab").open()
    notebook.run_all()
    page.frame_locator("iframe.smoke-frame").locator("#b").click()
    expect(page.locator(".smoke-count")).to_have_text("count=1")
    shell = '.lineup-surface[data-instance-id="smoke.surface.01"] iframe.lineup-shell'
    go = page.frame_locator(shell).frame_locator("iframe").locator("#go")
    expect(go).to_have_text("go")  # the surface has its state: it is connected
    go.click()
    for _ in range(100):  # the event reaches the kernel on its own time: ask until it is in
        if notebook.execute("print(events)") == "['go']\n":
            break
        page.wait_for_timeout(100)
    assert notebook.execute("print(events)") == "['go']\n"


def test_run_cell_reports_kernel_errors(open_notebook: OpenNotebook) -> None:
    notebook = open_notebook(["x = 1"])
    assert notebook.run_cell("print(x + 1)") == "2\n"
    assert notebook.run_cell("x") == "1"
    with pytest.raises(CellError, match="ZeroDivisionError"):
        notebook.run_cell("1 / 0")


@FRESH_PAGE
def test_canary_sees_http_and_udp_from_the_browser(page: Page, canary: Canary) -> None:
    """The canary can fail: a request and a WebRTC datagram from a page both reach it."""
    assert canary.total() == 0
    page.goto(f"{canary.url}/hello?x=1")
    expect(page.locator("body")).to_have_text("canary")
    assert ("GET", "/hello?x=1") in [(r.method, r.path) for r in canary.requests]
    assert canary.connections
    # A STUN binding request to the canary's UDP port: what a surface with WebRTC could send.
    page.evaluate(
        """async (port) => {
          const pc = new RTCPeerConnection({ iceServers: [{ urls: `stun:127.0.0.1:${port}` }] });
          pc.createDataChannel("x");
          await pc.setLocalDescription(await pc.createOffer());
          window.__pc = pc;
        }""",
        canary.udp_port,
    )
    assert canary.wait_for(lambda: bool(canary.datagrams)), canary.summary()
