"""Writing a surface in files: ``Surface.from_dir(path)``, and a watch mode that reopens it.

A notebook author keeps html, css and js in an editor. ``Surface.from_dir`` reads them into an
immutable bundle; ``surface.open(agent, instance_id)`` opens it; ``surface.watch(agent,
instance_id)`` opens it and opens it again each time the files are saved. Code never changes
through a patch (U5), so a save becomes a new ``ui.open`` of the same instance id, which
replaces the old bundle (U1) and carries the state the host holds at that moment: what the
user did in the surface survives the edit. Each bundle a watcher opens is labelled a
development build of the surface's version (``0.1.0-dev.1``, ``-dev.2``, ...).

Which files (docs/agents.md, "Authoring a surface"): a folder with ``lineup-app.json`` is an
app being written; its manifest names the files, the id, name and version, they are checked
as an install checks them (H30) and opened inline. Any other folder holds exactly one
``*.html``, at most one ``*.css`` and at most one ``*.js`` at its top level; more is refused
by name, never guessed at.

Where the watching runs (``_threads.repeat``): called where an event loop runs (a notebook
cell: ipykernel runs cells inside its loop, and measured on 7.4 ``get_running_loop()``
succeeds in a plain cell), the polling is a task on that loop, so every reopen happens on the
kernel's thread like the rest of the host's work (its widget is not thread-safe; see
_threads.py). With no loop (a script, pytest) it is a daemon thread that calls the host under
the host's lock, as the transports do there. Either way a problem never reaches the user as
a traceback from a thread: it is logged with ``[lineup]`` and kept in ``watcher.last_error``.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from .agents._agent import DEFAULT_APP_ID, DEFAULT_APP_VERSION
from .appcenter._app_sources import InstallLimits
from .appcenter._manifest import MANIFEST_NAME, build_bundles, inline_assets, load_manifest
from .protocol import InlineApp, bundle_integrity
from .protocol._errors import ProtocolError, UsageError
from .protocol._integrity import parse_bundle_bytes
from .protocol._validate import DEFAULT_LIMITS, Limits, from_validation_error
from .runtime._threads import repeat

if TYPE_CHECKING:
    from .agents._agent import Agent

__all__ = ["Surface", "SurfaceWatcher"]

logger = logging.getLogger("lineup_jupyter")

_KINDS = {".html": "html", ".css": "css", ".js": "js"}
_CONVENTION = (
    f"a surface folder holds one .html file and at most one .css and one .js at its top "
    f"level (or a {MANIFEST_NAME} naming its files)"
)

# What the files look like on disk, without opening one: (name, mtime_ns, size, inode) of
# each, or None when the folder cannot be listed. The inode catches an editor's atomic save
# (write a new file, rename it over the old) however coarse the clock behind mtime is.
Stamp = tuple[tuple[str, int, int, int], ...] | None
Status = Literal["watching", "stopped", "closed", "replaced", "failed"]


def _watched_name(name: str) -> bool:
    """A top-level name that can change the bundle. Hidden names are never read (an editor's
    ``.index.html.swp``), as an install never reads them (H30)."""
    return not name.startswith(".") and (
        Path(name).suffix.lower() in _KINDS or name == MANIFEST_NAME
    )


def _stamp(folder: Path, named: tuple[str, ...]) -> Stamp:
    """The top level's candidate files and the files ``named`` (an app's may sit in subfolders)."""
    entries: dict[str, tuple[int, int, int]] = {}
    try:
        with os.scandir(folder) as listing:
            names = [entry.name for entry in listing if _watched_name(entry.name)]
    except OSError:
        return None
    for name in (*names, *named):
        try:
            status = (folder / name).stat()
        except OSError:  # gone since the listing, or never there: a change all the same
            entries[name] = (-1, -1, -1)
        else:
            entries[name] = (status.st_mtime_ns, status.st_size, status.st_ino)
    return tuple(sorted((name, *value) for name, value in entries.items()))


def _dev_version(version: str, build: int) -> str:
    """``version`` as development build ``build``: 0.1.0 -> 0.1.0-dev.2, 1.0.0-rc.1 ->
    1.0.0-rc.1.dev.2, build metadata kept last. In SemVer precedence each build sorts after
    the one before and before the release itself (numeric identifiers compare as numbers)."""
    core, plus, metadata = version.partition("+")
    joiner = "." if "-" in core else "-"
    return f"{core}{joiner}dev.{build}{plus}{metadata}"


@dataclass(frozen=True)
class _Options:
    """How a folder is read, kept so that a watcher reads it again the same way."""

    path: Path
    app_id: str | None
    version: str | None
    surface: str | None
    limits: Limits


@dataclass(frozen=True)
class Surface:
    """A surface's bundle as read from a folder. Made by ``Surface.from_dir``; immutable.

    ``files`` are the files read, relative to ``path``; ``integrity`` is the bundle's H4
    digest, sent with every open so the host checks what arrived.
    """

    path: Path
    app_id: str
    version: str
    name: str | None
    html: str = field(repr=False)
    css: str = field(repr=False)
    js: str = field(repr=False)
    integrity: str
    files: tuple[str, ...]
    _options: _Options = field(repr=False, compare=False)
    _stamp: Stamp = field(repr=False, compare=False)  # taken before the files were read

    @classmethod
    def from_dir(
        cls,
        path: str | os.PathLike[str],
        *,
        app_id: str | None = None,
        version: str | None = None,
        surface: str | None = None,
        limits: Limits | None = None,
    ) -> Surface:
        """Read a surface from a folder (the convention is in this module's docstring).

        ``app_id`` and ``version`` default to the manifest's, else to ``agent.open``'s
        defaults; ``surface`` picks one of an app's surfaces (needed when it has several);
        ``limits`` are the host's, when they are not the protocol's defaults. Raises
        UsageError, naming the folder and the files, for anything that cannot open (U2, U3).
        """
        options = _Options(
            Path(os.fspath(path)).expanduser().absolute(),  # a later chdir must not move it
            app_id,
            version,
            surface,
            DEFAULT_LIMITS if limits is None else limits,
        )
        return _read(options)

    def reload(self) -> Surface:
        """The folder as it is now, read the same way (UsageError as ``from_dir``)."""
        return _read(self._options)

    def open(self, agent: Agent, instance_id: str, *, state: dict[str, Any] | None = None) -> None:
        """Open the bundle as ``instance_id`` (replacing what is open there, U1).

        Raises the host's ProtocolError if it refuses, like ``agent.open``.
        """
        self._open(agent, instance_id, state, self.version)

    def watch(
        self,
        agent: Agent,
        instance_id: str,
        *,
        state: dict[str, Any] | None = None,
        interval: float = 0.5,
    ) -> SurfaceWatcher:
        """Open the bundle as ``instance_id``, then reopen it whenever the folder's files
        change, keeping the surface's current state (U1, U5). Looks every ``interval``
        seconds; ``stop()`` the watcher (or use it in a ``with`` block) to end it.

        Raises what ``open`` raises if the first open is refused; after that, nothing.
        """
        return SurfaceWatcher(self, agent, instance_id, state=state, interval=interval)

    @property
    def _bundle(self) -> tuple[str, str, str | None, str]:
        """What an open sends, but for the html, css and js that the digest stands for."""
        return (self.app_id, self.version, self.name, self.integrity)

    def _open(
        self, agent: Agent, instance_id: str, state: dict[str, Any] | None, version: str
    ) -> None:
        agent.open(
            instance_id,
            html=self.html,
            css=self.css,
            js=self.js,
            state=state,
            app_id=self.app_id,
            version=version,
            name=self.name,
            integrity=self.integrity,
        )


def _read(options: _Options) -> Surface:
    folder = options.path
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise UsageError(f"[lineup] {folder} {what}; {_CONVENTION}")
    stamp = _stamp(folder, ())
    limit = options.limits.max_bundle_bytes
    if (folder / MANIFEST_NAME).is_file():
        app_id, version, name, parts, files = _read_app(folder, options.surface, limit)
    else:
        if options.surface is not None:
            raise UsageError(
                f"[lineup] {folder}: surface={options.surface!r} picks one of an app's "
                f"surfaces, and there is no {MANIFEST_NAME} here"
            )
        app_id, version, name = DEFAULT_APP_ID, DEFAULT_APP_VERSION, None
        parts, files = _read_plain(folder, limit)
    app_id = app_id if options.app_id is None else options.app_id
    version = version if options.version is None else options.version
    html, css, js = parts
    app = {"id": app_id, "version": version, "html": html, "css": css, "js": js}
    if name is not None:
        app["name"] = name
    try:  # the wire model's own checks (U2, U3), so what reads here opens there
        InlineApp.model_validate(app, context={"max_bundle_bytes": limit})
    except ValidationError as exc:
        error = from_validation_error(exc, InlineApp, app, at=("payload", "app"))
        raise UsageError(f"[lineup] {folder}: {error.message} ({error.rule})") from None
    return Surface(
        folder,
        app_id,
        version,
        name,
        html,
        css,
        js,
        bundle_integrity(html, css, js),
        files,
        options,
        stamp,
    )


def _read_plain(folder: Path, limit: int) -> tuple[tuple[str, str, str], tuple[str, ...]]:
    found: dict[str, list[str]] = {"html": [], "css": [], "js": []}
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError as exc:
        raise UsageError(f"[lineup] {folder} cannot be listed: {exc.strerror or exc}") from None
    for entry in entries:
        if _watched_name(entry.name) and entry.name != MANIFEST_NAME and entry.is_file():
            found[_KINDS[Path(entry.name).suffix.lower()]].append(entry.name)
    if not found["html"]:
        raise UsageError(f"[lineup] {folder} has no .html file; {_CONVENTION}")
    for kind, names in found.items():
        if len(names) > 1:
            raise UsageError(
                f"[lineup] {folder} has {len(names)} .{kind} files ({', '.join(names)}); "
                f"{_CONVENTION}. Keep one there (others may live in a subfolder)."
            )
    files = tuple(names[0] for names in found.values() if names)
    html, css, js = (
        _read_text(folder, names[0], limit) if names else "" for names in found.values()
    )
    return (html, css, js), files


def _read_text(folder: Path, name: str, limit: int) -> str:
    try:
        return _read_bytes(folder, name, limit, "U3: html, css and js together").decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"[lineup] {folder / name} is not UTF-8 text") from None


def _read_bytes(folder: Path, name: str, limit: int, rule: str) -> bytes:
    path = folder / name
    try:
        size = path.stat().st_size
        if size > limit:  # refused before it is read: it could be anything, of any size
            raise UsageError(f"[lineup] {path} is {size} bytes; the limit is {limit} ({rule})")
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"[lineup] {path} cannot be read: {exc.strerror or exc}") from None


def _read_app(
    folder: Path, surface_id: str | None, limit: int
) -> tuple[str, str, str, tuple[str, str, str], tuple[str, ...]]:
    """An app's surface, checked as an install checks it (H30) and its assets inlined as when
    an installed surface opens, so what works here works once installed. Only the manifest
    and the files it names are read: not the whole folder (a checkout holds much else), and
    so nothing that comes and goes while an editor saves can fail a read."""
    where = str(folder)
    max_bytes = InstallLimits().max_file_bytes
    data = _read_bytes(folder, MANIFEST_NAME, max_bytes, "H30")
    manifest = load_manifest(data, where, max_bytes)
    ids = ", ".join(repr(surface.id) for surface in manifest.surfaces)
    if surface_id is None and len(manifest.surfaces) > 1:
        raise UsageError(f"[lineup] {where}: the app has surfaces {ids}; pick one with surface=")
    chosen = manifest.surfaces[0] if surface_id is None else manifest.surface(surface_id)
    if chosen is None:
        raise UsageError(f"[lineup] {where}: the app has no surface {surface_id!r}, only {ids}")
    named = [path for path in (chosen.html, chosen.css, chosen.js, *chosen.assets) if path]
    # A file named but absent is left out, for build_bundles to say which one is missing.
    files = {
        path: _read_bytes(folder, path, max_bytes, "H30")
        for path in named
        if (folder / path).is_file()
    }
    # Only the chosen surface is checked: a sibling still being written must not block it.
    only = manifest.model_copy(update={"surfaces": [chosen]})
    html, css, js, assets = parse_bundle_bytes(build_bundles(only, files, where, limit)[chosen.id])
    parts = inline_assets(html, css, js, assets)
    return manifest.id, manifest.version, manifest.name, parts, (MANIFEST_NAME, *named)


class SurfaceWatcher:
    """Keeps one open surface in step with its folder. Made by ``Surface.watch``.

    ``status`` is ``watching``; or why it ended: ``stopped`` (by ``stop()``), ``closed`` (the
    user or the agent closed the surface), ``replaced`` (another ``ui.open`` took the instance
    id), ``failed`` (a bug of ours, logged). ``last_error`` is why the latest change did not
    open (None after a good one); ``reloads`` counts reopens; ``surface`` is the bundle open.
    """

    def __init__(
        self,
        surface: Surface,
        agent: Agent,
        instance_id: str,
        *,
        state: dict[str, Any] | None,
        interval: float,
    ) -> None:
        if (
            isinstance(interval, bool)
            or not isinstance(interval, (int, float))
            or not math.isfinite(interval)
            or interval <= 0
        ):
            raise UsageError(f"[lineup] interval is a positive number of seconds, not {interval!r}")
        self.agent = agent
        self.instance_id = instance_id
        self.interval = float(interval)
        self.reloads = 0
        self.last_error: Exception | None = None
        self._surface = surface
        self._stamp = surface._stamp  # of when it was read: an edit since is seen at once
        self._status: Status = "watching"
        self._stopped = threading.Event()
        self._checking = threading.Lock()  # check() by hand and the poller, one at a time
        host = agent.host
        with host.lock:  # the generation read must be this open's, not a later one's
            surface._open(agent, instance_id, state, _dev_version(surface.version, 1))
            self._generation = host.surfaces[instance_id].generation
        # A script error the open bundle's bridge reports (a syntax error saved, a throwing
        # onState) is this watcher's last_error too: the bundle opened, but does not work.
        newest = host.problems.newest()
        self._problems_seen = newest.seq if newest is not None else 0
        self._unwatch_problems = host.problems.watch(self._on_problem)
        self._polling = repeat(
            self.interval,
            self._poll,
            what=f"watching surface {instance_id!r}",
            name=f"lineup-watch-{instance_id}",
        )

    @property
    def status(self) -> Status:
        return self._status

    @property
    def surface(self) -> Surface:
        """The bundle open now (the last one the host accepted)."""
        return self._surface

    @property
    def version(self) -> str:
        """The version the open bundle was sent with: ``surface.version`` as a dev build."""
        return _dev_version(self._surface.version, self.reloads + 1)

    def check(self) -> bool:
        """Look at the files once, now, and reopen the surface if its bundle changed.

        True when it reopened. Never raises for the files or the host's answer: a problem is
        logged and kept in ``last_error``, and the surface stays as it was.
        """
        with self._checking:
            if not self._still_ours():
                return False
            stamp = _stamp(self._surface.path, self._surface.files)
            if stamp == self._stamp:
                return False
            # Kept from before the read: a save during the read changes the files again and
            # is read on the next look, never missed.
            self._stamp = stamp
            try:
                fresh = self._surface.reload()
            except UsageError as error:
                self._report(error)
                return False
            if fresh._bundle == self._surface._bundle:  # touched, or saved as it was
                self._surface = fresh  # the same bundle, maybe from other files: watch those
                return False
            return self._reopen(fresh)

    def stop(self) -> None:
        """Stop watching; the surface stays open as it is. Stopping again does nothing."""
        self._finish("stopped")

    def __enter__(self) -> SurfaceWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return (
            f"SurfaceWatcher(instance_id={self.instance_id!r}, path={str(self._surface.path)!r}, "
            f"version={self.version!r}, status={self._status!r})"
        )

    def _still_ours(self) -> bool:
        """Whether the instance is still the one this watcher opened; if not, stop: a save
        must not bring back a surface someone closed (U10) or undo someone else's open."""
        if self._stopped.is_set():
            return False
        instance = self.agent.host.surfaces.get(self.instance_id)
        if instance is None:
            self._finish("closed")
        elif instance.generation != self._generation:
            self._finish("replaced")
        return not self._stopped.is_set()

    def _reopen(self, fresh: Surface) -> bool:
        host = self.agent.host
        with host.lock:  # reading the state and opening are one step: no patch falls between
            if not self._still_ours():
                return False
            state = host.surfaces[self.instance_id].state
            try:
                fresh._open(
                    self.agent,
                    self.instance_id,
                    state,
                    _dev_version(fresh.version, self.reloads + 2),
                )
            except ProtocolError as error:  # already answered to the agent (agent.errors)
                self._report(error)
                return False
            self._generation = host.surfaces[self.instance_id].generation
            self._surface = fresh
            self.reloads += 1
            self.last_error = None
            newest = host.problems.newest()  # what the old bundle did wrong is not this one's
            self._problems_seen = newest.seq if newest is not None else 0
        logger.info("[lineup] surface %r reopened as %s", self.instance_id, self.version)
        return True

    def _on_problem(self) -> None:
        problem = self.agent.host.problems.newest()
        if (
            problem is not None
            and problem.source == "surface"
            and problem.instance_id == self.instance_id
            and problem.seq > self._problems_seen
        ):
            self.last_error = UsageError(f"[lineup] {problem}")

    def _report(self, error: Exception) -> None:
        self.last_error = error
        logger.warning(
            "[lineup] surface %r was not reopened, and stays as it was: %s",
            self.instance_id,
            error,
        )

    def _finish(self, status: Status) -> None:
        # Under the host's lock, as a reopen is: once stop() returns, nothing more is sent.
        with self.agent.host.lock:
            if self._stopped.is_set():
                return
            self._status = status
            self._stopped.set()
        self._unwatch_problems()
        if status in ("closed", "replaced"):
            logger.info("[lineup] surface %r was %s; stopped watching", self.instance_id, status)
        self._polling.stop()

    def _poll(self) -> None:
        try:
            self.check()
        except Exception as exc:  # a bug of ours: say so once and stop, not every interval
            logger.exception("[lineup] watching surface %r failed; stopped", self.instance_id)
            self.last_error = exc
            self._finish("failed")
