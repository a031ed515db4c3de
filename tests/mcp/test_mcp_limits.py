"""MCP servers that cannot hurt the kernel (docs/mcp-apps.md, "Limits"): a hand-written
server that misbehaves at the wire (tests/mcp_servers/raw.py) over stdio, and the SDK's
hostile server over streamable HTTP. Each attack has its control: the server's own log
shows it really sent the 32 MiB, really got (or never got) the call, really ignored SIGTERM;
the host's side shows what it did instead, where the user looks.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import Host, Limits, McpServer, UsageError
from lineup_jupyter.mcp import _connection, _stdio

from ..conftest import CONVERSATION
from ..mcp_helpers import DEADLINE, View

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "tests" / "mcp_servers" / "raw.py"
MIB = 1024 * 1024


class Raw:
    """The raw server's command and what it logged (tests/mcp_servers/raw.py)."""

    def __init__(self, folder: Path, name: str = "raw") -> None:
        self.log = folder / f"{name}.log"

    def argv(self, *options: str) -> list[str]:
        return [sys.executable, str(RAW), str(self.log), *options]

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def pid(self) -> int:
        assert until(lambda: any("pid" in e for e in self.entries()))
        return int(next(e["pid"] for e in self.entries() if "pid" in e))

    def calls(self) -> list[str]:
        return [e["call"] for e in self.entries() if "call" in e]

    def said(self, key: str) -> Any:
        return next((e[key] for e in self.entries() if key in e), None)


def until(condition: Callable[[], bool]) -> bool:
    """Wait for ``condition`` (a signal-free state: a process's end, a thread's), at most
    DEADLINE seconds, looking every 20 ms; never a duration asserted."""
    pause = threading.Event()
    for _ in range(int(DEADLINE / 0.02)):
        if condition():
            return True
        pause.wait(0.02)
    return condition()


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not reaped, counts as ended)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def ended(server: McpServer) -> Callable[[], bool]:
    return lambda: server.status == "ended"


def threads() -> int:
    return threading.active_count()


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def peak_reset() -> int:
    """Reset this process's peak RSS (Linux: clear_refs 5) and return the RSS now, in bytes."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status("VmRSS")


def peak() -> int:
    return _status("VmHWM")


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(field)


linux = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")


@pytest.fixture
def raw(tmp_path: Path) -> Raw:
    return Raw(tmp_path)


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step of a stop (stdin closed, SIGTERM, SIGKILL) waits 0.5 s, not 2 s: for a server
    that is known to ignore the step, whose grace would only be waited out. What is tested
    is that the next step comes, never how long the grace is."""
    monkeypatch.setattr(_stdio, "STOP_GRACE", 0.5)


@pytest.fixture
def server(host: Host, raw: Raw) -> Iterator[McpServer]:
    connected = host.connect_mcp(raw.argv(), timeout=DEADLINE)
    yield connected
    connected.close()


def problems(host: Host, fragment: str) -> list[Any]:
    return [p for p in host.problems if fragment in p.message]


# ---- lifecycle ---------------------------------------------------------------------


def test_a_server_that_exits_while_idle_ends_at_once_with_its_exit_code(
    host: Host, raw: Raw, server: McpServer
) -> None:
    ended = threading.Event()
    host.problems.watch(ended.set)
    assert server.call("quit")["structuredContent"] == {"ok": True}
    assert ended.wait(DEADLINE)  # no request in flight: the end of its stdout says it
    assert raw.said("quit") is True and until(lambda: not alive(raw.pid()))  # the control
    assert server.status == "ended"
    assert server.problem == "the server's process exited with code 0"
    (problem,) = host.problems
    assert (problem.where, problem.message) == ("MCP server 'raw'", server.problem)


def test_a_server_killed_while_its_card_waits_fails_the_call_and_withdraws_the_card(
    host: Host, raw: Raw, server: McpServer
) -> None:
    """SIGKILL while the user looks at the card: the call ends failed with the reason, the
    card is withdrawn, the audit says failed, and the server received the call 0 times.
    The control: the call the app's open made did reach its log."""
    view = View(host)
    app = server.open("show")
    assert app.wait(DEADLINE) is not None
    view.request(app.app_id, 1, "tools/call", {"name": "echo", "arguments": {"n": 1}})
    (waiting,) = host.pending_calls
    assert waiting.capability.name == "mcp.raw.echo"
    os.kill(raw.pid(), signal.SIGKILL)
    error = view.wait_response(app.app_id, 1)["error"]
    assert error["data"]["status"] == "failed"
    assert "ended by signal 9 (SIGKILL)" in error["data"]["reason"]
    assert host.pending_calls == []
    view.send({"kind": "consent_sync"})
    cards = next(m for m in reversed(view.sent) if m["kind"] == "consent")["pending"]
    assert cards == []  # withdrawn: nothing left to click
    (row,) = host.audit.query(call_id=waiting.call_id)
    assert (row["status"], row["decision"]) == ("failed", None)
    assert raw.calls() == ["show"]  # echo: 0 times
    with pytest.raises(UsageError, match="already answered: failed"):  # Allow runs nothing
        host.decide(waiting.call_id, "allow")


@linux
@pytest.mark.usefixtures("short_grace")
def test_a_failed_connect_reaps_a_server_that_ignores_sigterm(
    host: Host, raw: Raw, caplog: pytest.LogCaptureFixture
) -> None:
    before = threads()
    failure: list[BaseException] = []

    def connect() -> None:
        try:
            host.connect_mcp(raw.argv("--silent", "--ignore-term"), timeout=1)
        except UsageError as error:
            failure.append(error)

    trying = threading.Thread(target=connect)
    trying.start()
    pid = raw.pid()
    ignored = int(
        next(
            line.split()[1]
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("SigIgn:")
        ),
        16,
    )
    assert ignored & (1 << (signal.SIGTERM - 1))  # the control: SIGTERM really does nothing
    trying.join(DEADLINE)
    assert "did not answer within 1 s" in str(failure[0])
    assert raw.said("stdin_closed") is True  # the control: stdin's end did not end it either
    assert not alive(pid)  # SIGKILLed before connect_mcp returned
    assert until(lambda: threads() <= before)  # and every thread it started ended
    assert host.mcp_servers == []
    assert not [r for r in caplog.records if r.exc_info]  # no traceback on the way
    gc.collect()  # a pipe or a process it left unreaped fails this test, not a later one


@linux
def test_what_one_server_costs_and_that_close_gives_it_all_back(host: Host, tmp_path: Path) -> None:
    threads_before, descriptors_before = threads(), descriptors()
    servers = [host.connect_mcp(Raw(tmp_path, f"r{i}").argv(), name=f"r{i}") for i in range(3)]
    per_thread = (threads() - threads_before) / 3
    per_descriptor = (descriptors() - descriptors_before) / 3
    assert per_thread >= 2 and per_descriptor >= 5  # the control: the costs are seen
    pids = [Raw(tmp_path, f"r{i}").pid() for i in range(3)]
    host.close()
    assert [alive(pid) for pid in pids] == [False] * 3
    assert until(lambda: threads() <= threads_before)
    assert descriptors() <= descriptors_before
    assert [s.status for s in servers] == ["ended"] * 3


def test_h44_the_number_of_servers_is_capped(tmp_path: Path) -> None:
    with Host(CONVERSATION, limits=Limits(max_mcp_servers=2)) as host:
        first = host.connect_mcp(Raw(tmp_path, "a").argv(), name="a")
        host.connect_mcp(Raw(tmp_path, "b").argv(), name="b")  # the control: two connect
        with pytest.raises(UsageError, match=r"2 MCP servers are connected.*max_mcp_servers"):
            host.connect_mcp(Raw(tmp_path, "c").argv(), name="c")
        assert not (tmp_path / "c.log").exists()  # refused before its process started
        first.close()
        host.connect_mcp(Raw(tmp_path, "c").argv(), name="c")  # room again
        assert [s.name for s in host.mcp_servers if s.status == "ready"] == ["b", "c"]


def test_servers_dropped_from_the_list_are_closed(host: Host, tmp_path: Path) -> None:
    """Past the ended servers the view lists, the oldest are dropped and let go of."""
    dropped = []
    for i in range(11):
        server = host.connect_mcp(Raw(tmp_path, f"d{i}").argv(), name=f"d{i}")
        server.call("quit")
        assert until(ended(server))
        dropped.append(server)
    host.connect_mcp(Raw(tmp_path, "last").argv(), name="last")
    assert dropped[0] not in host.mcp_servers and dropped[1] not in host.mcp_servers
    assert dropped[0].view()["status"] == "closed"  # closed, not only forgotten


# ---- bounds ------------------------------------------------------------------------


@linux
def test_a_32_mib_line_is_let_go_of_while_it_is_read(
    host: Host, raw: Raw, server: McpServer
) -> None:
    rss = peak_reset()
    assert server.call("longline")["structuredContent"] == {"ok": True}  # it still serves
    with pytest.raises(UsageError, match=r"it is 33554\d+ bytes, over this host's 8388608"):
        server.call("longanswer")
    assert raw.said("longline") == 32 * MIB  # the controls: it did write them both (the
    # host refused the answer 8 MiB in, while the server still wrote: it logs once done)
    assert until(lambda: raw.said("longanswer") == 32 * MIB)
    assert peak() - rss < 24 * MIB  # never held whole (the SDK's reader took +87 MiB)
    assert len(problems(host, "no JSON-RPC messages")) == 1  # the line answering nothing
    assert server.status == "ready"


@linux
def test_stderr_keeps_a_bounded_tail(host: Host, raw: Raw, server: McpServer) -> None:
    rss = peak_reset()
    server.call("stderr")
    server.call("quit")
    assert until(ended(server))
    assert raw.said("stderr") == 64 * MIB  # the control: it really wrote 64 MiB
    assert server.problem is not None and server.problem.endswith("the last line of stderr")
    assert len(server.problem) < 2200
    assert peak() - rss < 24 * MIB


def test_5000_garbage_lines_are_one_counted_problem_not_a_log_flood(
    host: Host, raw: Raw, server: McpServer, capfd: pytest.CaptureFixture[str]
) -> None:
    server.call("garbage")
    assert raw.said("garbage") == 5000  # the control
    (problem,) = problems(host, "no JSON-RPC messages")
    assert problem.count == 5000  # every line seen, one problem
    assert "the first of this run: $: not valid JSON" in problem.traceback
    err = capfd.readouterr().err
    assert "Traceback" not in err and err.count("no JSON-RPC messages") <= 1
    assert server.status == "ready"


def test_the_servers_requests_waiting_for_the_client_are_bounded(
    host: Host, raw: Raw, server: McpServer
) -> None:
    server.call("requests", {"count": 3000}, timeout=DEADLINE)
    assert raw.said("requests") == 3000
    # Each one answered, none left waiting (the last answers may follow the call's own).
    assert until(lambda: len([e for e in raw.entries() if "answered" in e]) == 3000)
    # The control: more than 16 did wait at once, and the host saw it.
    assert len(problems(host, "requests the client had not answered yet")) == 1


def test_too_many_tools_are_refused_within_the_connect(host: Host, raw: Raw) -> None:
    with pytest.raises(UsageError, match=r"it lists 5014 tools, over this host's 1000"):
        host.connect_mcp(raw.argv("--tools", "5000"), timeout=DEADLINE)
    assert not alive(raw.pid())
    assert host.mcp_servers == []


def test_a_servers_strings_are_bounded_where_the_host_keeps_and_shows_them(
    host: Host, raw: Raw
) -> None:
    server = host.connect_mcp(raw.argv("--big-strings"), timeout=DEADLINE)
    try:
        titled = server.tool("titled")
        assert titled.title == "T" * 200 and titled.description == "D" * 2000
        assert server.version == "V" * 200
        listing = next(
            r for r in host.history.select(kind="mcp") if "tools" in str(r.envelope)[:200]
        )
        assert len(json.dumps(listing.envelope)) < 64 * 1024  # the 4 MiB title: its start
    finally:
        server.close()


# ---- errors that say what happened -------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        ("nan", "$: NaN is not a finite JSON number"),
        ("inf", "$: 1e999 is not a finite JSON number"),
        ("bigint", "$.result.structuredContent.x: 9007199254740993 is beyond +/-(2^53-1)"),
        ("surrogate", "$.result.structuredContent.x: the string contains a lone surrogate"),
        ("deep", "]: the value is nested more than 64 levels deep"),
    ],
)
def test_h2_an_answer_that_breaks_i_json_fails_its_request_saying_what(
    raw: Raw, server: McpServer, tool: str, said: str
) -> None:
    with pytest.raises(UsageError) as refused:
        server.call(tool)
    assert "the server's answer was refused: " in str(refused.value)
    assert said in str(refused.value)
    assert raw.calls() == [tool]  # the control: it did answer, the answer was refused
    assert server.status == "ready"
    assert server.call("echo", {"n": 1})["structuredContent"] == {"n": 1}


def test_a_schema_200_levels_deep_refuses_that_tool_alone(host: Host, raw: Raw) -> None:
    server = host.connect_mcp(raw.argv("--deep-schema"), timeout=DEADLINE)
    try:
        names = [tool.name for tool in server.tools]
        assert "deep_schema" not in names and "echo" in names  # the rest stand
        (problem,) = problems(host, "a tool was refused")
        assert "'deep_schema'" in problem.traceback and "nested more than 64" in problem.traceback
    finally:
        server.close()


@pytest.mark.usefixtures("short_grace")  # it reads no more: closing its stdin cannot end it
def test_a_server_that_stops_reading_keeps_every_deadline(raw: Raw, server: McpServer) -> None:
    with pytest.raises(UsageError, match=r"raw.stall: the server did not answer within 1 s"):
        server.call("stall", timeout=1)
    assert raw.said("stalled") is True  # the control: it stopped reading
    # Its stdin's pipe fills (1 MiB sent): the write blocks; the deadline holds all the same.
    with pytest.raises(UsageError, match=r"raw.echo: the server did not answer within 1 s"):
        server.call("echo", {"x": "y" * MIB}, timeout=1)
    pid = raw.pid()
    server.close()
    assert not alive(pid)


# ---- over streamable HTTP ----------------------------------------------------------


@contextlib.contextmanager
def http_hostile() -> Iterator[tuple[subprocess.Popen[str], str]]:
    with subprocess.Popen(
        [sys.executable, "-m", "tests.mcp_servers.hostile", "http"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        port = int(process.stdout.readline())  # printed once the socket listens
        try:
            yield process, f"http://127.0.0.1:{port}/mcp"
        finally:
            process.kill()
            process.wait(DEADLINE)


def test_http_a_server_killed_while_its_card_waits_is_seen_and_fails_the_call(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Streamable HTTP has no connection to watch while idle: the host reaches for it, so a
    server that went ends its waiting calls failed (card withdrawn, audit failed) before
    the user's Allow could run a ticket for nobody. Control: the server really died. The
    host looks every 0.2 s here, not every 5 s: that it looks is tested, not how often."""
    monkeypatch.setattr(_connection, "PING_EVERY", 0.2)
    view = View(host)
    with http_hostile() as (process, url):
        server = host.connect_mcp(url)
        app = server.open("fine")
        assert app.wait(DEADLINE) is not None
        view.request(app.app_id, 1, "tools/call", {"name": "fine", "arguments": {}})
        (waiting,) = host.pending_calls
        process.kill()
        assert process.wait(DEADLINE) is not None  # the control: it is gone
        error = view.wait_response(app.app_id, 1)["error"]
        assert error["data"]["status"] == "failed"
        assert "its endpoint 127.0.0.1:" in error["data"]["reason"]
        assert "cannot be reached (ConnectionRefusedError" in error["data"]["reason"]
        assert host.pending_calls == [] and server.status == "ended"
        (row,) = host.audit.query(call_id=waiting.call_id)
        assert row["status"] == "failed"
        server.close()


def test_http_a_result_past_2_53_is_refused_with_its_path(host: Host) -> None:
    with http_hostile() as (_, url):
        server = host.connect_mcp(url)
        try:
            with pytest.raises(UsageError) as refused:
                server.call("bigint")
            assert "$.structuredContent.n: 9007199254740993 is beyond +/-(2^53-1)" in str(
                refused.value
            )
            assert server.call("fine")["isError"] is False  # the control
        finally:
            server.close()
