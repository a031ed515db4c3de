"""A stdio MCP server written by hand, to misbehave at the wire, where the SDK would not let it.

Run as ``python tests/mcp_servers/raw.py LOG [options]``. It appends what it did to LOG, one
JSON object a line (its pid first; every tools/call it received; the bytes it wrote), so a
test can prove the misbehaviour really happened (the control) whatever the host saw.
Options: ``--ignore-term`` (SIGTERM does nothing, nor does the end of stdin), ``--silent``
(never answers the handshake), ``--tools N`` (N more tools), ``--deep-schema`` (one tool's
inputSchema is 200 levels deep), ``--big-strings`` (a 4 MiB tool title and a 1 MiB version).

Its tools (each answers ``{"ok": true}`` as structuredContent unless it says otherwise):
``echo`` (its arguments back), ``quit`` (answers, then exits 0: the server goes while
idle), ``nan`` / ``inf`` / ``bigint`` / ``surrogate`` / ``deep`` (a result with NaN, 1e999,
9007199254740993, a lone surrogate, 300 levels), ``garbage`` (5 000 lines that are not
JSON first), ``requests`` (``count`` requests to the client first, 20 000 by default),
``longline`` (32 MiB with no newline, then its answer), ``longanswer`` (an answer of
32 MiB), ``stderr`` (64 MiB to stderr first), ``stall`` (stops reading stdin, never
answers). ``show`` has an app (``ui://raw/app.html``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

APP_URI = "ui://raw/app.html"
APP_HTML = "<!doctype html><html><body><p>raw</p></body></html>"
MIB = 1024 * 1024
TOOLS = [
    "echo",
    "quit",
    "nan",
    "inf",
    "bigint",
    "surrogate",
    "deep",
    "garbage",
    "requests",
    "longline",
    "longanswer",
    "stderr",
    "stall",
]

out = sys.stdout.buffer
options = sys.argv[2:]
log_path = sys.argv[1]


def log(**what: Any) -> None:
    with open(log_path, "a", encoding="utf-8") as file:
        file.write(json.dumps(what) + "\n")


_writing = threading.Lock()


def write(data: bytes) -> None:
    with _writing:
        out.write(data)
        out.flush()


def send(message: dict[str, Any]) -> None:
    write(json.dumps(message).encode() + b"\n")


def answer(request_id: Any, result: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


def tools() -> list[dict[str, Any]]:
    listed = [tool(name) for name in TOOLS]
    listed.append(tool("show", _meta={"ui": {"resourceUri": APP_URI}}))
    listed.extend(tool(f"more_{i}") for i in range(int(option("--tools", "0"))))
    if "--deep-schema" in options:
        schema: dict[str, Any] = {"type": "object"}
        for _ in range(200):
            schema = {"type": "object", "properties": {"x": schema}}
        listed.append({"name": "deep_schema", "inputSchema": schema})
    if "--big-strings" in options:
        listed.append(tool("titled", title="T" * (4 * MIB), description="D" * MIB))
    return listed


def option(name: str, default: str) -> str:
    return options[options.index(name) + 1] if name in options else default


def call(request_id: Any, name: str, arguments: dict[str, Any]) -> None:
    log(call=name)
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":'
    done = {"content": [], "structuredContent": {"ok": True}}
    if name == "echo":
        answer(request_id, {"content": [], "structuredContent": arguments})
    elif name == "quit":
        answer(request_id, done)
        log(quit=True)
        sys.exit(0)
    elif name in ("nan", "inf", "bigint", "surrogate"):
        value = {"nan": b"NaN", "inf": b"1e999", "bigint": b"9007199254740993"}.get(name)
        value = value or b'"\\ud800"'
        write(head + b'{"content":[],"structuredContent":{"x":' + value + b"}}}\n")
    elif name == "deep":
        write(
            head + b'{"content":[],"structuredContent":{"x":' + b"[" * 300 + b"]" * 300 + b"}}}\n"
        )
    elif name == "garbage":
        for i in range(5000):
            write(f"garbage line {i}: this is no JSON\n".encode())
        log(garbage=5000)
        answer(request_id, done)
    elif name == "requests":  # from a thread: the main one reads the client's answers
        count = int(arguments.get("count", 20000))

        def flood() -> None:
            for i in range(count):
                send({"jsonrpc": "2.0", "id": f"s{i}", "method": "sampling/createMessage"})
            log(requests=count)
            answer(request_id, done)

        threading.Thread(target=flood).start()
    elif name == "longline":
        for _ in range(32):
            write(b"x" * MIB)
        write(b"\n")
        log(longline=32 * MIB)
        answer(request_id, done)
    elif name == "longanswer":
        write(head + b'{"content":[{"type":"text","text":"')
        for _ in range(32):
            write(b"x" * MIB)
        write(b'"}]}}\n')
        log(longanswer=32 * MIB)
        answer(request_id, done)
    elif name == "stderr":
        err = sys.stderr.buffer
        for _ in range(64):
            err.write(b"e" * (MIB - 1) + b"\n")
        err.write(b"the last line of stderr\n")
        err.flush()
        log(stderr=64 * MIB)
        answer(request_id, done)
    elif name == "stall":
        log(stalled=True)
        time.sleep(3600)
    elif name == "show":
        answer(request_id, done)


def main() -> None:
    if "--ignore-term" in options:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    log(pid=os.getpid())
    version = "V" * MIB if "--big-strings" in options else "1.0"
    for line in sys.stdin.buffer:
        if "--silent" in options or not line.strip():
            continue
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method is None:  # an answer of the client's (to our requests): counted
            log(answered=str(message.get("id")), error="error" in message)
        elif method == "initialize":
            answer(
                request_id,
                {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}, "resources": {}},
                    "serverInfo": {"name": "raw", "version": version},
                },
            )
        elif method == "tools/list":
            answer(request_id, {"tools": tools()})
        elif method == "tools/call":
            params = message["params"]
            call(request_id, params["name"], params.get("arguments") or {})
        elif method == "resources/read":
            contents = {"uri": APP_URI, "mimeType": "text/html;profile=mcp-app", "text": APP_HTML}
            answer(request_id, {"contents": [contents]})
        elif request_id is not None:
            answer(request_id, {})
    if "--ignore-term" in options:  # nor does the end of its stdin end it: only SIGKILL
        log(stdin_closed=True)
        time.sleep(3600)


if __name__ == "__main__":
    main()
