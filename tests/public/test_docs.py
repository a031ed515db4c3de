"""The documentation: the API reference covers every public name, the files the docs and the
code cite exist, and the offline check of the built site can fail (docs/docs.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import lineup_jupyter

from ..docs_offline import css_loads, html_loads

REPO = Path(__file__).resolve().parents[2]
API = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
# A path into the repository, as docs and comments cite one: a top folder, then a file name
# with an extension (globs such as tests/test_mcp*.py and folders are not checked).
CITED = re.compile(
    r"(?<![\w/.-])((?:docs|tests|js|lineup_jupyter|notebooks|examples|bench|\.ci)/"
    r"[\w./-]*\.(?:py|md|js|ipynb|json|toml|yml|png))(?![\w*])"
)
EXAMPLE_NAMES = ("your-demo",)  # placeholders in prose, not files


def public_names() -> list[str]:
    return [name for name in lineup_jupyter.__all__ if name != "__version__"]


@pytest.mark.parametrize("name", public_names())
def test_every_public_name_is_in_the_api_reference(name: str) -> None:
    assert re.search(rf"^::: lineup_jupyter\.{re.escape(name)}$", API, re.MULTILINE), (
        f"docs/api.md has no '::: lineup_jupyter.{name}'"
    )


@pytest.mark.parametrize("name", public_names())
def test_every_public_name_has_a_docstring(name: str) -> None:
    """Its own docstring (``__doc__``, never inherited from a base class or its type)."""
    doc = getattr(lineup_jupyter, name).__doc__
    assert doc and doc.strip(), f"lineup_jupyter.{name} has no docstring"


def test_the_api_reference_names_nothing_that_is_not_public() -> None:
    named = set(re.findall(r"^::: lineup_jupyter\.(\w+)$", API, re.MULTILINE))
    assert named == set(public_names())


def test_every_file_the_repository_cites_exists() -> None:
    """Docs, comments and messages point only to files in the repository (no design notes or
    corpora kept elsewhere): each cited path of a tracked text file exists."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    missing: dict[str, list[str]] = {}
    for name in tracked:
        path = REPO / name
        if path.suffix not in {".md", ".py", ".js", ".toml", ".yml"} or not path.is_file():
            continue
        for cited in CITED.findall(path.read_text(encoding="utf-8", errors="replace")):
            if any(example in cited for example in EXAMPLE_NAMES):
                continue
            if not (REPO / cited).exists():
                missing.setdefault(cited, []).append(name)
    assert missing == {}


def test_the_offline_check_sees_every_kind_of_remote_load() -> None:
    """The control for ./dev docs' check: each way a page could fetch from another host is
    reported; text links, local files and data: URLs are not."""
    page = """<html><head>
      <script src="https://cdn.example/a.js"></script>
      <link rel="stylesheet" href="//cdn.example/a.css">
      <link rel="icon" href="https://cdn.example/favicon.ico">
      <style>@import "https://fonts.example/f.css"; p { background: url(//x.example/b.png) }</style>
      <script type="module">await import("https://cdn.example/m.mjs")</script>
    </head><body>
      <img src="https://img.example/i.png"><img srcset="small.png 1x, https://img.example/2.png 2x">
      <iframe src="https://frame.example/"></iframe><p style="background:url(https://s.example/)">
      <a href="https://example.org/">a link is not a load</a>
      <img src="../assets/local.png"><img src="data:image/png;base64,AAAA">
      <script src="../assets/local.js"></script>
    </body></html>"""
    loads = html_loads(page)
    assert len(loads) == 10, loads
    assert not any("example.org" in load or "local" in load for load in loads)
    assert css_loads("a{background:url('https://x.example/y')} b{background:url(local.png)}") == [
        "url(https://x.example/y)"
    ]


def test_the_offline_check_allows_the_mermaid_loader_only_without_a_diagram() -> None:
    loader = (
        '<script type="module">const m = await import('
        '"https://cdnjs.cloudflare.com/ajax/libs/mermaid/11.10.0/mermaid.esm.min.mjs")</script>'
    )
    assert html_loads(loader) == []
    diagram = '<div class="jp-Mermaid"><pre class="mermaid">graph TD; a-->b</pre></div>'
    assert len(html_loads(loader + diagram)) == 1


# Written in pieces so that this file does not name what it looks for.
OUTSIDE = re.compile(
    "|".join(
        (
            r"\.\./" + "shared",
            r"\b" + "shared" + r"/(?:corpora|design|spec)\b",
            r"\b" + "design" + r"/[A-Z-]+\.md\b",
            r"(?<![\w.~])/(?:" + "work|home|root|Users" + r")/[\w.-]",
        )
    )
)
# A made-up path the broker must not leak into an agent's error: not a path of this machine.
FAKE_PATHS = {"tests/capabilities/test_broker.py"}


def test_no_file_names_a_path_outside_the_repository() -> None:
    """A plain clone stands alone: no tracked file points to files kept beside the repository
    or to a path of a particular machine (CI finds the optional corpora at run time)."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    found = []
    for name in tracked:
        path = REPO / name
        if name in FAKE_PATHS or not path.is_file() or path.is_symlink():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{name}: {m.group(0)}" for m in OUTSIDE.finditer(text)]
    assert found == []
