"""The app center (G2, G4): install, cache, integrity, registry, inventory (C1-C6), CLI.

Rule numbers are those of docs/rules.md and docs/protocol.md (H30-H36).
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import Host, ProtocolError, UsageError, shipped_apps
from lineup_jupyter._cli import main
from lineup_jupyter.appcenter._app_sources import InstallLimits
from lineup_jupyter.appcenter._apps import AppCenter
from lineup_jupyter.appcenter._manifest import semver_key
from lineup_jupyter.protocol import bundle_integrity
from lineup_jupyter.protocol._integrity import bundle_bytes, parse_bundle_bytes

from ..conftest import AGENT, CONVERSATION, Recorder, envelope

REPO = Path(__file__).resolve().parents[2]

APP = "com.example.notes"


def write_app(
    folder: Path,
    *,
    app_id: str = APP,
    version: str = "1.0.0",
    html: str = "<p>notes</p>",
    js: str = "",
    events: list[str] | None = None,
    extra: dict[str, Any] | None = None,
    surface: dict[str, Any] | None = None,
    files: dict[str, bytes] | None = None,
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(html)
    (folder / "main.js").write_text(js)
    spec: dict[str, Any] = {
        "id": "main",
        "html": "index.html",
        "js": "main.js",
        "events": ["save"] if events is None else events,
        **(surface or {}),
    }
    manifest = {"id": app_id, "name": "Notes", "version": version, "surfaces": [spec]}
    manifest.update(extra or {})
    (folder / "lineup-app.json").write_text(json.dumps(manifest))
    for name, content in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(content)
    return folder


def ui_open(instance_id: str, app: dict[str, Any], id_: str = "o1") -> dict[str, Any]:
    return envelope("ui.open", {"instance_id": instance_id, "app": app, "state": {}}, id_=id_)


def inventories(sent: Recorder) -> list[dict[str, Any]]:
    return [e["payload"] for e in sent.sent if e["type"] == "lineup.v1.client.inventory"]


def blobs(home: Path) -> list[Path]:
    return sorted((home / "bundles").glob("*.bundle"))


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    return write_app(tmp_path / "notes")


# ---- the bundle framing and versions ---------------------------------------------------


def test_h4_the_cache_framing_reads_back_exactly_what_was_hashed() -> None:
    assets = {"b/icon.svg": b"<svg/>", "a.bin": b"\x00\n1"}
    data = bundle_bytes("<p>é</p>", "p{}", "x\n", assets)
    assert parse_bundle_bytes(data) == ("<p>é</p>", "p{}", "x\n", assets)
    with pytest.raises(ValueError, match="does not end where its length says"):
        parse_bundle_bytes(data.replace(b"html\n9", b"html\n8"))


def test_u2_versions_order_by_semver_precedence() -> None:
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-beta", "1.0.0", "1.2.0", "1.10.0"]
    shuffled = ["1.2.0", "1.0.0-beta", "1.10.0", "1.0.0", "1.0.0-alpha.1", "1.0.0-alpha"]
    assert sorted(shuffled, key=semver_key) == ordered


# ---- installing (G2, G4, H30) ----------------------------------------------------------


def test_g2_an_app_installed_from_a_folder_is_listed_and_offered(
    host: Host, sent: Recorder, app_dir: Path
) -> None:
    info = host.apps.install(app_dir)
    assert (info.id, info.version, info.enabled, info.surfaces) == (APP, "1.0.0", True, ("main",))
    assert [a.id for a in host.apps.list()] == [APP]
    assert host.inventory["applications"] == [
        {"id": APP, "version": "1.0.0", "surfaces": [{"id": "main", "events": ["save"]}]}
    ]


def test_c5_the_inventory_never_shows_source_paths_or_install_source(
    host: Host, app_dir: Path
) -> None:
    host.apps.install(app_dir)
    text = json.dumps(host.inventory)
    assert str(app_dir) not in text and "<p>notes</p>" not in text and "sha256-" not in text


def test_g4_installing_the_same_bytes_twice_stores_them_once(
    host: Host, tmp_path: Path, lineup_home: Path
) -> None:
    host.apps.install(write_app(tmp_path / "a"))
    host.apps.install(write_app(tmp_path / "b", app_id="com.example.other"))
    host.apps.upgrade(write_app(tmp_path / "c", version="1.1.0"))
    assert len(blobs(lineup_home)) == 1
    host.apps.install(write_app(tmp_path / "a"))  # the same version and bytes: nothing changes
    assert host.apps.get(APP).version == "1.1.0"


def test_g4_a_surface_is_cached_as_exactly_the_bytes_of_its_integrity(
    host: Host, app_dir: Path, lineup_home: Path
) -> None:
    host.apps.install(app_dir)
    (blob,) = blobs(lineup_home)
    digest = base64.b64encode(hashlib.sha256(blob.read_bytes()).digest()).decode()
    assert f"sha256-{digest}" == bundle_integrity("<p>notes</p>")
    assert blob.name == hashlib.sha256(blob.read_bytes()).hexdigest() + ".bundle"


def zipped(folder: Path, prefix: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def tarred(folder: Path, prefix: str = "") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            archive.add(path, prefix + path.relative_to(folder).as_posix(), recursive=False)
    return buffer.getvalue()


@pytest.mark.parametrize("pack", [zipped, tarred])
@pytest.mark.parametrize("prefix", ["", "notes-1.0.0/"])
def test_g4_installs_from_zip_and_tar_archives(
    host: Host, app_dir: Path, tmp_path: Path, pack: Any, prefix: str
) -> None:
    archive = tmp_path / "notes.archive"
    archive.write_bytes(pack(app_dir, prefix))
    info = host.apps.install(archive)
    assert info.id == APP and host.apps.verify(APP)[0].ok


def archive_with(entries: list[tuple[str, bytes]], *, kind: str, link: str | None = None) -> bytes:
    buffer = io.BytesIO()
    manifest = json.dumps(
        {
            "id": APP,
            "name": "N",
            "version": "1.0.0",
            "surfaces": [{"id": "m", "html": "index.html", "events": []}],
        }
    ).encode()
    entries = [("lineup-app.json", manifest), ("index.html", b"<p/>"), *entries]
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, content in entries:
                archive.writestr(zipfile.ZipInfo(name), content)
            if link is not None:
                info = zipfile.ZipInfo("evil")
                info.external_attr = (0o120777) << 16  # a symbolic link
                archive.writestr(info, link)
    else:
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            for name, content in entries:
                member = tarfile.TarInfo(name)
                member.size = len(content)
                archive.addfile(member, io.BytesIO(content))
            if link is not None:
                member = tarfile.TarInfo("evil")
                member.type = tarfile.SYMTYPE
                member.linkname = link
                archive.addfile(member)
    return buffer.getvalue()


@pytest.mark.parametrize("kind", ["zip", "tar"])
@pytest.mark.parametrize(
    ("entries", "link", "why"),
    [
        ([("../escape.txt", b"x")], None, "leaves the app's folder"),
        ([("/etc/escape.txt", b"x")], None, "absolute path"),
        ([("a/../../escape.txt", b"x")], None, "leaves the app's folder"),
        ([("a\\b.txt", b"x")], None, "backslash"),
        ([], "/etc/passwd", "link"),
        ([(f"f{i}.txt", b"x") for i in range(300)], None, "256 entries"),
        ([("big.bin", b"x" * (2 * 1024 * 1024 + 1))], None, "the limit is"),
    ],
    ids=["dotdot", "absolute", "nested-dotdot", "backslash", "symlink", "many", "oversize"],
)
def test_h30_a_hostile_archive_is_refused_and_installs_nothing(
    host: Host, tmp_path: Path, lineup_home: Path, kind: str, entries: Any, link: Any, why: str
) -> None:
    archive = tmp_path / f"app.{kind}"
    archive.write_bytes(archive_with(entries, kind=kind, link=link))
    with pytest.raises(UsageError, match=why):
        host.apps.install(archive)
    assert host.apps.list() == [] and blobs(lineup_home) == []
    assert not (tmp_path.parent / "escape.txt").exists()


def test_h30_all_files_together_are_bounded(host: Host, tmp_path: Path) -> None:
    center = AppCenter(tmp_path / "home", limits=InstallLimits(max_total_bytes=1000))
    folder = write_app(tmp_path / "a", files={"a.bin": b"x" * 600, "b.bin": b"y" * 600})
    with pytest.raises(UsageError, match="exceed 1000 bytes"):
        center.install(folder)


def test_h30_hidden_entries_of_a_folder_are_not_read(host: Host, app_dir: Path) -> None:
    """A git checkout of an app installs: its .git is skipped, not counted or stored."""
    for i in range(300):
        (app_dir / ".git" / f"object{i}").parent.mkdir(exist_ok=True)
        (app_dir / ".git" / f"object{i}").write_text("x")
    (app_dir / ".secret-link").symlink_to("/etc/hostname")
    assert host.apps.install(app_dir).id == APP


def test_h30_a_folder_holding_a_symlink_is_refused(host: Host, app_dir: Path) -> None:
    (app_dir / "secret.txt").symlink_to("/etc/hostname")
    with pytest.raises(UsageError, match="symbolic link"):
        host.apps.install(app_dir)


def test_h30_a_file_that_cannot_be_read_is_a_clear_refusal(
    host: Host, app_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unreadable file (permissions, or removed mid-install) is a UsageError naming it,
    not a raw OSError, and nothing is installed. (As root, chmod cannot make one.)"""
    real = os.open

    def refusing_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if os.fspath(path) == "index.html":
            raise PermissionError(13, "Permission denied", path)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refusing_open)
    with pytest.raises(UsageError, match=r"'index.html' cannot be read: Permission denied \(H30\)"):
        host.apps.install(app_dir)
    assert host.apps.list() == []


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"extra": {"id": "Com.Example"}}, "id"),
        ({"extra": {"version": "1.0"}}, "version"),
        ({"extra": {"surfaces": []}}, "surfaces"),
        ({"extra": {"homepage": "https://x"}}, "homepage"),
        ({"events": ["save", "save"]}, "more than once"),
        ({"surface": {"event_schemas": {"other": {}}}}, "does not declare"),
        ({"surface": {"event_schemas": {"save": {"type": 5}}}}, "not a JSON Schema"),
        ({"surface": {"css": "missing.css"}}, "not there"),
        ({"surface": {"css": "../x.css"}}, "css"),
        ({"html": "<img src='lineup-asset:logo.png'>"}, "not one of its assets"),
        ({"surface": {"assets": ["logo.png"]}}, "not there"),
        ({"surface": {"integrity": "sha256-" + "A" * 43 + "="}}, "hashes to"),
        ({"html": "x" * (160 * 1024 + 1)}, "bundle limit"),
    ],
    ids=[
        "upper-case-id",
        "short-version",
        "no-surfaces",
        "unknown-field",
        "repeated-event",
        "schema-of-undeclared",
        "bad-schema",
        "missing-file",
        "path-escape",
        "undeclared-asset",
        "missing-asset",
        "wrong-integrity",
        "too-large",
    ],
)
def test_u2_u3_s7_a_bad_manifest_or_bundle_is_refused_with_its_reason(
    host: Host, tmp_path: Path, change: dict[str, Any], why: str
) -> None:
    with pytest.raises(UsageError, match=why):
        host.apps.install(write_app(tmp_path / "bad", **change))
    assert host.apps.list() == []


def test_u3_assets_are_inlined_as_data_urls_when_opened(host: Host, tmp_path: Path) -> None:
    folder = write_app(
        tmp_path / "a",
        html="<img src='lineup-asset:img/logo.png'>",
        surface={"assets": ["img/logo.png"]},
        files={"img/logo.png": b"\x89PNG"},
    )
    host.apps.install(folder)
    host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    html = host.surfaces["n1"].app.html  # type: ignore[union-attr]
    assert html == "<img src='data:image/png;base64," + base64.b64encode(b"\x89PNG").decode() + "'>"


# ---- URL installs (H31) ----------------------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A loopback HTTP server over tmp_path/www."""
    root = tmp_path / "www"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root
    httpd.shutdown()
    httpd.server_close()


def sri(data: bytes) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode()


def test_h31_an_app_installs_from_a_url_with_its_integrity(
    host: Host, server: tuple[str, Path], app_dir: Path
) -> None:
    url, root = server
    data = zipped(app_dir)
    (root / "notes.zip").write_bytes(data)
    info = host.apps.install(f"{url}/notes.zip", integrity=sri(data))
    assert info.id == APP and host.apps.get(APP).source == f"{url}/notes.zip"


def test_h31_a_url_install_without_integrity_downloads_nothing(host: Host) -> None:
    with pytest.raises(UsageError, match="needs integrity"):
        host.apps.install("http://127.0.0.1:9/notes.zip")


def test_h31_a_tampered_download_is_refused(
    host: Host, server: tuple[str, Path], app_dir: Path, lineup_home: Path
) -> None:
    url, root = server
    data = zipped(app_dir)
    (root / "notes.zip").write_bytes(data.replace(b"<p>notes</p>", b"<p>pwned</p>"))
    with pytest.raises(UsageError, match="hashes to"):
        host.apps.install(f"{url}/notes.zip", integrity=sri(data))
    assert host.apps.list() == [] and blobs(lineup_home) == []


def test_h31_a_download_larger_than_the_limit_is_refused(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, root = server
    (root / "big.zip").write_bytes(b"x" * 5000)
    center = AppCenter(tmp_path / "home", limits=InstallLimits(max_download_bytes=4096))
    with pytest.raises(UsageError, match="4096"):
        center.install(f"{url}/big.zip", integrity=sri(b"x" * 5000))


def test_h31_an_unreachable_url_fails_cleanly(host: Host) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(UsageError, match="download failed"):
        host.apps.install(f"http://127.0.0.1:{port}/a.zip", integrity=sri(b""))


def test_h31_other_schemes_are_refused(host: Host) -> None:
    with pytest.raises(UsageError, match="only http"):
        host.apps.install("file:///etc/passwd")


# ---- the registry: enable, disable, upgrade, rollback, remove (G4, C1, C2) --------------


def test_c1_c2_every_change_sends_a_new_and_higher_revision(
    host: Host, sent: Recorder, tmp_path: Path
) -> None:
    host.send_inventory()
    host.apps.install(write_app(tmp_path / "v1"))
    host.apps.disable(APP)
    host.apps.enable(APP)
    host.apps.upgrade(write_app(tmp_path / "v2", version="2.0.0", events=["save", "share"]))
    host.apps.rollback(APP)
    host.apps.remove(APP)
    seen = inventories(sent)
    revisions = [int(p["revision"]) for p in seen]
    assert len(seen) == 7 and revisions == sorted(set(revisions))
    versions = [[a["version"] for a in p["applications"]] for p in seen]
    assert versions == [[], ["1.0.0"], [], ["1.0.0"], ["2.0.0"], ["1.0.0"], []]
    assert seen[4]["applications"][0]["surfaces"][0]["events"] == ["save", "share"]


def test_c1_a_change_that_changes_nothing_sends_nothing(
    host: Host, sent: Recorder, app_dir: Path
) -> None:
    host.apps.install(app_dir)  # heard: the subscriber saw the inventory before it (C1)
    host.send_inventory()
    heard = inventories(sent)
    assert [i["revision"] for i in heard] == [heard[0]["revision"]] * 2
    host.apps.enable(APP)  # already enabled
    host.apps.install(app_dir)  # the same bundle again
    assert len(inventories(sent)) == 2


def test_c2_revisions_keep_increasing_across_kernel_restarts(tmp_path: Path) -> None:
    first = Host(CONVERSATION, data_dir=tmp_path)
    last = int(first.send_inventory()["payload"]["revision"])
    first.apps.close()
    second = Host(CONVERSATION, data_dir=tmp_path)
    assert int(second.send_inventory()["payload"]["revision"]) > last


def test_g4_upgrade_keeps_the_previous_version_and_rollback_returns_to_it(
    host: Host, tmp_path: Path
) -> None:
    host.apps.install(write_app(tmp_path / "v1"))
    info = host.apps.upgrade(write_app(tmp_path / "v2", version="1.1.0", html="<p>v2</p>"))
    assert (info.version, info.previous, info.versions) == ("1.1.0", "1.0.0", ("1.0.0", "1.1.0"))
    back = host.apps.rollback(APP)
    assert (back.version, back.previous) == ("1.0.0", None)
    host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    assert host.surfaces["n1"].app.html == "<p>notes</p>"  # type: ignore[union-attr]
    with pytest.raises(UsageError, match="nothing to roll back"):
        host.apps.rollback(APP)


def test_g4_upgrade_only_goes_up_and_a_version_names_one_content(
    host: Host, tmp_path: Path
) -> None:
    host.apps.install(write_app(tmp_path / "v1", version="1.2.0"))
    with pytest.raises(UsageError, match="not newer"):
        host.apps.upgrade(write_app(tmp_path / "v0", version="1.1.0"))
    with pytest.raises(UsageError, match="already installed"):
        host.apps.install(write_app(tmp_path / "other", version="1.2.0", html="<p>other</p>"))
    with pytest.raises(UsageError, match="no app"):
        host.apps.upgrade(write_app(tmp_path / "x", app_id="com.example.none", version="9.0.0"))


def test_g4_remove_deletes_only_bundles_no_other_app_uses(
    host: Host, tmp_path: Path, lineup_home: Path
) -> None:
    host.apps.install(write_app(tmp_path / "a"))
    host.apps.install(write_app(tmp_path / "b", app_id="com.example.same"))
    host.apps.install(write_app(tmp_path / "c", app_id="com.example.own", html="<p>own</p>"))
    assert len(blobs(lineup_home)) == 2
    host.apps.remove("com.example.own")
    host.apps.remove(APP)
    assert len(blobs(lineup_home)) == 1 and host.apps.verify()[0].ok
    with pytest.raises(UsageError, match="no app"):
        host.apps.remove(APP)


def test_g4_the_registry_persists_across_kernels(tmp_path: Path, app_dir: Path) -> None:
    Host(CONVERSATION, data_dir=tmp_path / "home").apps.install(app_dir, enable=False)
    again = Host(CONVERSATION, data_dir=tmp_path / "home")
    assert [(a.id, a.enabled) for a in again.apps.list()] == [(APP, False)]


def writer(home: str, name: str, rounds: int) -> list[int]:
    """One "kernel" of the test below: installs its app, toggles it, draws revisions."""
    center = AppCenter(Path(home))
    folder = write_app(Path(home).parent / name, app_id=f"com.example.{name}")
    center.install(folder)
    revisions = []
    for _ in range(rounds):
        center.disable(f"com.example.{name}")
        center.enable(f"com.example.{name}")
        revisions.append(center.next_revision())
    return revisions


WRITER = (
    "import json, sys; from tests.appcenter.test_apps import writer; "
    "print(json.dumps(writer(sys.argv[1], sys.argv[2], 40)))"
)


def test_g4_two_kernels_writing_at_once_do_not_corrupt_the_registry(tmp_path: Path) -> None:
    """Two processes install, toggle and draw revisions on one data dir at the same time.
    (Plain processes, not multiprocessing: its resource tracker would outlive the test.)"""
    home = str(tmp_path / "home")
    AppCenter(Path(home)).close()  # the schema exists before both start
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, home, name], cwd=REPO, stdout=subprocess.PIPE
        )
        for name in ("one", "two")
    ]
    revisions: list[int] = []
    for worker in workers:
        out, _ = worker.communicate(timeout=120)
        assert worker.returncode == 0
        revisions += json.loads(out)
    assert sorted(revisions) == sorted(set(revisions)) and len(revisions) == 80
    center = AppCenter(Path(home))
    assert [(a.id, a.enabled) for a in center.list()] == [
        ("com.example.one", True),
        ("com.example.two", True),
    ]
    assert all(center.verify())
    with sqlite3.connect(center.directory / "apps.sqlite3") as db:  # as docs/apps.md names it
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)


# ---- opening installed surfaces (C3, C6, S7, H33-H35) ----------------------------------


def test_c6_an_installed_surface_opens_by_app_id_alone(
    host: Host, sent: Recorder, app_dir: Path
) -> None:
    host.apps.install(app_dir)
    assert host.receive(ui_open("n1", {"id": APP, "surface": "main", "version": "1.0.0"})) is None
    app = host.surfaces["n1"].app
    assert (app.id, app.version, app.html) == (APP, "1.0.0", "<p>notes</p>")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("ref", "prepare", "why"),
    [
        ({"id": "com.example.never", "surface": "main"}, None, "no app"),
        ({"id": APP, "surface": "main"}, "disable", "disabled"),
        ({"id": APP, "surface": "main"}, "remove", "no app"),
        ({"id": APP, "surface": "other"}, None, "no surface 'other'"),
        ({"id": APP, "surface": "main", "version": "0.9.0"}, None, "not 0.9.0"),
    ],
    ids=["never-installed", "disabled", "removed", "unknown-surface", "other-version"],
)
def test_c3_a_reference_the_host_does_not_offer_is_answered_unsupported(
    host: Host, sent: Recorder, app_dir: Path, ref: dict[str, Any], prepare: Any, why: str
) -> None:
    host.apps.install(app_dir)
    if prepare:
        getattr(host.apps, prepare)(APP)
    error = host.receive(ui_open("n1", ref))
    assert error is not None and (error.code, error.rule) == ("unsupported", "C3")
    assert why in error.message and "n1" not in host.surfaces
    assert sent.last()["type"] == "lineup.v1.error"


def test_c3_a_reference_is_never_answered_with_a_download_or_fallback(host: Host) -> None:
    """Even an app id that looks like a URL's host is only looked up, never fetched."""
    error = host.receive(ui_open("n1", {"id": "com.example.cdn", "surface": "main"}))
    assert error is not None and error.code == "unsupported" and not host.surfaces


def test_s7_a_tampered_cache_file_is_refused_on_open_verify_and_inventory(
    host: Host, sent: Recorder, app_dir: Path, lineup_home: Path
) -> None:
    host.apps.install(app_dir)
    (blob,) = blobs(lineup_home)
    blob.write_bytes(blob.read_bytes().replace(b"notes", b"pwned"))
    error = host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    assert error is not None and (error.code, error.rule) == ("integrity_mismatch", "S7")
    assert "changed on disk" in error.message and not host.surfaces
    (result,) = host.apps.verify(APP)
    assert not result and "changed on disk" in (result.problem or "")
    assert host.inventory["applications"] == []  # C5: not verified, not offered
    host.apps.install(app_dir)  # reinstalling repairs the cache
    assert host.apps.verify(APP)[0].ok
    # C1, C2: the agents hear of it, under a new revision that offers the app again
    announced = sent.last()
    assert announced["type"] == "lineup.v1.client.inventory"
    assert [app["id"] for app in announced["payload"]["applications"]] == [APP]
    count = len(sent.sent)
    host.apps.install(app_dir)  # nothing to repair: nothing to announce
    assert len(sent.sent) == count


def test_s7_a_missing_cache_file_is_refused(host: Host, app_dir: Path, lineup_home: Path) -> None:
    host.apps.install(app_dir)
    blobs(lineup_home)[0].unlink()
    error = host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    assert error is not None and error.code == "integrity_mismatch" and "missing" in error.message


def test_c6_only_declared_events_reach_the_agent(
    host: Host, sent: Recorder, tmp_path: Path
) -> None:
    host.apps.install(write_app(tmp_path / "a", events=["save"]))
    host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    host.user_event("n1", "save", {"text": "hi"})
    assert sent.last()["payload"] == {"instance_id": "n1", "event": "save", "data": {"text": "hi"}}
    with pytest.raises(ProtocolError) as refused:
        host.user_event("n1", "exfiltrate", {})
    error = refused.value
    assert (error.code, error.rule, error.path) == ("invalid", "C6", "$.event")
    assert sent.last()["type"] == "lineup.v1.error" and sent.last()["target"]["id"] == AGENT


def test_c6_event_data_must_match_the_declared_schema(
    host: Host, sent: Recorder, tmp_path: Path
) -> None:
    schema = {"type": "object", "required": ["text"], "properties": {"text": {"type": "string"}}}
    host.apps.install(write_app(tmp_path / "a", surface={"event_schemas": {"save": schema}}))
    host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    with pytest.raises(ProtocolError) as refused:
        host.user_event("n1", "save", {"text": 5})
    assert (refused.value.rule, refused.value.path) == ("C6", "$.data.text")
    host.user_event("n1", "save", {"text": "ok"})
    assert sent.last()["payload"]["data"] == {"text": "ok"}


def test_c6_an_inline_bundle_under_the_same_id_is_not_bound_by_the_manifest(
    host: Host, app_dir: Path
) -> None:
    host.apps.install(app_dir)
    host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    inline = {"id": "com.example.inline", "version": "1.0.0", "html": "<p/>"}
    host.receive(ui_open("n1", inline, id_="o2"))
    host.user_event("n1", "anything", {})  # not refused


def test_h35_disabling_an_app_closes_its_surfaces_and_tells_the_agent(
    host: Host, sent: Recorder, app_dir: Path
) -> None:
    host.apps.install(app_dir)
    host.send_inventory()
    host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    host.receive(
        envelope(
            "ui.open",
            {
                "instance_id": "w1",
                "app": {"id": "com.example.inline", "version": "1.0.0", "html": "<p/>"},
            },
            id_="o2",
        )
    )
    host.apps.disable(APP)
    assert list(host.surfaces) == ["w1"]
    close, inventory = sent.sent[-2:]
    assert close["type"] == "lineup.v1.ui.event" and close["target"]["id"] == AGENT
    assert close["payload"] == {
        "instance_id": "n1",
        "event": "close",
        "data": {"reason": "app_disabled", "app_id": APP},
    }
    assert inventory["type"] == "lineup.v1.client.inventory"
    assert inventory["payload"]["applications"] == []


def test_h35_an_upgrade_leaves_open_surfaces_on_their_bundle(
    host: Host, sent: Recorder, tmp_path: Path
) -> None:
    host.apps.install(write_app(tmp_path / "v1"))
    host.receive(ui_open("n1", {"id": APP, "surface": "main"}))
    host.apps.upgrade(write_app(tmp_path / "v2", version="2.0.0", html="<p>v2</p>"))
    assert host.surfaces["n1"].app.version == "1.0.0"
    host.apps.remove(APP)
    assert not host.surfaces
    # H35: the close, then the new inventory (the subscriber saw one when it subscribed, C1)
    closed, inventory = sent.sent[-2:]
    assert closed["payload"]["data"]["reason"] == "app_removed"
    assert inventory["type"] == "lineup.v1.client.inventory"


def test_c2_another_kernels_change_is_seen_by_the_next_inventory(
    host: Host, app_dir: Path, lineup_home: Path
) -> None:
    first = host.send_inventory()["payload"]
    AppCenter(lineup_home).install(app_dir)  # as `lineup app install` would
    second = host.send_inventory()["payload"]
    assert int(second["revision"]) > int(first["revision"])
    assert [a["id"] for a in second["applications"]] == [APP]


# ---- shipped apps ----------------------------------------------------------------------


def test_g2_the_shipped_apps_install_verify_and_stay_offline(host: Host) -> None:
    shipped = shipped_apps()
    assert set(shipped) == {
        "com.lineup.svg-canvas",
        "com.lineup.weather.dashboard",
        "com.lineup.state-chart",
    }
    for app_id in shipped:
        host.apps.install(app_id)
    assert all(host.apps.verify())
    canvas = next(a for a in host.inventory["applications"] if a["id"] == "com.lineup.svg-canvas")
    assert canvas["surfaces"] == [{"id": "canvas", "events": ["draw", "resize", "snapshot"]}]
    for folder in shipped.values():
        for path in folder.iterdir():
            if path.suffix in (".html", ".css", ".js"):
                text = path.read_text().replace(
                    "http://www.w3.org/2000/svg", ""
                )  # a namespace name
                assert "http://" not in text and "https://" not in text and "fetch(" not in text


def test_c6_the_svg_canvas_draw_event_is_checked_by_its_schema(host: Host, sent: Recorder) -> None:
    host.apps.install("com.lineup.svg-canvas")
    host.receive(ui_open("c1", {"id": "com.lineup.svg-canvas", "surface": "canvas"}))
    stroke = {"points": [[1, 2], [3, 4]], "color": "#1f6feb", "width": 3}
    host.user_event("c1", "draw", stroke)
    with pytest.raises(ProtocolError, match="color"):
        host.user_event("c1", "draw", {**stroke, "color": "red"})


# ---- the CLI ---------------------------------------------------------------------------


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out)
    return code, out.getvalue()


def test_g2_the_cli_manages_the_app_center(tmp_path: Path, app_dir: Path) -> None:
    home = str(tmp_path / "home")
    assert run("app", "--home", home, "install", str(app_dir))[0] == 0
    assert run("app", "--home", home, "disable", APP)[1].startswith(f"{APP} 1.0.0 (disabled)")
    code, listed = run("app", "--home", home, "list", "--json")
    assert code == 0 and json.loads(listed)[0]["enabled"] is False
    run("app", "--home", home, "enable", APP)
    assert run("app", "--home", home, "verify")[0] == 0
    blob = next((tmp_path / "home" / "bundles").glob("*.bundle"))
    blob.write_bytes(b"tampered")
    code, report = run("app", "--home", home, "verify", APP)
    assert code == 1 and "FAILED" in report
    assert run("app", "--home", home, "rollback", APP)[0] == 1  # nothing to roll back to
    assert run("app", "--home", home, "remove", APP) == (0, f"removed {APP}\n")
    assert run("app", "--home", home, "list") == (0, "")


def test_h31_the_cli_prints_the_integrity_a_url_install_needs(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    archive.write_bytes(b"some bytes")
    assert run("app", "hash", str(archive)) == (0, sri(b"some bytes") + "\n")


def test_the_existing_commands_still_work(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<p/>")
    assert run("hash", str(tmp_path)) == (0, bundle_integrity("<p/>") + "\n")


def test_g4_an_unusable_data_dir_is_a_clear_usage_error(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with pytest.raises(UsageError, match="cannot open its database"):
        Host(CONVERSATION, data_dir=blocked)


def test_u3_an_app_installed_under_a_larger_limit_does_not_open_beyond_this_hosts(
    app_dir: Path, lineup_home: Path
) -> None:
    """Two kernels share one registry; the smaller host refuses what only the larger allowed."""
    from lineup_jupyter import Limits

    write_app(app_dir, html="<p>" + "x" * 5000 + "</p>")
    big = Host(conversation_id=CONVERSATION, limits=Limits(max_bundle_bytes=10_000))
    big.apps.install(app_dir)
    small = Host(conversation_id=CONVERSATION, limits=Limits(max_bundle_bytes=1_000))
    assert small.inventory["applications"] == []  # C5: not offered where it cannot open
    sent = Recorder(small)
    error = small.receive(ui_open("n", {"id": APP, "surface": "main"}))
    assert error is not None and (error.code, error.rule) == ("too_large", "U3")
    assert "limit is 1000" in error.message and "n" not in small.surfaces
    assert sent.last()["payload"]["code"] == "too_large"
    assert big.receive(ui_open("n", {"id": APP, "surface": "main"})) is None
