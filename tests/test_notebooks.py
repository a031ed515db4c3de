"""Every notebook in notebooks/ runs top to bottom in a real kernel and shows its key results.

Each notebook has an entry in EXPECTED: strings its outputs (stdout and text/plain) must
contain, so a notebook that runs but no longer demonstrates what it teaches fails. A notebook
without an entry fails too, so a new notebook comes with its expectations.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))

EXPECTED: dict[str, list[str]] = {
    "01-quickstart.ipynb": [
        "[U5 invalid] $.payload.js",  # the refused patch explains itself
        "'Shanghai'",
        "('completed', {'city': 'Oslo', 'temperature': 21})",  # a capability ran
        "'rejected'",  # and one the notebook denied
    ],
}


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS


def test_every_notebook_has_expectations() -> None:
    """A new notebook needs an entry in EXPECTED; a removed one leaves none behind."""
    assert sorted(p.name for p in NOTEBOOKS) == sorted(EXPECTED)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path) -> None:
    assert path.name in EXPECTED, f"add what {path.name} must show to EXPECTED"
    raw = json.loads(path.read_text("utf-8"))
    assert all(cell.get("id") for cell in raw["cells"]), "every cell has an id"
    notebook = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), (
        "outputs are stripped in the repo"
    )
    NotebookClient(
        notebook,
        timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in outputs
    )
    missing = [expected for expected in EXPECTED[path.name] if expected not in text]
    assert not missing, f"{path.name} did not show: {missing}"
