"""MCP in a real kernel (ipykernel, its asyncio loop): connecting, opening an app and waiting
for its result from a cell neither blocks nor deadlocks the kernel, and the host's view is fed
on the kernel's loop (docs/mcp-apps.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.kernel

WEATHER = Path(__file__).resolve().parents[1] / "mcp_servers" / "weather.py"


def test_a_cell_connects_opens_and_waits_without_deadlocking_the_kernel(tmp_path: Path) -> None:
    cells = [
        "from lineup_jupyter import Host\n"
        "host = Host(conversation_id='conv_01')\n"
        "sent = []\n"
        "host.widget.send = lambda content, buffers=None: sent.append(content)\n"
        f"server = host.connect_mcp([{sys.executable!r}, {str(WEATHER)!r}])\n"
        "app = server.open('show_weather', {'city': 'Paris'})\n"
        "print('waited:', app.wait(30)['structuredContent'])",
        # The next cell: the kernel's loop ran, so the host's side caught up.
        "ops = [op['op'] + ':' + op.get('method', '') for m in sent if m['kind'] == 'feed'"
        " for op in m['ops']]\n"
        "print('result:', app.result['structuredContent'])\n"
        "print('ops:', ops)\n"
        "server.close()\n"
        "print('status:', server.status)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for cell in notebook.cells for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"], outputs
    text = "".join(o.get("text", "") for o in outputs)
    assert "waited: {'city': 'Paris', 'temperature': 21}" in text
    assert "result: {'city': 'Paris', 'temperature': 21}" in text
    assert (
        "ops: ['mcp_open:', 'mcp_notify:ui/notifications/tool-input', "
        "'mcp_notify:ui/notifications/tool-result']" in text
    )
    assert "status: ended" in text


RAW = Path(__file__).resolve().parents[1] / "mcp_servers" / "raw.py"


def test_in_a_kernel_a_flood_is_one_problem_an_exit_is_seen_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    """Issue 26 as measured there, in a kernel: 5000 garbage lines were 5000 tracebacks in
    the cell's output, an exited server stayed `ready`, a thread outlived close. Here: one
    counted problem and no traceback, `ended` with the exit code, every thread given back.
    The controls: the server's log says it wrote the 5000 lines and quit."""
    log = tmp_path / "raw.log"
    cells = [
        "import asyncio, threading\n"
        "from lineup_jupyter import Host\n"
        "host = Host(conversation_id='conv_01')\n"
        "before = threading.active_count()\n"
        f"server = host.connect_mcp([{sys.executable!r}, {str(RAW)!r}, {str(log)!r}])\n"
        "server.call('garbage')\n"
        "server.call('quit')",
        "for _ in range(1500):  # the kernel's loop runs the host's side meanwhile\n"
        "    if server.status == 'ended' and len(host.problems) == 2:\n"
        "        break\n"
        "    await asyncio.sleep(0.02)\n"
        "print('status:', server.status, '|', server.problem)\n"
        "print('problems:', [(p.message[:40], p.count) for p in host.problems])\n"
        "server.close()\n"
        "for _ in range(1500):\n"
        "    if threading.active_count() <= before:\n"
        "        break\n"
        "    await asyncio.sleep(0.02)\n"
        "print('threads left:', threading.active_count() - before)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    outputs = [o for cell in notebook.cells for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"], outputs
    text = "".join(o.get("text", "") for o in outputs)
    assert '"garbage": 5000' in log.read_text() and '"quit": true' in log.read_text()
    assert "status: ended | the server's process exited with code 0" in text
    assert "('the server wrote lines that are no JSON-', 5000)" in text
    assert "threads left: 0" in text
    assert "Traceback" not in text and len(text) < 4000  # not a flood in the cell
