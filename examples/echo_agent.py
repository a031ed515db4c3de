"""An echo agent, run by the host as a child process: a surface with a button, each click
echoed back with a patch, and a confirm before the counter is reset.

In a notebook:

    host = Host(conversation_id="conv_01"); host          # shows the host's widget
    echo = host.connect_process([sys.executable, "examples/echo_agent.py"])

It speaks lineup.v1 as JSON lines on stdin and stdout (docs/agents.md), and uses
lineup_jupyter only where an agent author gains from it: ``bundle_integrity`` computes the
bundle's digest (H4) and ``validate_envelope`` checks each envelope before it is sent, so a
mistake shows up here, on stderr, instead of as a refusal from the host. Logs go to stderr:
stdout carries envelopes only.
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

from lineup_jupyter import ProtocolError, bundle_integrity, validate_envelope

AGENT_ID = "agent_echo"
INSTANCE = "echo.main"
HTML = """<main>
  <label>Say <input id="text" value="hello"></label>
  <button id="echo">Echo</button> <button id="reset">Reset</button>
  <p id="said" role="status">Nothing echoed yet.</p>
</main>"""
CSS = "main { font: 14px var(--lineup-font, sans-serif); padding: 8px; } p { margin: 8px 0 0; }"
JS = """
const said = document.getElementById("said");
const text = document.getElementById("text");
LineUpSurface.onState((state) => {
  said.textContent = state.count ? `#${state.count}: ${state.last}` : "Nothing echoed yet.";
});
document.getElementById("echo").addEventListener("click", () => {
  LineUpSurface.event("echo", { text: text.value });
});
document.getElementById("reset").addEventListener("click", () => LineUpSurface.event("reset", {}));
"""


class Wire:
    """Envelopes out on stdout, one per line."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        self._ids = itertools.count(1)

    def send(self, type_: str, payload: dict[str, Any]) -> None:
        envelope = {
            "v": 1,
            "id": f"msg_echo_{next(self._ids)}",
            "type": f"lineup.v1.{type_}",
            "conversation_id": self.conversation_id,
            "sender": {"kind": "agent", "id": AGENT_ID},
            "payload": payload,
        }
        try:
            validate_envelope(envelope)
        except ProtocolError as error:  # our own bug: say so, send nothing
            print(f"echo agent: not sending {type_}: {error}", file=sys.stderr, flush=True)
            return
        print(json.dumps(envelope, ensure_ascii=False), flush=True)


def main() -> int:
    wire: Wire | None = None
    count = 0
    asked = 0
    for line in sys.stdin:  # one envelope per line, until the host closes our stdin
        envelope = json.loads(line)
        kind, payload = envelope["type"], envelope["payload"]
        if wire is None:  # the first line is client.inventory (C1): it names the conversation
            wire = Wire(envelope["conversation_id"])
            wire.send(
                "ui.open",
                {
                    "instance_id": INSTANCE,
                    "app": {
                        "id": "com.example.echo",
                        "version": "1.0.0",
                        "name": "Echo",
                        "html": HTML,
                        "css": CSS,
                        "js": JS,
                        "integrity": bundle_integrity(HTML, CSS, JS),
                    },
                    "state": {"count": 0, "last": ""},
                },
            )
        elif kind == "lineup.v1.ui.event" and payload["event"] == "echo":
            count += 1
            said = str(payload["data"].get("text", ""))[:200]
            wire.send(
                "ui.patch",
                {"instance_id": INSTANCE, "state": {"count": count, "last": said}, "merge": True},
            )
        elif kind == "lineup.v1.ui.event" and payload["event"] == "reset":
            asked += 1
            wire.send(
                "component.show",
                {
                    "component_id": f"echo.reset.{asked}",
                    "kind": "confirm",
                    "prompt": f"Reset the counter ({count} echoes)?",
                    "confirm_label": "Reset",
                },
            )
        elif kind == "lineup.v1.component.answer" and payload.get("value") is True:
            count = 0
            wire.send("ui.patch", {"instance_id": INSTANCE, "state": {"count": 0, "last": ""}})
            wire.send(
                "component.show", {"component_id": "echo.note", "kind": "text", "text": "Reset."}
            )
        elif kind == "lineup.v1.ui.event" and payload["event"] == "close":
            return 0  # the user closed the surface: nothing left to do
        elif kind == "lineup.v1.error":
            print(f"echo agent: refused: {payload['message']}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
