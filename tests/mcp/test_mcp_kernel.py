"""MCP in a real kernel (ipykernel, its asyncio loop): connecting, opening an app and waiting
for its result from a cell neither blocks nor deadlocks the kernel, and the host's view is fed
on the kernel's loop (docs/mcp-apps.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

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
