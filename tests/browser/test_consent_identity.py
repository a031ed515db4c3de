"""Remember is bound to who asked (issue 22 section 3; H27, C8), clicked for real in JupyterLab.

A card says what its Remember covers (the agent, how the host knows it, the capability, until
when); ticking it on agent A's card skips none of agent B's cards, even when B reuses A's
call_id; it does settle A's own waiting cards of that capability. Each test ends by reading
what each agent received from the kernel.
"""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import Locator, expect

from .conftest import OpenNotebook, decide
from .jupyter import NotebookPage

SETUP = """\
import json
from lineup_jupyter import Host

host = Host(conversation_id="conv_01")
agents = {name: host.connect_agent(name) for name in ("alice", "bob")}
results = {}  # (agent, call_id) -> what that agent's handle resolved with

def ask(name, arguments, call_id):
    handle = agents[name].call("artifact.save", arguments, reason="save it", call_id=call_id)
    handle.add_done_callback(lambda r: results.__setitem__(
        f"{name}/{r.call_id}", {"status": r.status, "result": r.result}))

host
"""


def cards(notebook: NotebookPage) -> Locator:
    return notebook.page.locator(".lineup-host .lineup-consent .lineup-prompt")


def card_of(notebook: NotebookPage, agent: str) -> Locator:
    return cards(notebook).filter(
        has=notebook.page.locator(f'.lineup-prompt-title:has-text("«{agent}»")')
    )


def received(notebook: NotebookPage) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(notebook.run_cell("print(json.dumps(results))"))
    return found


def test_h27_remember_on_alices_card_does_not_skip_bobs_and_says_its_scope(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP])
    page = notebook.page
    notebook.run_cell("ask('alice', {'path': 'alice1.txt', 'content': 'a'}, 'c1')")
    alice = card_of(notebook, "alice")
    expect(alice).to_be_visible()
    scope = alice.locator(".lineup-prompt-scope")  # said before the box is ticked
    expect(scope).to_contain_text("Remember covers only Agent «alice» (the kernel)")
    expect(scope).to_contain_text("artifact.save")
    expect(scope).to_contain_text("Another agent, or one taking this name later, is asked again")
    expect(scope.locator(".lineup-prompt-agent")).to_have_text("«alice»")  # the agent's style
    remember = alice.locator(".lineup-prompt-remember")
    decide(remember.locator("input"), remember)  # Remember is a decision too
    decide(alice.locator("button.lineup-allow"))
    expect(alice).to_have_count(0)
    grant = page.locator(".lineup-consent-grant")
    expect(grant).to_contain_text("artifact.save for Agent «alice» (the kernel)")
    # Control: alice's next call runs on the grant, with no card.
    notebook.run_cell("ask('alice', {'path': 'alice2.txt', 'content': 'a'}, 'c2')")
    assert received(notebook)["alice/c2"]["status"] == "completed"
    expect(cards(notebook)).to_have_count(0)
    # Attack: bob, same capability, and alice's own call_id.
    notebook.run_cell("ask('bob', {'path': 'alice1.txt', 'content': 'a'}, 'c1')")
    bob = card_of(notebook, "bob")
    expect(bob).to_be_visible()  # 0 cards skipped
    expect(bob.locator(".lineup-prompt-scope")).to_contain_text("Agent «bob»")
    assert "bob/c1" not in received(notebook)  # 0 results of alice's
    decide(bob.locator("button.lineup-deny"))
    expect(bob).to_have_count(0)
    got = received(notebook)
    assert got["bob/c1"] == {"status": "rejected", "result": None}
    assert got["alice/c1"]["status"] == "completed"


def test_h27_remember_settles_that_agents_waiting_cards_and_no_one_elses(
    open_notebook: OpenNotebook,
) -> None:
    notebook = open_notebook([SETUP])
    for n in range(3):  # a polling agent queued three cards
        notebook.run_cell(f"ask('alice', {{'path': 'poll{n}.txt', 'content': '{n}'}}, 'p{n}')")
    notebook.run_cell("ask('bob', {'path': 'bob.txt', 'content': 'b'}, 'b0')")
    expect(cards(notebook)).to_have_count(4)
    newest = cards(notebook).nth(2)
    expect(newest.locator(".lineup-prompt-agent").first).to_have_text("«alice»")
    remember = newest.locator(".lineup-prompt-remember")
    decide(remember.locator("input"), remember)
    decide(newest.locator("button.lineup-allow"))
    expect(cards(notebook)).to_have_count(1)  # alice's three are answered, bob's waits
    expect(card_of(notebook, "bob")).to_be_visible()
    got = received(notebook)
    assert [got[f"alice/p{n}"]["status"] for n in range(3)] == ["completed"] * 3
    assert "bob/b0" not in got
