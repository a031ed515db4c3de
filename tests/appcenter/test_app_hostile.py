"""The app center against hostile sources (issue 14; H30, H31, H32): archives whose headers
lie about sizes, entry floods, a folder raced by a symlink swap, a removal killed half way,
redirects, slow and malformed servers, and apps claiming a shipped id.

Archives are built by hand (tar headers with crafted sizes), servers are real loopback
sockets, the crash is a real process killed with SIGKILL. Nothing here asserts on time: a
deadline test asserts the refusal names the deadline.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tarfile
import textwrap
import threading
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import Host, UsageError, shipped_apps
from lineup_jupyter.appcenter._app_sources import InstallLimits
from lineup_jupyter.appcenter._apps import AppCenter

from ..conftest import envelope
from .test_apps import APP, archive_with, blobs, sri, write_app, zipped

INSTALL = [sys.executable, "-m", "lineup_jupyter", "app", "--home"]

MiB = 1024 * 1024
SUBPROCESS_TIMEOUT = 120.0  # only a hang reaches it; a loaded 2-core machine is slow


def gzip_of(*parts: bytes, zeros: int = 0, level: int = 9) -> bytes:
    """gzip of ``parts`` then ``zeros`` zero bytes, compressed as a stream (never held whole)."""
    packer = zlib.compressobj(level, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    out = [packer.compress(part) for part in parts]
    block = bytes(MiB)
    for _ in range(zeros // MiB):
        out.append(packer.compress(block))
    out.append(packer.compress(bytes(zeros % MiB)))
    out.append(packer.flush())
    return b"".join(out)


def header(name: str, kind: bytes, size: int) -> bytes:
    """One 512-byte tar header declaring ``size`` (base-256 past 8 GiB, as GNU tar writes)."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    return info.tobuf(format=tarfile.GNU_FORMAT)


# ---- archives whose headers lie (H30) ---------------------------------------------------------


def test_h30_a_long_name_header_declaring_256_mib_is_refused_before_allocating(
    host: Host, tmp_path: Path, lineup_home: Path
) -> None:
    """Issue 14: a 255 KiB tar.gz whose GNU long-name header declares (and holds) 256 MiB grew
    the kernel by 151-261 MiB. Now inflation stops at max_unpacked_bytes (10 MiB)."""
    data = gzip_of(header("././@LongLink", tarfile.GNUTYPE_LONGNAME, 256 * MiB), zeros=256 * MiB)
    assert len(data) < 300 * 1024  # the attack's size: about 255 KiB
    archive = tmp_path / "bomb.tar.gz"
    archive.write_bytes(data)
    tracemalloc.start()
    try:
        with pytest.raises(UsageError, match="unpacks to more than 10485760 bytes"):
            host.apps.install(archive)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * MiB  # the limit and a copy of it; 256 MiB before the fix
    assert host.apps.list() == [] and blobs(lineup_home) == []


HUGE = 64 * 1024 * MiB  # 64 GiB


@pytest.mark.parametrize(
    "kind",
    [tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.REGTYPE],
    ids=["gnu-long-name", "gnu-long-link", "pax-header", "regular-file"],
)
def test_h30_a_tiny_tar_gz_declaring_64_gib_is_a_usage_error(
    host: Host, tmp_path: Path, kind: bytes
) -> None:
    """Issue 14: a 109-byte tar.gz declaring 64 GiB raised MemoryError. Every entry kind that
    declares a size is now read from a bounded buffer, or refused by its declared size."""
    data = gzip_of(header("x", kind, HUGE))
    assert len(data) < 200
    archive = tmp_path / "tiny.tar.gz"
    archive.write_bytes(data)
    with pytest.raises(UsageError, match=r"\(H30\)"):
        host.apps.install(archive)
    assert host.apps.list() == []


def test_h30_the_cli_prints_one_line_for_the_64_gib_archive(tmp_path: Path) -> None:
    archive = tmp_path / "tiny.tar.gz"
    archive.write_bytes(gzip_of(header("././@LongLink", tarfile.GNUTYPE_LONGNAME, HUGE)))
    run = subprocess.run(
        [*INSTALL, str(tmp_path / "h"), "install", str(archive)],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
        check=False,
    )
    assert run.returncode == 1
    assert run.stdout == ""
    assert "Traceback" not in run.stderr
    assert len(run.stderr.splitlines()) == 1 and run.stderr.startswith("lineup: [lineup] ")


def directories(count: int, kind: str) -> bytes:
    """An archive of the app plus ``count`` empty folders."""
    base = archive_with([], kind=kind)
    if kind == "zip":
        buffer = io.BytesIO(base)
        with zipfile.ZipFile(buffer, "a") as archive:
            for index in range(count):
                archive.writestr(zipfile.ZipInfo(f"d{index}/"), b"")
        return buffer.getvalue()
    # A tar is 512-byte headers and data blocks, ended by two zero blocks: the app's entries
    # (up to where tarfile found the end), the folders' headers, the end.
    with tarfile.open(fileobj=io.BytesIO(base)) as source:
        source.getmembers()
        entries = base[: source.offset]
    folder = tarfile.TarInfo("d")
    folder.type = tarfile.DIRTYPE
    template = folder.tobuf(format=tarfile.GNU_FORMAT)
    return entries + b"".join(_renamed(template, i) for i in range(count)) + bytes(1024)


def _renamed(template: bytes, index: int) -> bytes:
    """A copy of a directory header named d<index>, with its checksum recomputed."""
    name = f"d{index}/".encode().ljust(100, b"\0")
    block = bytearray(name + template[100:])
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


@pytest.mark.parametrize("kind", ["tar", "zip"])
def test_h30_folders_count_against_the_entry_limit(host: Host, tmp_path: Path, kind: str) -> None:
    archive = tmp_path / f"dirs.{kind}"
    archive.write_bytes(directories(300, kind))
    with pytest.raises(UsageError, match="more than 256 entries"):
        host.apps.install(archive)


def test_h30_100000_folders_in_a_tar_gz_are_refused_by_the_entry_limit(tmp_path: Path) -> None:
    """Issue 14: 100 000 directory entries were not counted. With the unpacked limit raised
    past their 49 MiB of headers, the entry limit refuses them at the 257th."""
    archive = tmp_path / "dirs.tar.gz"
    archive.write_bytes(gzip_of(directories(100_000, "tar"), level=1))
    limits = InstallLimits(max_unpacked_bytes=64 * MiB)
    center = AppCenter(tmp_path / "home", limits=limits)
    with pytest.raises(UsageError, match="more than 256 entries"):
        center.install(archive)
    assert center.list() == []
    center.close()


def test_h30_folders_in_a_folder_count_against_the_entry_limit(host: Host, tmp_path: Path) -> None:
    folder = write_app(tmp_path / "a")
    for index in range(300):
        (folder / f"d{index}").mkdir()
    with pytest.raises(UsageError, match="more than 256 entries"):
        host.apps.install(folder)


# ---- a folder raced by a symlink swap (H30) ---------------------------------------------------


SECRET = "the user's private key"


def swap_on_open(monkeypatch: pytest.MonkeyPatch, name: str, swap: Callable[[], None]) -> list[str]:
    """Call ``swap`` right before the installer opens ``name``: after the folder was listed
    (where ``name`` was a plain entry) and before its bytes are read. The race, made exact."""
    real = os.open
    swapped: list[str] = []

    def racing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path) == name and not swapped:
            swap()
            swapped.append(name)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", racing_open)
    return swapped


def test_h30_a_file_swapped_for_a_symlink_after_the_listing_is_not_followed(
    host: Host, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lineup_home: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text(SECRET)
    folder = write_app(tmp_path / "a")
    target = folder / "main.js"

    def swap() -> None:
        target.unlink()
        target.symlink_to(outside)

    swapped = swap_on_open(monkeypatch, "main.js", swap)
    with pytest.raises(UsageError, match=r"'main\.js' is a symbolic link"):
        host.apps.install(folder)
    # the control: the swap happened, and reading by path would have pulled the secret in
    assert swapped == ["main.js"] and target.read_text() == SECRET
    assert host.apps.list() == [] and blobs(lineup_home) == []


def test_h30_a_folder_swapped_for_a_symlink_after_the_listing_is_not_followed(
    host: Host, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.txt").write_text(SECRET)
    folder = write_app(tmp_path / "a", files={"assets/logo.txt": b"logo"})

    def swap() -> None:
        (folder / "assets" / "logo.txt").unlink()
        (folder / "assets").rmdir()
        (folder / "assets").symlink_to(outside, target_is_directory=True)

    swapped = swap_on_open(monkeypatch, "assets", swap)
    with pytest.raises(UsageError, match="'assets' is a symbolic link"):
        host.apps.install(folder)
    assert swapped == ["assets"] and (folder / "assets" / "leak.txt").read_text() == SECRET
    assert host.apps.list() == []


def test_h30_a_fifo_in_the_folder_is_refused_without_blocking(host: Host, tmp_path: Path) -> None:
    folder = write_app(tmp_path / "a")
    os.mkfifo(folder / "pipe")
    with pytest.raises(UsageError, match="'pipe' is not a regular file"):
        host.apps.install(folder)


# ---- remove() killed half way (H32) -----------------------------------------------------------


def test_h32_remove_killed_after_its_first_unlink_never_lists_an_app_without_its_bundle(
    tmp_path: Path,
) -> None:
    """Issue 14: remove() killed after its first unlink left the registry listing the app
    with its bundle gone (`lineup app verify` exit 1). A real process is killed with SIGKILL
    right after its first unlink of a cached bundle."""
    home = tmp_path / "home"
    center = AppCenter(home)
    center.install(write_app(tmp_path / "notes"))
    other = write_app(tmp_path / "other", app_id="com.example.other", html="<p>other</p>")
    center.install(other)
    center.close()
    script = f"""
        import os, signal
        from pathlib import Path
        from lineup_jupyter.appcenter._apps import AppCenter

        real_unlink = Path.unlink

        def unlink_then_die(self, missing_ok=False):
            real_unlink(self, missing_ok=missing_ok)
            if self.suffix == ".bundle":
                os.kill(os.getpid(), signal.SIGKILL)

        Path.unlink = unlink_then_die
        AppCenter(Path({str(home)!r})).remove({APP!r})
        print("not killed")
    """
    run = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
        check=False,
    )
    assert run.returncode == -signal.SIGKILL, run.stderr  # it died at the unlink
    center = AppCenter(home)
    assert [info.id for info in center.list()] == ["com.example.other"]
    assert all(center.verify())
    verify = subprocess.run(
        [sys.executable, "-m", "lineup_jupyter", "app", "--home", str(home), "verify"],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT,
        check=False,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # The next removal deletes what the killed one left behind.
    center.remove("com.example.other")
    assert blobs(home) == []
    center.close()


# ---- URL installs (H31) -----------------------------------------------------------------------


Respond = Callable[[socket.socket, bytes], None]


@pytest.fixture
def raw_server() -> Iterator[Callable[[Respond], str]]:
    """Loopback servers that answer each connection with a function of the raw socket."""
    stops: list[Callable[[], None]] = []

    def start(respond: Respond) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        stopped = threading.Event()

        def serve() -> None:
            while not stopped.is_set():
                try:
                    connection, _ = listener.accept()
                except OSError:
                    return
                with connection:
                    request = connection.recv(65536)
                    # OSError: the client went away, as it does at a deadline
                    with contextlib.suppress(OSError):
                        respond(connection, request)

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()

        def stop() -> None:
            stopped.set()
            with contextlib.suppress(OSError):  # wakes the accept() blocked in serve()
                listener.shutdown(socket.SHUT_RDWR)
            listener.close()
            thread.join(timeout=5)

        stops.append(stop)
        return f"http://127.0.0.1:{listener.getsockname()[1]}"

    yield start
    for stop in stops:
        stop()


def answer(status: str, headers: dict[str, str], body: bytes = b"") -> Respond:
    def respond(connection: socket.socket, request: bytes) -> None:
        lines = [f"HTTP/1.1 {status}", *(f"{k}: {v}" for k, v in headers.items())]
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    return respond


def test_h31_a_redirect_to_ftp_is_refused(host: Host, raw_server: Any) -> None:
    url = raw_server(answer("302 Found", {"Location": "ftp://127.0.0.1/app.zip"}))
    with pytest.raises(UsageError, match="only http\\(s\\) is followed"):
        host.apps.install(f"{url}/app.zip", integrity=sri(b"x"))


def test_h31_a_redirect_to_another_port_is_refused(host: Host, raw_server: Any) -> None:
    elsewhere = raw_server(answer("200 OK", {"Content-Length": "1"}, b"x"))
    url = raw_server(answer("302 Found", {"Location": f"{elsewhere}/app.zip"}))
    with pytest.raises(UsageError, match="another host or port"):
        host.apps.install(f"{url}/app.zip", integrity=sri(b"x"))


def test_h31_a_redirect_on_the_same_host_and_port_is_followed(
    host: Host, raw_server: Any, tmp_path: Path
) -> None:
    data = zipped(write_app(tmp_path / "notes"))

    def respond(connection: socket.socket, request: bytes) -> None:
        if request.startswith(b"GET /old.zip "):
            answer("301 Moved Permanently", {"Location": "/new.zip"})(connection, request)
        else:
            answer("200 OK", {"Content-Length": str(len(data))}, data)(connection, request)

    url = raw_server(respond)
    assert host.apps.install(f"{url}/old.zip", integrity=sri(data)).id == APP


def test_h31_endless_redirects_are_refused(host: Host, raw_server: Any) -> None:
    url = raw_server(answer("302 Found", {"Location": "/again"}))
    with pytest.raises(UsageError, match="more than 5 redirects"):
        host.apps.install(f"{url}/app.zip", integrity=sri(b"x"))


def drip(prefix: bytes) -> Respond:
    """Send ``prefix``, then one byte every 0.2 s for as long as the client listens."""

    def respond(connection: socket.socket, request: bytes) -> None:
        connection.sendall(prefix)
        stop = threading.Event()
        while not stop.wait(0.2):
            connection.sendall(b"x")

    return respond


@pytest.mark.parametrize(
    "prefix",
    [b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n", b"HTTP/1.1 200 OK\r\nX-Slow: "],
    ids=["body", "headers"],
)
def test_h31_a_slow_drip_fails_at_the_overall_deadline(
    raw_server: Any, tmp_path: Path, prefix: bytes
) -> None:
    """Issue 14: a byte every 0.2 s held a cell 7 s under a 1 s limit (the timeout was per
    read). The refusal names the overall deadline: a per-read timeout would never fire."""
    url = raw_server(drip(prefix))
    center = AppCenter(tmp_path / "home", limits=InstallLimits(timeout_seconds=1.0))
    with pytest.raises(UsageError, match="not finished within 1 s, the overall time limit"):
        center.install(f"{url}/app.zip", integrity=sri(b"x"))
    center.close()


MALFORMED = {
    "not http": b"HELLO\r\n\r\n",
    "bad status": b"HTTP/1.1 abc OK\r\n\r\n",
    "closed at once": b"",
    "short body": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b",
    "bad chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n",
    "header line too long": b"HTTP/1.1 200 OK\r\nX: " + b"a" * 70000 + b"\r\n\r\n",
    "redirect without location": b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n",
    "not found": b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_h31_a_malformed_response_is_a_usage_error(host: Host, raw_server: Any, case: str) -> None:
    raw = MALFORMED[case]

    def respond(connection: socket.socket, request: bytes) -> None:
        connection.sendall(raw)

    url = raw_server(respond)
    with pytest.raises(UsageError, match=r"^\[lineup\] downloading "):
        host.apps.install(f"{url}/app.zip", integrity=sri(b"x"))


# ---- shipped ids are reserved (H30) -----------------------------------------------------------


def test_h30_a_folder_app_cannot_claim_a_shipped_id(
    host: Host, tmp_path: Path, lineup_home: Path
) -> None:
    impostor = write_app(tmp_path / "impostor", app_id="com.lineup.svg-canvas")
    with pytest.raises(UsageError, match="reserved for the app that comes with lineup-jupyter"):
        host.apps.install(impostor)
    assert host.apps.list() == [] and blobs(lineup_home) == []
    archive = tmp_path / "impostor.zip"
    archive.write_bytes(zipped(impostor))
    with pytest.raises(UsageError, match="reserved"):
        host.apps.install(archive)
    # the shipped app itself still installs, by id and by its folder
    assert host.apps.install("com.lineup.svg-canvas").id == "com.lineup.svg-canvas"
    assert host.apps.install(shipped_apps()["com.lineup.svg-canvas"]).version


def test_h30_upgrade_cannot_claim_a_shipped_id_either(host: Host, tmp_path: Path) -> None:
    host.apps.install("com.lineup.state-chart")
    manifest = json.loads(
        (shipped_apps()["com.lineup.state-chart"] / "lineup-app.json").read_text()
    )
    impostor = write_app(tmp_path / "i", app_id=manifest["id"], version="99.0.0")
    with pytest.raises(UsageError, match="reserved"):
        host.apps.upgrade(impostor)


# ---- an app installed before this version's checks ---------------------------------------------


def test_c6_an_app_stored_with_a_schema_this_version_refuses_is_listed_not_offered(
    host: Host, tmp_path: Path, lineup_home: Path
) -> None:
    """An app installed by an earlier version with an event schema that is now refused (a
    remote $ref, issue 14) does not break the app center: it is listed, left out of the
    inventory, refused on open with the reason, and verify() names the manifest."""
    host.apps.install(write_app(tmp_path / "a"))
    manifest = json.loads((tmp_path / "a" / "lineup-app.json").read_text())
    manifest["surfaces"][0]["event_schemas"] = {"save": {"$ref": "http://127.0.0.1:9/x"}}
    with sqlite3.connect(lineup_home / "apps.sqlite3") as db:  # as the earlier version stored it
        db.execute("UPDATE versions SET manifest = ?", (json.dumps(manifest),))
    assert [info.id for info in host.apps.list()] == [APP]
    assert host.apps.inventory_entries() == []
    error = host.receive(
        envelope("ui.open", {"instance_id": "n1", "app": {"id": APP, "surface": "main"}})
    )
    assert error is not None and error.code == "unsupported"
    assert "no longer passes this host's checks" in error.message
    (problem,) = [result for result in host.apps.verify() if not result.ok]
    assert problem.surface == "lineup-app.json" and "$ref" in (problem.problem or "")
