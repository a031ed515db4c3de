"""A surface whose js does not parse says where (issue 24): the message, the line and the
column of its js, in its card and in host.problems, instead of "the browser console says".

The page finds it without running the script (js/syntax_check.js: the same text in a worker,
made never to parse); js/tests/syntax_check.test.js checks that nothing of it can run.
"""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from .conftest import OpenNotebook
from .test_surfaces import card

OPEN = """
import json
from lineup_jupyter import Host
host = Host(conversation_id="conv_syntax")
agent = host.connect_agent("agent_syntax")
broken = "let a = 1;\\nconst x = ;\\nLineUpSurface.event('ran', {})"
agent.open("broken.1", html="<p>broken</p>", js=broken)
agent.open("fine.1", html="<p>fine</p>", js="LineUpSurface.event('ran', {})")
host
"""


def test_a_syntax_error_is_shown_with_its_message_line_and_column(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([OPEN])
    page = notebook.page
    notice = card(page, "broken.1").locator(".lineup-blocked[data-what='silent']")
    expect(notice).to_contain_text("does not parse", timeout=20_000)
    expect(notice).to_contain_text(re.compile(r"\(line 2, column 1[01] of its js\)"))
    expect(notice).to_contain_text("Unexpected token")
    expect(card(page, "fine.1").locator(".lineup-blocked")).to_have_count(0)
    problems = json.loads(
        notebook.run_cell("print(json.dumps([p.message for p in host.problems]))")
    )
    assert any(re.search(r"line 2, column 1[01] of its js", p) for p in problems), problems
    # Nothing of the broken js ran, in the surface or in the check: only fine.1's event.
    events = json.loads(
        notebook.run_cell(
            "print(json.dumps([r.instance_id for r in host.history"
            " if r.type == 'lineup.v1.ui.event']))"
        )
    )
    assert events == ["fine.1"], events
