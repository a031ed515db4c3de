"""A LineUp agent in the standard library alone: no lineup_jupyter, envelopes built by hand.

It proves the wire contract stands on its own (docs/agents.md): any program that reads and
writes JSON lines can be an agent. It asks the user to pick a colour (a standard `choice`
component), then opens a swatch surface in that colour with a "Darker" button, and says
goodbye when the user closes it. Run it from a notebook:

    plain = host.connect_process(["python", "examples/plain_json_agent.py"])

or over a WebSocket with any client library, writing the same JSON text frames.
"""

import base64
import hashlib
import json
import sys

AGENT_ID = "agent_plain"
COLOURS = {"red": "#c0392b", "green": "#27ae60", "blue": "#2d6cdf"}

HTML = '<div id="swatch"></div><button id="darker">Darker</button> <span id="shade"></span>'
CSS = "#swatch { height: 48px; border-radius: 6px; margin-bottom: 8px; }"
JS = """
const swatch = document.getElementById("swatch");
LineUpSurface.onState((state) => {
  swatch.style.background = state.colour;
  swatch.style.filter = `brightness(${1 - 0.15 * state.shade})`;
  document.getElementById("shade").textContent = `shade ${state.shade}`;
});
document.getElementById("darker").addEventListener("click", () => {
  LineUpSurface.event("darker", {});
});
"""


def integrity(html, css, js):
    """app.integrity as docs/protocol.md (H4) defines it: sha256 over length-framed parts."""
    framed = b"lineup-bundle-v1\n"
    for name, text in (("html", html), ("css", css), ("js", js)):
        data = text.encode("utf-8")
        framed += name.encode() + b"\n" + str(len(data)).encode() + b"\n" + data + b"\n"
    return "sha256-" + base64.b64encode(hashlib.sha256(framed).digest()).decode("ascii")


class Agent:
    def __init__(self, conversation_id):
        self.conversation_id = conversation_id
        self.sent = 0

    def send(self, kind, payload):
        self.sent += 1
        envelope = {
            "v": 1,
            "id": f"plain_{self.sent}",
            "type": "lineup.v1." + kind,
            "conversation_id": self.conversation_id,
            "sender": {"kind": "agent", "id": AGENT_ID},
            "payload": payload,
        }
        sys.stdout.write(json.dumps(envelope) + "\n")
        sys.stdout.flush()  # a pipe is block-buffered: without this the host waits


def main():
    agent = None
    shade = 0
    for line in sys.stdin:
        message = json.loads(line)
        kind = message["type"].removeprefix("lineup.v1.")
        payload = message["payload"]
        if kind == "client.inventory" and agent is None:
            agent = Agent(message["conversation_id"])
            agent.send(
                "component.show",
                {
                    "component_id": "plain.status",
                    "kind": "status",
                    "state": "working",
                    "label": "Waiting for a colour",
                },
            )
            agent.send(
                "component.show",
                {
                    "component_id": "plain.colour",
                    "kind": "choice",
                    "prompt": "Pick a colour",
                    "options": [{"id": name, "label": name.title()} for name in COLOURS],
                },
            )
        elif kind == "component.answer" and payload["component_id"] == "plain.colour":
            if payload["status"] != "answered":
                agent.send(
                    "component.show",
                    {
                        "component_id": "plain.status",
                        "kind": "status",
                        "state": "idle",
                        "label": "No colour, no swatch",
                    },
                )
                continue
            colour = COLOURS[payload["value"][0]]
            agent.send(
                "ui.open",
                {
                    "instance_id": "plain.swatch",
                    "app": {
                        "id": "org.example.swatch",
                        "version": "1.0.0",
                        "html": HTML,
                        "css": CSS,
                        "js": JS,
                        "integrity": integrity(HTML, CSS, JS),
                    },
                    "state": {"colour": colour, "shade": 0},
                },
            )
            agent.send(
                "component.show",
                {
                    "component_id": "plain.status",
                    "kind": "status",
                    "state": "done",
                    "label": "Swatch open",
                },
            )
        elif kind == "ui.event" and payload["event"] == "darker":
            shade = min(shade + 1, 5)
            agent.send(
                "ui.patch",
                {"instance_id": "plain.swatch", "state": {"shade": shade}, "merge": True},
            )
        elif kind == "ui.event" and payload["event"] == "close":
            agent.send(
                "component.show",
                {
                    "component_id": "plain.bye",
                    "kind": "markdown",
                    "markdown": "**Bye** from a plain JSON agent.",
                },
            )
            return 0
        elif kind == "error":
            sys.stderr.write("plain agent: refused: " + payload["message"] + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
