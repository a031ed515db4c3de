"""A throwaway JupyterLab server on 127.0.0.1, and a driver for one notebook in a browser page.

Recipe: docs/testing.md ("The browser tests"). The server runs from this venv
(``sys.executable -m jupyter lab``) with its config, data, runtime and IPython dirs in a temp
dir, no token, and the app exposed as ``window.jupyterapp`` so tests wait on real conditions
(kernel idle, cell executed) instead of sleeping. The same server serves JupyterLab
(``/lab``) and Notebook 7 (``/notebooks``).
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import nbformat
from jupyter_client.blocking import BlockingKernelClient
from playwright.sync_api import BrowserContext, Page

UI = Literal["lab", "notebook"]
STARTUP_TIMEOUT_S = 90
KERNEL_TIMEOUT_MS = 120_000
ANNOUNCEMENTS = "jupyterlab.handlers.announcements"

# The sandbox flags and the ones that stop Chromium reaching the internet (docs/testing.md).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # A camera and a microphone that exist (a test pattern, a tone): a device refused to a
    # frame is refused by the containment, never for want of a device.
    "--use-fake-device-for-media-stream",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class JupyterServer:
    url: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes]

    def api(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = response.read()
        return json.loads(answer) if answer else None

    def start_kernel_for(self, notebook: str) -> None:
        """Start the notebook's next kernel before its page opens it, and wait until it answers
        a kernel_info request (over its own connection file): the page then finds a kernel
        ready, as when a notebook is reopened on a running server. Without it, a page that
        starts the kernel itself can show "model not found" for a widget whose state the
        notebook saved: the ipywidgets manager counts itself restored once the new kernel
        connects, before it has read the notebook's state, which it only does after the kernel
        answers, and gives a model up after 2 s (docs/testing.md)."""
        session = self.api(
            "POST",
            "/api/sessions",
            {"path": notebook, "type": "notebook", "name": notebook, "kernel": {"name": "python3"}},
        )
        # The server's runtime dir (start_jupyter) holds each kernel's connection file.
        connection = self.root.parent / "runtime" / f"kernel-{session['kernel']['id']}.json"
        client = BlockingKernelClient(connection_file=str(connection))
        client.load_connection_file()
        # No heartbeat channel: jupyter_client's wait_for_ready takes a kernel whose heartbeat
        # has not begun yet (it is still starting) for a dead one.
        client.start_channels(hb=False)
        try:
            deadline = time.monotonic() + KERNEL_TIMEOUT_MS / 1000
            asked = client.kernel_info()  # queued by ZeroMQ until the kernel is there
            while time.monotonic() < deadline:
                try:
                    reply = client.get_shell_msg(timeout=1)
                except queue.Empty:
                    continue
                if reply["parent_header"].get("msg_id") == asked:
                    return
            raise TimeoutError(f"the kernel for {notebook} did not answer")
        finally:
            client.stop_channels()

    def session_ids(self) -> set[str]:
        return {session["id"] for session in self.api("GET", "/api/sessions")}

    # Sessions being deleted while the next test runs: see shutdown_kernels.
    _deleting: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="delete-sessions")
    )
    _deletions: list[Future[None]] = field(default_factory=list)

    def shutdown_kernels(self, keep: Collection[str] = (), *, wait: bool = True) -> None:
        """Delete every session (and so its kernel) but those in ``keep``. A kernel takes a
        second or more to exit: ``wait=False`` returns at once and lets that overlap the next
        test. A call that waits first lets the earlier deletions finish."""
        if wait:
            self._finish_deletions()
        for session_id in self.session_ids() - set(keep):
            path = f"/api/sessions/{session_id}"
            if wait:
                self.api("DELETE", path)
            else:
                self._deletions.append(self._deleting.submit(self.api, "DELETE", path))

    def _finish_deletions(self) -> None:
        deletions, self._deletions = self._deletions, []
        for deletion in deletions:
            deletion.result()  # a deletion that failed fails here

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        try:
            self._finish_deletions()
        finally:
            self._deleting.shutdown()
        if self.process.poll() is None:
            # The server shuts its kernels down on SIGTERM (they run in sessions of their own).
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


# JupyterLab extensions the browser tests turn off: nothing they test touches them, and each
# does work at every notebook opened (a debugger handler and a debug_info request per kernel,
# a table of contents, LSP connections, tooltip providers, cell tags and metadata forms...),
# with the plugins of other packages that need them (else each logs that it failed to
# activate). Measured (docs/testing.md, "Fewer JupyterLab extensions"): opening a notebook
# and running a cell costs 4.6 s of CPU with every extension on, 3.8 s without these, and the
# browser tier opens a notebook or more in each of its 240 tests. test_smoke.py runs once in a
# JupyterLab with every extension on (``all_extensions=True``), so the extensions and ours
# still meet.
TRIMMED_EXTENSIONS = (
    "@jupyterlab/celltags-extension",
    "@jupyterlab/cell-toolbar-extension",
    "@jupyterlab/debugger-extension",
    "@jupyterlab/documentsearch-extension",
    "@jupyterlab/extensionmanager-extension",
    "@jupyterlab/inspector-extension",
    "@jupyterlab/logconsole-extension",
    "@jupyterlab/lsp-extension",
    "@jupyterlab/metadataform-extension",
    "@jupyterlab/running-extension",
    "@jupyterlab/toc-extension",
    "@jupyterlab/tooltip-extension",
    # Plugins of packages left on that need one of those.
    "@jupyterlab/fileeditor-extension:language-server",
    "@jupyterlab/fileeditor-extension:search",
    "@jupyterlab/notebook-extension:language-server",
    "@jupyterlab/notebook-extension:search",
    "@jupyterlab/notebook-extension:toc",
    "@jupyterlab/notebook-extension:update-raw-mimetype",
    "@jupyterlab/workspaces-extension:sidebar",
)


def start_jupyter(base: Path, *, all_extensions: bool = False) -> JupyterServer:
    dirs = {name: base / name for name in ("config", "data", "runtime", "ipython", "root")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    labconfig = dirs["config"] / "labconfig"
    labconfig.mkdir()
    # The announcements plugin fetches news from the internet: always off.
    disabled = {"@jupyterlab/apputils-extension:announcements": True}
    if not all_extensions:
        disabled |= dict.fromkeys(TRIMMED_EXTENSIONS, True)
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": disabled}))
    # No news and no update checks: the server would fetch them from the internet.
    (dirs["config"] / "jupyter_server_config.json").write_text(
        json.dumps(
            {
                "LabApp": {
                    "news_url": None,
                    "check_for_updates_class": f"{ANNOUNCEMENTS}.NeverCheckForUpdate",
                }
            }
        )
    )
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "IPYTHONDIR": str(dirs["ipython"]),
        "LINEUP_JUPYTER_HOME": str(base / "lineup-home"),  # the audit database (C13)
        "JUPYTER_PLATFORM_DIRS": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    for attempt in range(3):  # a free port can be taken before the server binds it
        port = free_port()
        command = [
            sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
            "--IdentityProvider.token=", "--ServerApp.password=",
            # Loopback test server only: lets teardown delete sessions over REST.
            "--ServerApp.disable_check_xsrf=True",
            f"--ServerApp.root_dir={dirs['root']}",
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
        ]  # fmt: skip
        log = base / f"jupyter-{attempt}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        server = JupyterServer(f"http://127.0.0.1:{port}", dirs["root"], log, process)
        if _ready(server):
            return server
        if "already in use" not in server.log_tail():
            break
    raise RuntimeError(f"jupyter lab did not start:\n{server.log_tail()}")


def _ready(server: JupyterServer) -> bool:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while server.process.poll() is None:
        try:
            server.api("GET", "/api/status")
            return True
        except OSError:
            if time.monotonic() > deadline:
                server.stop()
                return False
            time.sleep(0.2)
    return False


def write_notebook(root: Path, name: str, cells: Sequence[str]) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    path = root / name
    nbformat.write(notebook, path)
    return path


# The notebook's panel found by its path, not "the current widget": an output view or another
# tab may be current. Commands act on the current notebook, so `activate` makes it current.
_PANEL = """
const findPanel = (name) => {
  for (const widget of window.jupyterapp?.shell?.widgets?.('main') ?? []) {
    if (widget?.context?.path === name && widget.content?.model) return widget;
  }
  return null;
};
const activate = async (name) => {
  const app = window.jupyterapp;
  const panel = findPanel(name);
  if (!panel) throw new Error(`notebook ${name} is not open`);
  app.shell.activateById(panel.id);
  for (let i = 0; app.shell.currentWidget !== panel; i++) {
    if (i > 500) throw new Error(`notebook ${name} did not become the current widget`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return panel;
};
"""

_KERNEL_IDLE = f"""(name) => {{ {_PANEL}
  const kernel = findPanel(name)?.sessionContext?.session?.kernel;
  return kernel?.status === 'idle' && kernel?.connectionStatus === 'connected';
}}"""

_RUN_ALL = f"""async (name) => {{ {_PANEL}
  const panel = await activate(name);
  await window.jupyterapp.commands.execute('notebook:run-all-cells');
  return Array.from(panel.content.model.cells)
    .flatMap((cell) => (cell.type === 'code' ? cell.outputs.toJSON() : []))
    .filter((output) => output.output_type === 'error');
}}"""

# Appends a code cell, runs it (the promise settles when the reply and all output are in) and
# returns its outputs as nbformat JSON.
_RUN_CELL = f"""async ([name, code]) => {{ {_PANEL}
  const notebook = (await activate(name)).content;
  const index = notebook.model.cells.length;
  notebook.model.sharedModel.insertCell(index, {{ cell_type: 'code', source: code }});
  notebook.activeCellIndex = index;
  await window.jupyterapp.commands.execute('notebook:run-cell');
  return notebook.model.cells.get(index).outputs.toJSON();
}}"""

# Messages from the page to the kernel (widget messages, executes) share one ordered channel, and
# `done` settles once the reply and the kernel's idle status are in: every message the page sent
# before has been handled, and what the kernel sent back on IOPub has arrived.
_ROUND_TRIP = f"""async (name) => {{ {_PANEL}
  const kernel = findPanel(name).sessionContext.session.kernel;
  await kernel.requestExecute({{ code: '', silent: false, store_history: false }}).done;
}}"""

# Runs the notebook's own cells start..stop-1, one after the other, each as Shift+Enter would
# (the next starts when the previous has finished); returns each cell's outputs.
_RUN_CELLS = f"""async ([name, start, stop]) => {{ {_PANEL}
  const notebook = (await activate(name)).content;
  const outputs = [];
  for (let index = start; index < stop; index++) {{
    notebook.activeCellIndex = index;
    await window.jupyterapp.commands.execute('notebook:run-cell');
    const cell = notebook.model.cells.get(index);
    outputs.push(cell.type === 'code' ? cell.outputs.toJSON() : []);
  }}
  return outputs;
}}"""

_CELLS = f"""(name) => {{ {_PANEL}
  return Array.from(findPanel(name).content.model.cells).map((cell) => ({{
    type: cell.type,
    execution_count: cell.type === 'code' ? cell.executionCount : null,
    outputs: cell.type === 'code' ? cell.outputs.toJSON() : [],
  }}));
}}"""

# Runs code in the notebook's kernel without adding a cell (nor a history entry); returns what
# it printed and its result as nbformat-like outputs.
_EXECUTE = f"""async ([name, code]) => {{ {_PANEL}
  const kernel = findPanel(name).sessionContext.session.kernel;
  const future = kernel.requestExecute({{ code, silent: false, store_history: false }});
  const outputs = [];
  future.onIOPub = (message) => {{
    const type = message.header.msg_type;
    if (['stream', 'execute_result', 'display_data', 'error'].includes(type)) {{
      outputs.push({{ output_type: type, ...message.content }});
    }}
  }};
  await future.done;
  return outputs;
}}"""

_SELECT = f"""async ([name, index]) => {{ {_PANEL}
  (await activate(name)).content.activeCellIndex = index;
}}"""

_COMMAND = f"""async ([name, command, args]) => {{ {_PANEL}
  await activate(name);
  return await window.jupyterapp.commands.execute(command, args);
}}"""

# Opens a notebook in the JupyterLab already running in the page, as the file browser does.
# The notebook a test opened first through SharedLab.open_notebook stays open for the next
# test, which takes it over (_TAKE_OVER). A test that opens a notebook another way first closes
# that kept one: no locator of the test's may find an earlier test's cells in a hidden tab.
_KEPT = "__lineupKept"  # the kept notebook's path, while it waits for the next test
_FIRST = "__lineupFirst"  # the path of the notebook the current test took over or opened

_OPEN = f"""async (name) => {{ {_PANEL}
  const kept = window.{_KEPT};
  window.{_KEPT} = null;
  if (kept) findPanel(kept)?.dispose();
  const args = {{ path: name, factory: 'Notebook' }};
  await window.jupyterapp.commands.execute('docmanager:open', args);
}}"""

# The kept notebook, renamed to the new test's name (its panel and session follow the file),
# when its session is still on the server (a module's fixture may have shut every kernel
# down); null when done, else why not (the kept panel closed).
_RENAME_KEPT = f"""async ([name, usable]) => {{ {_PANEL}
  const kept = window.{_KEPT};
  window.{_KEPT} = null;
  const panel = kept ? findPanel(kept) : null;
  if (!panel) return 'no notebook was kept';
  if (!usable) {{ panel.dispose(); return 'its session is gone'; }}
  try {{
    await window.jupyterapp.serviceManager.contents.rename(kept, name);
  }} catch (error) {{
    panel.dispose();
    return `the rename failed: ${{error}}`;
  }}
  for (let i = 0; panel.context.path !== name; i++) {{
    if (i > 500) {{ panel.dispose(); return 'the panel did not follow the rename'; }}
    await new Promise((resolve) => setTimeout(resolve, 20));
  }}
  return null;
}}"""

# The renamed notebook takes the test's cells from the file (the earlier test's cells and
# outputs go, and the views in them) and a new kernel process (a restart: same session); null
# when done, else why not (the panel closed).
_TAKE_OVER = f"""async (name) => {{ {_PANEL}
  const panel = await activate(name);
  try {{
    await panel.context.revert();
    await panel.sessionContext.restartKernel();  // logs, does not throw, when it fails
    const kernel = panel.sessionContext.session?.kernel;
    if (!kernel || kernel.status === 'dead') throw new Error('no kernel after the restart');
    const late = new Promise((_, fail) => setTimeout(() => fail(new Error('no answer')), 20000));
    await Promise.race([kernel.requestKernelInfo(), late]);
  }} catch (error) {{
    panel.dispose();
    return `the take-over failed: ${{error}}`;
  }}
  window.{_FIRST} = name;
  return null;
}}"""

# The worker's shared page (SharedLab) carries this flag from the moment JupyterLab is restored
# in it; a reload or a navigation drops it with the old document.
_SHARED_FLAG = "__lineupSharedLab"

# What a test could leave changed in the page besides its documents: the shell's layout, the
# theme, and what shows in the body besides the shell (a dialog, a menu, an overlay). Hidden
# elements do not count: a notebook's toolbar leaves its hidden popup behind when closed.
_LAYOUT = """const layout = () => {
  const shell = window.jupyterapp.shell;
  const shown = Array.from(document.body.children).filter((e) => e.checkVisibility());
  return JSON.stringify({
    left: shell.leftCollapsed, right: shell.rightCollapsed, mode: shell.mode,
    theme: document.body.dataset.jpThemeName,
    body: shown.map((e) => `${e.tagName}#${e.id}.${e.className}`),
  });
};"""

# Once JupyterLab is restored and its splash screen gone (it leaves the body a little later);
# the launcher an empty workspace opens with is closed: a test's notebook is the only tab.
_LOADED = f"""async () => {{ {_LAYOUT}
  await window.jupyterapp.restored;
  while (document.getElementById('jupyterlab-splash')) {{
    await new Promise((done) => setTimeout(done, 50));
  }}
  for (const widget of Array.from(window.jupyterapp.shell.widgets('main'))) widget.dispose();
  window.{_SHARED_FLAG} = true;
  return layout();
}}"""

# Closes every document without asking to save (dispose, not close), but the notebook the test
# opened first while its kernel is still there (it is kept for the next test); then says what
# differs from the page as it was loaded, if anything: [why not reusable or null, the kept
# notebook's session id or null].
_GIVE_BACK = f"""async (loaded) => {{ {_LAYOUT} {_PANEL}
  if (window.{_SHARED_FLAG} !== true) return ['navigated', null];
  const first = window.{_FIRST};
  window.{_FIRST} = null;
  const panel = first ? findPanel(first) : null;
  const kernel = panel?.sessionContext?.session?.kernel;
  const alive =
    kernel?.connectionStatus === 'connected' && !['dead', 'unknown'].includes(kernel.status);
  const kept = alive ? panel : null;
  for (const widget of Array.from(window.jupyterapp.shell.widgets('main'))) {{
    if (widget !== kept) widget.dispose();
  }}
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const now = layout();
  if (now !== loaded) return [`changed: ${{now}}, loaded as ${{loaded}}`, null];
  window.{_KEPT} = kept ? first : null;
  return [null, kept ? kept.sessionContext.session.id : null];
}}"""

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class CellError(AssertionError):
    """A cell run by a test raised in the kernel."""


def output_text(outputs: list[dict[str, Any]]) -> str:
    """stdout/stderr and text/plain results, joined; a kernel error raises CellError."""
    parts: list[str] = []
    for output in outputs:
        kind = output.get("output_type")
        if kind == "stream":
            text = output.get("text", "")
            parts.append("".join(text) if isinstance(text, list) else text)
        elif kind in ("execute_result", "display_data"):
            text = output.get("data", {}).get("text/plain", "")
            parts.append("".join(text) if isinstance(text, list) else text)
        elif kind == "error":
            trace = _ANSI.sub("", "\n".join(output.get("traceback", [])))
            raise CellError(f"{output.get('ename')}: {output.get('evalue')}\n{trace}")
    return "".join(parts)


class NotebookPage:
    """One notebook open in a page, in JupyterLab or Notebook 7."""

    def __init__(self, page: Page, server: JupyterServer, name: str, ui: UI) -> None:
        self.page = page
        self.server = server
        self.name = name
        self.ui = ui

    @property
    def url(self) -> str:
        if self.ui == "lab":
            # A workspace of its own: JupyterLab does not also restore earlier tests' notebooks.
            workspace = re.sub(r"[^A-Za-z0-9_-]", "-", self.name)
            return f"{self.server.url}/lab/workspaces/{workspace}/tree/{self.name}"
        return f"{self.server.url}/notebooks/{self.name}"

    def open(self) -> NotebookPage:
        """Open the notebook and wait for its kernel: in the JupyterLab already loaded in the page
        (a SharedLab page), else by loading its URL."""
        if self.ui == "lab" and is_shared_lab(self.page):
            self.page.evaluate(_OPEN, self.name)
        else:
            self.page.goto(self.url)
        self.wait_for_kernel()
        return self

    def wait_for_kernel(self) -> None:
        # Polled every 100 ms, not at every animation frame (the default), which keeps the page
        # drawing frames for as long as a kernel takes to start.
        self.page.wait_for_function(
            _KERNEL_IDLE, arg=self.name, timeout=KERNEL_TIMEOUT_MS, polling=100
        )

    def run_all(self) -> None:
        """Run every cell; returns when all have finished. A kernel error raises CellError."""
        output_text(self.page.evaluate(_RUN_ALL, self.name))

    def run_cell(self, code: str) -> str:
        """Append a code cell, run it, return its text output (raises CellError on an error)."""
        return output_text(self.page.evaluate(_RUN_CELL, [self.name, code]))

    def run_cells(self, start: int, stop: int) -> list[str]:
        """Run the notebook's cells ``start`` to ``stop - 1`` in order, one at a time, as a
        reader pressing Shift+Enter does; return each one's text output. A kernel error raises
        CellError."""
        return [
            output_text(outputs)
            for outputs in self.page.evaluate(_RUN_CELLS, [self.name, start, stop])
        ]

    def cells(self) -> list[dict[str, Any]]:
        """Every cell as the page has it: ``type``, ``execution_count`` and nbformat
        ``outputs``."""
        cells: list[dict[str, Any]] = self.page.evaluate(_CELLS, self.name)
        return cells

    def execute(self, code: str) -> str:
        """Run ``code`` in the kernel without adding a cell to the notebook; return its text
        output (raises CellError on an error)."""
        return output_text(self.page.evaluate(_EXECUTE, [self.name, code]))

    def round_trip(self) -> None:
        """Wait until the kernel has handled everything the page sent it so far, and the page has
        what the kernel sent back meanwhile (no notebook cell is added)."""
        self.page.evaluate(_ROUND_TRIP, self.name)

    def select_cell(self, index: int) -> None:
        self.page.evaluate(_SELECT, [self.name, index])

    def command(self, command: str, args: dict[str, Any] | None = None) -> Any:
        """Run a JupyterLab command with this notebook current; return its result."""
        return self.page.evaluate(_COMMAND, [self.name, command, args or {}])

    def reload(self, *, save: bool = True) -> None:
        """Save (unless told not to), reload the page, wait until the kernel is reconnected. A
        marker left in the old page proves the page really was replaced (a blocked unload would
        leave it). ``save=False`` after the kernel was shut down: a save then would write the
        notebook again as the page sees it once it noticed the kernel gone (without its
        widgets' state, on a loaded machine)."""
        if save:
            self.command("docmanager:save")
        self.page.evaluate("() => { window.__lineupBeforeReload = true; }")
        self.page.reload()
        self.page.wait_for_function("() => !window.__lineupBeforeReload", polling=100)
        self.wait_for_kernel()


def is_shared_lab(page: Page) -> bool:
    return bool(page.evaluate(f"() => window.{_SHARED_FLAG} === true"))


class SharedLab:
    """One JupyterLab page lent to one test after another, so that JupyterLab is loaded once
    and not for every test (loading it is most of a short test's time on 2 cores): a test opens
    its notebook in the running app, and gives the page back with every document closed but
    its first notebook, which the next test takes over (``open_notebook``). A page that does
    not come back as it was loaded is closed; the next test gets a new one.

    Taking a notebook over costs a kernel restart and a reload of the file; opening one costs a
    new notebook panel and session besides (measured, docs/testing.md "One notebook panel per
    worker": 1.9 s of CPU instead of 4.3 s)."""

    def __init__(self, context: BrowserContext, server: JupyterServer) -> None:
        self.context = context
        self.server = server
        self._page: Page | None = None
        self._layout = ""
        self._loads = 0
        # The session of the notebook kept open for the next test, if any.
        self.kept_session: str | None = None

    def open_notebook(self, name: str, cells: Sequence[str]) -> NotebookPage:
        """The test's first notebook, with these cells and a kernel of its own: the notebook
        the last test left open, renamed, reloaded and its kernel restarted; else a new one."""
        page = self.borrow()
        kept, self.kept_session = self.kept_session, None
        usable = kept is not None and kept in self.server.session_ids()
        reason = page.evaluate(_RENAME_KEPT, [name, usable])
        write_notebook(self.server.root, name, cells)
        notebook = NotebookPage(page, self.server, name, "lab")
        if reason is None:
            reason = page.evaluate(_TAKE_OVER, name)
        if reason is None:
            notebook.wait_for_kernel()
        else:
            notebook.open()
            page.evaluate(f"(name) => {{ window.{_FIRST} = name; }}", name)
        return notebook

    def borrow(self) -> Page:
        if self._page is None:
            self._loads += 1
            # A workspace of its own, emptied: nothing an earlier page left open is restored.
            workspace = f"shared-{os.getpid()}-{self._loads}"
            self._page = self.context.new_page()
            self._page.goto(f"{self.server.url}/lab/workspaces/{workspace}?reset")
            self._page.wait_for_function("() => window.jupyterapp", polling=100)
            self._layout = self._page.evaluate(_LOADED)
        return self._page

    def kept(self) -> set[str]:
        """The session of the notebook kept open for the next test, as a set (empty if none)."""
        return set() if self.kept_session is None else {self.kept_session}

    def shutdown_kernels(self, before: set[str], kept_before: set[str]) -> None:
        """Shut down, in the background, every kernel started since the sessions ``before`` and
        the one kept then (``kept_before``, taken over or let go since), but the one kept now."""
        self.server.shutdown_kernels(keep=(before - kept_before) | self.kept(), wait=False)

    def give_back(self, *, reuse: bool) -> str | None:
        """Close the test's documents but the one kept for the next test (``reuse=False``:
        the whole page, nothing kept); None when the page is ready for the next test, else why
        it was closed ('navigated' when the test loaded another document into it)."""
        assert self._page is not None, "give_back without borrow"
        reason: str | None = "not reused"
        self.kept_session = None
        if reuse and not self._page.is_closed():
            reason, self.kept_session = self._page.evaluate(_GIVE_BACK, self._layout)
        if reason is not None:
            self.close()
        return reason

    def close(self) -> None:
        self.kept_session = None
        if self._page is not None:
            self._page.close()
            self._page = None
