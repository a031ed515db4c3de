"""Voilà, how notebooks are demoed (README, "Demo it with Voilà"): a notebook served by `voila`
shows its surfaces, and a viewer's click, consent and answer reach the kernel (U8, C10, H14)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from .conftest import FRESH_PAGE, decide
from .jupyter import free_port, write_notebook

DEMO = """\
import tempfile
from lineup_jupyter import Host

host = Host(conversation_id="conv_voila", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_demo")
agent.open(
    "counter.1",
    html="<button id=go>+1</button> <b id=n></b>",
    js="go.onclick = () => LineUpSurface.event('go', {});"
       "LineUpSurface.onState((s) => { document.getElementById('n').textContent = s.n; });",
    state={"n": 0},
    name="Counter",
)


@host.capability("demo.record", risk="user_confirmation")
def record(arguments):
    return {"recorded": arguments["n"]}


@agent.on_event("go")
async def go(event):  # Voila runs every cell at load: what follows waits for the viewer
    n = host.surfaces["counter.1"].state["n"] + 1
    agent.patch("counter.1", {"n": n})
    if await agent.ask_choice("Record it?", ["yes", "no"], component_id="ask") == "yes":
        result = await agent.call("demo.record", {"n": n}, reason="Keep the count", call_id="rec")
        agent.say(f"Recorded: {result.status}", component_id="said")


host
"""


def _serving(port: int, process: subprocess.Popen[bytes], timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while process.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


@pytest.fixture
def voila(tmp_path: Path) -> Iterator[str]:
    """`voila demo.ipynb` on a loopback port, with its own Jupyter dirs; its URL."""
    dirs = {name: tmp_path / name for name in ("config", "data", "runtime", "ipython", "root")}
    for path in dirs.values():
        path.mkdir()
    write_notebook(dirs["root"], "demo.ipynb", [DEMO])
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(dirs["config"]),
        "JUPYTER_DATA_DIR": str(dirs["data"]),
        "JUPYTER_RUNTIME_DIR": str(dirs["runtime"]),
        "IPYTHONDIR": str(dirs["ipython"]),
        "LINEUP_JUPYTER_HOME": str(tmp_path / "lineup-home"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    port = free_port()
    log = tmp_path / "voila.log"
    with log.open("wb") as out:
        command = [sys.executable, "-m", "voila", "demo.ipynb", "--no-browser"]
        command += [f"--port={port}", "--Voila.ip=127.0.0.1"]
        process = subprocess.Popen(
            command,
            cwd=dirs["root"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        assert _serving(port, process), log.read_text(errors="replace")[-3000:]
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(process.pid, 15)
        process.wait(timeout=30)


@FRESH_PAGE
def test_a_surface_its_click_a_question_and_a_consent_work_under_voila(
    page: Page, voila: str
) -> None:
    page.goto(voila)
    card = page.locator(".lineup-host .lineup-surface")
    expect(card).to_contain_text("Counter")
    frame = page.frame_locator(".lineup-shell").frame_locator("iframe")
    expect(frame.locator("#n")).to_have_text("0")
    frame.locator("#go").click()  # U8: the viewer's click reaches the kernel's handler
    expect(frame.locator("#n")).to_have_text("1")
    question = page.locator('.lineup-host .lineup-component[data-component-id="ask"]')
    decide(question.get_by_label("yes"), question.locator("label", has_text="yes"))
    decide(question.get_by_role("button", name="Submit"))  # H14
    consent = page.locator('.lineup-host .lineup-prompt[data-call-id="rec"]')
    decide(consent.locator("button.lineup-allow"))  # C10: nothing ran before Allow
    said = page.locator('.lineup-host .lineup-component[data-component-id="said"]')
    expect(said).to_contain_text("Recorded: completed")
