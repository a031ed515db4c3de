"""The app center (G2, G4): installed apps in SQLite, their bundles in a content-addressed
cache, and the inventory revision counter, all in the data dir (``_store.py``).

- ``apps.sqlite3``: one row per app (enabled, current version) and one per installed version
  (manifest, per-surface integrity, the version it replaced, where it came from). Every change
  is one ``BEGIN IMMEDIATE`` transaction, so two kernels installing at once queue up (WAL,
  busy timeout) instead of corrupting each other.
- ``bundles/<sha256 hex>.bundle``: exactly the bytes a surface's integrity is taken over
  (H4), so the same surface in two versions or two apps is stored once, and what is verified
  on every load is what is opened (H32).

Nothing here knows about agents; the host passes ``on_change`` and is told, after each
committed change, which app changed and how.
"""

from __future__ import annotations

import base64
import builtins
import json
import os
import sqlite3
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ..core._views import views
from ..protocol import AppRef, InlineApp, rules
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._integrity import parse_bundle_bytes
from ..runtime._store import connect
from ..runtime._watchers import Watchers
from ._app_sources import InstallLimits, read_source, sri
from ._manifest import (
    MANIFEST_NAME,
    AppManifest,
    SurfaceManifest,
    build_bundles,
    inline_assets,
    load_manifest,
    semver_key,
)
from ._trust import BundleTrust

__all__ = [
    "AppCenter",
    "AppInfo",
    "AppVerification",
    "Change",
    "OpenedSurface",
    "shipped_apps",
]

_SHIPPED = Path(__file__).parent.parent / "apps"

Change = Literal[
    "installed", "upgraded", "repaired", "enabled", "disabled", "rolled_back", "removed"
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS apps (
    id TEXT PRIMARY KEY,
    enabled INTEGER NOT NULL,
    current TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS versions (
    app_id TEXT NOT NULL,
    version TEXT NOT NULL,
    manifest TEXT NOT NULL,
    integrities TEXT NOT NULL,
    previous TEXT,
    source_kind TEXT NOT NULL,
    source TEXT NOT NULL,
    installed_at TEXT NOT NULL,
    PRIMARY KEY (app_id, version)
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


@dataclass(frozen=True)
class AppInfo:
    """One installed app as the registry holds it (the user's view, not the agent's: C5)."""

    id: str
    name: str
    version: str
    enabled: bool
    previous: str | None  # the version rollback returns to
    versions: tuple[str, ...]  # every installed version, oldest first by SemVer
    surfaces: tuple[str, ...]
    source: str  # where the current version came from


@dataclass(frozen=True)
class AppVerification:
    """What ``verify`` found for one surface of one installed version."""

    app_id: str
    version: str
    surface: str
    ok: bool
    problem: str | None = None

    def __bool__(self) -> bool:
        return self.ok


@dataclass(frozen=True)
class OpenedSurface:
    """An installed surface, verified and ready to open: the bundle (assets inlined) and the
    manifest entry that says which events it may send (C6)."""

    app: InlineApp
    surface: SurfaceManifest


def shipped_apps() -> dict[str, Path]:
    """The apps that come with lineup-jupyter: app id -> folder (``install`` takes either)."""
    found = {}
    for manifest in sorted(_SHIPPED.glob(f"*/{MANIFEST_NAME}")):
        found[json.loads(manifest.read_text("utf-8"))["id"]] = manifest.parent
    return found


def _manifest_problem(text: str) -> str | None:
    """Why a stored manifest no longer passes this version's checks, or None."""
    try:
        AppManifest.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "manifest"
        return (
            f"the stored manifest no longer passes this version's checks ({where}: "
            f"{first['msg']}); it is not offered to agents. Remove the app, or reinstall a "
            "version that passes"
        )
    return None


def _stored_manifest(text: str) -> AppManifest | None:
    try:
        return AppManifest.model_validate_json(text)
    except ValidationError:
        return None


def _cache_name(integrity: str) -> str:
    return base64.b64decode(integrity.removeprefix("sha256-")).hex() + ".bundle"


class AppCenter:
    """Install, enable, disable, upgrade, roll back and remove apps; open their surfaces.

    ``directory`` is the data dir (``_store.data_dir``). ``on_change(app_id, change)`` runs
    after each committed change (the host sends a new inventory revision from it).
    """

    def __init__(
        self,
        directory: Path,
        *,
        on_change: Callable[[str, Change], None] | None = None,
        max_bundle_bytes: int = rules.DEFAULT_MAX_BUNDLE_BYTES,
        limits: InstallLimits | None = None,
        trust: BundleTrust | None = None,
    ) -> None:
        self.directory = directory
        # Which inline bundles may open beside the installed apps (H37): the app center is
        # where the user sees and decides what code runs, so the policy lives here too.
        self.trust = trust if trust is not None else BundleTrust.dev()
        self.cache = directory / "bundles"
        self.max_bundle_bytes = max_bundle_bytes
        self.limits = limits or InstallLimits()
        self._on_change = on_change
        self._watchers: Watchers[[str, Change]] = Watchers("app center")
        self._lock = threading.Lock()  # one connection, shared by this process's threads
        # The current row of each app read so far, valid while PRAGMA data_version says no
        # other connection (kernel, CLI) committed: an open is then one cheap query, not a join.
        self._rows: dict[str, tuple[bool, str, AppManifest, dict[str, str]] | None] = {}
        self._data_version: int | None = None
        self._widget: Any = None
        try:
            self._db = connect(directory / "apps.sqlite3")
            with self._transaction():
                # executescript would commit on its own: the statements run one by one inside
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
        except (OSError, sqlite3.Error) as exc:
            raise UsageError(
                f"[lineup] the app center cannot open its database in {directory}: {exc}; "
                "pass data_dir= or set LINEUP_JUPYTER_HOME to a writable folder"
            ) from None

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            self._rows.clear()  # data_version does not count this connection's own commits

    def _changed(self, app_id: str, change: Change) -> None:
        if self._on_change is not None:
            self._on_change(app_id, change)
        self._watchers.notify(app_id, change)

    def watch(self, watcher: Callable[[str, Change], None]) -> Callable[[], None]:
        """Call ``watcher(app_id, change)`` after each change this app center makes; returns
        the function that stops it. (Another process's changes are seen on the next read.)"""
        return self._watchers.add(watcher)

    @property
    def widget(self) -> Any:
        """The app center's view (made on first use); displaying ``host.apps`` displays it."""
        if self._widget is None:
            self._widget = views().app_center(self)
        return self._widget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    # ---- installing ------------------------------------------------------------------

    def install(
        self, source: str | os.PathLike[str], *, integrity: str | None = None, enable: bool = True
    ) -> AppInfo:
        """Install an app from a folder, a zip/tar archive or an http(s) URL (``integrity``
        required for a URL: the ``sha256-<base64>`` of the file). Installing the same version
        with the same bytes again changes nothing."""
        manifest, framings, kind, location = self._read(source, integrity)
        change: Change | None
        with self._transaction() as db:
            row = db.execute("SELECT current FROM apps WHERE id = ?", (manifest.id,)).fetchone()
            if row is not None and not self._same(db, manifest, framings):
                raise UsageError(
                    f"[lineup] {manifest.id} is already installed (version {row[0]}); "
                    f"use upgrade to install {manifest.version}"
                )
            if row is not None:
                # The same bytes again: a damaged or missing cache copy is repaired, and the
                # app, left out of the inventory while it failed to verify (C5), announced.
                written = [self._write_blob(sri(data), data) for data in framings.values()]
                change = "repaired" if any(written) else None
            else:
                self._store_version(db, manifest, framings, None, kind, location)
                db.execute(
                    "INSERT INTO apps (id, enabled, current) VALUES (?, ?, ?)",
                    (manifest.id, int(enable), manifest.version),
                )
                change = "installed"
            info = self._info(db, manifest.id)
        if change is not None:
            self._changed(manifest.id, change)
        return info

    def upgrade(self, source: str | os.PathLike[str], *, integrity: str | None = None) -> AppInfo:
        """Install a higher version of an installed app and make it current; the version it
        replaces is kept for ``rollback``. Enabled or disabled stays as it was."""
        manifest, framings, kind, location = self._read(source, integrity)
        with self._transaction() as db:
            current = self._current(db, manifest.id)
            if semver_key(manifest.version) <= semver_key(current):
                raise UsageError(
                    f"[lineup] {manifest.id} {manifest.version} is not newer than the installed "
                    f"{current}; an upgrade goes up (use rollback to go back)"
                )
            known = db.execute(
                "SELECT integrities FROM versions WHERE app_id = ? AND version = ?",
                (manifest.id, manifest.version),
            ).fetchone()
            if known is not None and not self._same(db, manifest, framings):
                raise UsageError(
                    f"[lineup] {manifest.id} {manifest.version} was installed before with other "
                    "bytes; a version names one content, so give the new one a new version"
                )
            db.execute(
                "DELETE FROM versions WHERE app_id = ? AND version = ?",
                (manifest.id, manifest.version),
            )
            self._store_version(db, manifest, framings, current, kind, location)
            db.execute("UPDATE apps SET current = ? WHERE id = ?", (manifest.version, manifest.id))
            info = self._info(db, manifest.id)
        self._changed(manifest.id, "upgraded")
        return info

    def _read(
        self, source: str | os.PathLike[str], integrity: str | None
    ) -> tuple[AppManifest, dict[str, bytes], str, str]:
        if not Path(source).exists() and os.fspath(source) in (shipped := shipped_apps()):
            source = shipped[os.fspath(source)]
        read = read_source(source, integrity, self.limits)
        where = read.location
        manifest = load_manifest(read.files[MANIFEST_NAME], where, self.limits.max_file_bytes)
        shipped_folder = shipped_apps().get(manifest.id)
        if shipped_folder is not None and not (
            read.kind == "folder" and Path(read.location) == shipped_folder.resolve()
        ):
            raise UsageError(
                f"[lineup] {where}: the id {manifest.id} is reserved for the app that comes "
                "with lineup-jupyter (install it by its id); give this app an id of its own"
            )
        framings = build_bundles(manifest, read.files, where, self.max_bundle_bytes)
        return manifest, framings, read.kind, read.location

    def _same(
        self, db: sqlite3.Connection, manifest: AppManifest, framings: dict[str, bytes]
    ) -> bool:
        row = db.execute(
            "SELECT manifest, integrities FROM versions WHERE app_id = ? AND version = ?",
            (manifest.id, manifest.version),
        ).fetchone()
        return (
            row is not None
            and _stored_manifest(row[0]) == manifest
            and json.loads(row[1]) == {sid: sri(data) for sid, data in framings.items()}
        )

    def _store_version(
        self,
        db: sqlite3.Connection,
        manifest: AppManifest,
        framings: dict[str, bytes],
        previous: str | None,
        kind: str,
        location: str,
    ) -> None:
        integrities = {surface_id: sri(data) for surface_id, data in framings.items()}
        self.cache.mkdir(parents=True, exist_ok=True)
        for surface_id, data in framings.items():
            self._write_blob(integrities[surface_id], data)
        db.execute(
            "INSERT INTO versions (app_id, version, manifest, integrities, previous, "
            "source_kind, source, installed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                manifest.id,
                manifest.version,
                manifest.model_dump_json(),
                json.dumps(integrities, sort_keys=True),
                previous,
                kind,
                location,
                datetime.now(timezone.utc).isoformat(timespec="seconds"),
            ),
        )

    def _write_blob(self, integrity: str, data: bytes) -> bool:
        """Store a framing under its digest: once (an intact copy is kept), atomically (a
        reader never sees half a file), and a damaged copy is replaced. True if it wrote."""
        path = self.cache / _cache_name(integrity)
        try:
            if sri(path.read_bytes()) == integrity:
                return False
        except FileNotFoundError:
            pass
        handle, temporary = tempfile.mkstemp(dir=self.cache, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return True

    # ---- changing state --------------------------------------------------------------

    def enable(self, app_id: str) -> AppInfo:
        """Let agents see and open the app (it appears in the inventory, C5)."""
        return self._set_enabled(app_id, True)

    def disable(self, app_id: str) -> AppInfo:
        """Withdraw the app: it leaves the inventory, its open surfaces close (H35), and
        references to it are answered ``unsupported`` (C3)."""
        return self._set_enabled(app_id, False)

    def _set_enabled(self, app_id: str, enabled: bool) -> AppInfo:
        with self._transaction() as db:
            self._current(db, app_id)
            changed = db.execute(
                "UPDATE apps SET enabled = ? WHERE id = ? AND enabled != ?",
                (int(enabled), app_id, int(enabled)),
            ).rowcount
            info = self._info(db, app_id)
        if changed:
            self._changed(app_id, "enabled" if enabled else "disabled")
        return info

    def rollback(self, app_id: str) -> AppInfo:
        """Make the version the current one replaced current again (the newer one stays
        installed, so an upgrade to it needs no download)."""
        with self._transaction() as db:
            current = self._current(db, app_id)
            (previous,) = db.execute(
                "SELECT previous FROM versions WHERE app_id = ? AND version = ?",
                (app_id, current),
            ).fetchone()
            if previous is None:
                raise UsageError(
                    f"[lineup] {app_id} {current} did not replace another version; there is "
                    "nothing to roll back to"
                )
            db.execute("UPDATE apps SET current = ? WHERE id = ?", (previous, app_id))
            info = self._info(db, app_id)
        self._changed(app_id, "rolled_back")
        return info

    def remove(self, app_id: str) -> None:
        """Uninstall every version; cached bundles no installed version uses are deleted.

        Crash-safe: the registry forgets the app in one committed transaction first, and
        only then are unused cache files deleted (in a second one, so no install in another
        kernel writes a file meanwhile that this one would take for unused). A process
        killed in between leaves unused files, never a listed app without its bundle; the
        next ``remove`` deletes them."""
        with self._transaction() as db:
            self._current(db, app_id)
            db.execute("DELETE FROM versions WHERE app_id = ?", (app_id,))
            db.execute("DELETE FROM apps WHERE id = ?", (app_id,))
        self._changed(app_id, "removed")
        with self._transaction() as db:
            used = {
                _cache_name(integrity)
                for (text,) in db.execute("SELECT integrities FROM versions")
                for integrity in json.loads(text).values()
            }
            for blob in self.cache.glob("*.bundle"):
                if blob.name not in used:
                    blob.unlink(missing_ok=True)

    # ---- reading ---------------------------------------------------------------------

    def _current(self, db: sqlite3.Connection, app_id: str) -> str:
        row = db.execute("SELECT current FROM apps WHERE id = ?", (app_id,)).fetchone()
        if row is None:
            raise UsageError(f"[lineup] no app {app_id!r} is installed")
        current: str = row[0]
        return current

    def _info(self, db: sqlite3.Connection, app_id: str) -> AppInfo:
        enabled, current = db.execute(
            "SELECT enabled, current FROM apps WHERE id = ?", (app_id,)
        ).fetchone()
        manifest_text, previous, source = db.execute(
            "SELECT manifest, previous, source FROM versions WHERE app_id = ? AND version = ?",
            (app_id, current),
        ).fetchone()
        # Read as stored, not validated again: a manifest an earlier version accepted and
        # this one refuses (issue 14's schemas) is still listed, and verify() says why.
        manifest = json.loads(manifest_text)
        versions = sorted(
            (v for (v,) in db.execute("SELECT version FROM versions WHERE app_id = ?", (app_id,))),
            key=semver_key,
        )
        return AppInfo(
            id=app_id,
            name=manifest["name"],
            version=current,
            enabled=bool(enabled),
            previous=previous,
            versions=tuple(versions),
            surfaces=tuple(surface["id"] for surface in manifest["surfaces"]),
            source=source,
        )

    def get(self, app_id: str) -> AppInfo:
        with self._lock:
            self._current(self._db, app_id)
            return self._info(self._db, app_id)

    def list(self) -> builtins.list[AppInfo]:
        """Every installed app, by id."""
        with self._lock:
            ids = [row[0] for row in self._db.execute("SELECT id FROM apps ORDER BY id")]
            return [self._info(self._db, app_id) for app_id in ids]

    def _installed(self, app_id: str) -> tuple[bool, str, AppManifest, dict[str, str]] | None:
        with self._lock:
            (data_version,) = self._db.execute("PRAGMA data_version").fetchone()
            if data_version != self._data_version:
                self._rows.clear()
                self._data_version = data_version
            if app_id in self._rows:
                return self._rows[app_id]
            row = self._db.execute(
                "SELECT a.enabled, a.current, v.manifest, v.integrities FROM apps a "
                "JOIN versions v ON v.app_id = a.id AND v.version = a.current WHERE a.id = ?",
                (app_id,),
            ).fetchone()
            found = None
            manifest = None if row is None else _stored_manifest(row[2])
            if row is not None and manifest is not None:  # else: not offered (verify says why)
                integrities: dict[str, str] = json.loads(row[3])
                found = (bool(row[0]), row[1], manifest, integrities)
            self._rows[app_id] = found
            return found

    def _load(self, app_id: str, version: str, surface_id: str, integrity: str) -> bytes:
        """The cached framing, verified against the registry's digest (H32)."""
        path = self.cache / _cache_name(integrity)
        try:
            data = path.read_bytes()
        except OSError:
            raise ProtocolError(
                "integrity_mismatch",
                "S7",
                "$.payload.app",
                f"the cached bundle of {app_id} {version} surface {surface_id!r} is missing "
                "from the app cache; reinstall the app. Nothing was opened.",
            ) from None
        actual = sri(data)
        if actual != integrity:
            raise ProtocolError(
                "integrity_mismatch",
                "S7",
                "$.payload.app",
                f"the cached bundle of {app_id} {version} surface {surface_id!r} was changed "
                f"on disk: it hashes to {actual}, but was installed as {integrity}; reinstall "
                "the app. Nothing was opened. " + rules.RULES["S7"],
            )
        return data

    def verify(self, app_id: str | None = None) -> builtins.list[AppVerification]:
        """Re-hash the cached bundles of every installed version (of one app, or all)."""
        with self._lock:
            query = "SELECT app_id, version, integrities, manifest FROM versions"
            rows = self._db.execute(
                query + (" WHERE app_id = ?" if app_id else "") + " ORDER BY app_id",
                (app_id,) if app_id else (),
            ).fetchall()
        if app_id is not None and not rows:
            raise UsageError(f"[lineup] no app {app_id!r} is installed")
        results = []
        for found_id, version, text, manifest in sorted(
            rows, key=lambda r: (r[0], semver_key(r[1]))
        ):
            problem = _manifest_problem(manifest)
            if problem is not None:
                results.append(AppVerification(found_id, version, MANIFEST_NAME, False, problem))
            for surface_id, integrity in json.loads(text).items():
                try:
                    self._load(found_id, version, surface_id, integrity)
                except ProtocolError as error:
                    results.append(
                        AppVerification(found_id, version, surface_id, False, error.message)
                    )
                else:
                    results.append(AppVerification(found_id, version, surface_id, True))
        return results

    def open_surface(self, ref: AppRef) -> OpenedSurface:
        """The bundle an AppRef names (H5, C6), verified from the cache; or the deterministic
        refusal (C3: ``unsupported``, never a fallback or a download; S7 for a damaged cache)."""

        def unsupported(why: str) -> ProtocolError:
            return ProtocolError(
                "unsupported",
                "C3",
                "$.payload.app",
                f"{why}, so nothing is opened and nothing is downloaded. " + rules.RULES["C3"],
            )

        installed = self._installed(ref.id)
        if installed is None:
            with self._lock:
                listed = self._db.execute("SELECT 1 FROM apps WHERE id = ?", (ref.id,)).fetchone()
            raise unsupported(
                f"app {ref.id!r} is installed, but its manifest no longer passes this host's "
                "checks (`lineup app verify` says why)"
                if listed
                else f"no app {ref.id!r} is installed on this host"
            )
        enabled, version, manifest, integrities = installed
        if not enabled:
            raise unsupported(f"app {ref.id!r} is disabled (revoked) on this host")
        if ref.version is not None and ref.version != version:
            raise unsupported(f"app {ref.id!r} is enabled at version {version}, not {ref.version}")
        surface = manifest.surface(ref.surface)
        if surface is None:
            raise unsupported(f"app {ref.id!r} {version} has no surface {ref.surface!r}")
        return OpenedSurface(self._bundle(ref.id, version, manifest, surface, integrities), surface)

    def _bundle(
        self,
        app_id: str,
        version: str,
        manifest: AppManifest,
        surface: SurfaceManifest,
        integrities: dict[str, str],
    ) -> InlineApp:
        """The surface's bundle as it opens: verified from the cache (H32), assets inlined,
        within this host's bundle limit (another kernel may have installed it under a larger
        one). ProtocolError when it cannot open here."""
        integrity = integrities[surface.id]
        html, css, js, assets = parse_bundle_bytes(
            self._load(app_id, version, surface.id, integrity)
        )
        html, css, js = inline_assets(html, css, js, assets)
        size = sum(len(part.encode("utf-8")) for part in (html, css, js))
        if size > self.max_bundle_bytes:
            raise ProtocolError(
                "too_large",
                "U3",
                "$.payload.app",
                f"{app_id} {version} surface {surface.id!r} is {size} bytes with its assets; "
                f"this host's bundle limit is {self.max_bundle_bytes}. Nothing was opened. "
                + rules.RULES["U3"],
            )
        return InlineApp.model_construct(  # checked at install; the digest proves it unchanged
            id=app_id,
            name=manifest.name,
            version=version,
            integrity=integrity,
            html=html,
            css=css,
            js=js,
        )

    def inventory_entries(self) -> builtins.list[dict[str, Any]]:
        """``applications`` of client.inventory (C4, C5): enabled apps whose current version
        verifies, with their surfaces' ids and events. Nothing else: no source, no path."""
        with self._lock:
            ids = [
                row[0]
                for row in self._db.execute("SELECT id FROM apps WHERE enabled = 1 ORDER BY id")
            ]
        entries = []
        for app_id in ids:
            installed = self._installed(app_id)
            if installed is None or not installed[0]:
                continue  # changed by another kernel meanwhile
            _, version, manifest, integrities = installed
            try:
                for surface in manifest.surfaces:
                    self._bundle(app_id, version, manifest, surface, integrities)
            except ProtocolError:
                continue  # not verified locally, or too large for this host: not offered (C5)
            entries.append(
                {
                    "id": app_id,
                    "version": version,
                    "surfaces": [
                        {"id": surface.id, "events": list(surface.events)}
                        for surface in manifest.surfaces
                    ],
                }
            )
        return entries

    def next_revision(self) -> int:
        """The next client.inventory revision of every host on this data dir: increasing,
        never reused, also across kernel restarts (C2, H36)."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO counters (name, value) VALUES ('inventory_revision', 1) "
                "ON CONFLICT (name) DO UPDATE SET value = value + 1"
            )
            (value,) = db.execute(
                "SELECT value FROM counters WHERE name = 'inventory_revision'"
            ).fetchone()
        revision: int = value
        return revision
