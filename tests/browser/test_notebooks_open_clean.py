"""The teaching notebooks open unmodified (issue 24: "notebooks show as modified on open"):
each of notebooks/*.ipynb, opened in JupyterLab with its kernel started, is not dirty, so
closing it asks nothing and saving it changes nothing in git."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from .jupyter import JupyterServer, NotebookPage

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))

DIRTY = """(name) => {
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w?.context?.path === name) return w.context.model.dirty;
  }
  throw new Error(`notebook ${name} is not open`);
}"""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_a_notebook_opens_unmodified(page: Page, jupyter: JupyterServer, path: Path) -> None:
    name = f"clean-{path.name}"
    shutil.copy(path, jupyter.root / name)
    notebook = NotebookPage(page, jupyter, name, "lab").open()
    notebook.round_trip()  # the kernel's info (language_info) has reached the page
    page.wait_for_timeout(500)  # and whatever JupyterLab does with it
    if page.evaluate(DIRTY, name):
        page.evaluate(SAVE, name)
        saved = json.loads((jupyter.root / name).read_text(encoding="utf-8"))
        original = json.loads(path.read_text(encoding="utf-8"))
        raise AssertionError(f"{path.name} is modified on open: {changes(original, saved)}")


SAVE = """async (name) => {
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w?.context?.path === name) return await w.context.save();
  }
}"""


def changes(before: Any, after: Any, where: str = "$") -> list[str]:
    """Where two JSON values differ, as paths with the two values (cut)."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = []
        for key in sorted(set(before) | set(after)):
            found += changes(before.get(key), after.get(key), f"{where}.{key}")
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        pairs = enumerate(zip(before, after, strict=True))
        return [c for i, (a, b) in pairs for c in changes(a, b, f"{where}[{i}]")]
    if before == after:
        return []
    return [f"{where}: {json.dumps(before)[:80]} -> {json.dumps(after)[:80]}"]
