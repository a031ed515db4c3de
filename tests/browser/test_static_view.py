"""A saved notebook opened where its widgets cannot be drawn shows the host's static view
(lineup_jupyter/widgets/_static.py), in real JupyterLab: a notebook executed elsewhere and saved
without its widget state is untrusted here, so JupyterLab draws only safe MIME types, and
the host's text/html is what the reader sees instead of "model not found"."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient
from playwright.sync_api import Dialog, Page, expect

from .jupyter import JupyterServer, NotebookPage

CELL = """\
import tempfile
from lineup_jupyter import Host
host = Host(conversation_id="conv_static", data_dir=tempfile.mkdtemp())
agent = host.connect_agent("agent_demo")
agent.open("weather.01", html="<p>", state={"city": "Oslo"}, name="Weather")
agent.say("It is **sunny** <img src=x onerror=alert(1)>", component_id="said")
agent.ask_choice("Which unit?", ["C", "F"], component_id="unit")
host"""


def test_a_saved_host_reads_as_its_static_view(page: Page, jupyter: JupyterServer) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    NotebookClient(notebook, timeout=60, kernel_name="python3", store_widget_state=False).execute()
    nbformat.write(notebook, jupyter.root / "saved-static.ipynb")
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)

    NotebookPage(page, jupyter, "saved-static.ipynb", "lab").open()
    output = page.locator(".jp-OutputArea-output").filter(has_text="lineup host")
    expect(output).to_contain_text("conversation conv_static · 1 surface, 2 components")
    expect(output).to_contain_text("Weather · weather.01 · local.notebook.surface 0.1.0")
    expect(output.locator("strong")).to_have_text("sunny")  # the kernel's sanitized Markdown
    expect(output).to_contain_text("Which unit? (waiting for the user)")
    expect(page.locator(".jp-OutputArea-output", has_text="model not found")).to_have_count(0)
    assert dialogs == []
    page.remove_listener("dialog", on_dialog)  # the page goes on to the next test
