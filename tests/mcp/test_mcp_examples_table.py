"""docs/mcp-apps.md's compatibility table is what tests/browser/test_mcp_examples.py runs
(issue 23): the table is written from tests/mcp_servers/examples.py, whose entries the browser
test parametrizes over (an entry that does not work is a strict xfail there), and every server
it names is an exact dev dependency in package.json."""

from __future__ import annotations

import json

from tests.mcp_servers.examples import DOC, EXAMPLES, REPO, written


def test_the_docs_table_is_the_tested_list() -> None:
    text = DOC.read_text()
    assert written(text) == text, "run: python -m tests.mcp_servers.examples"


def test_every_example_is_an_exact_dev_dependency() -> None:
    pins = json.loads((REPO / "package.json").read_text())["devDependencies"]
    for example in EXAMPLES:
        version = pins[example.package]
        assert version[0].isdigit(), f"{example.package} is pinned as {version!r}, not exact"
