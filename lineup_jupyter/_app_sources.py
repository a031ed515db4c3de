"""Reading an app's files from where the user points: a folder, a zip or tar archive, or an
http(s) URL the kernel downloads (H30, H31). The result is a map of relative path -> bytes;
nothing is written anywhere and nothing is followed outside the source.

Every source is bounded (file count, size of each file and of all of them, download size)
and every name is a relative path of plain names, so an archive cannot write or read outside
its own tree: no absolute path, no ``..``, no backslash, no links or devices.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import stat
import tarfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from ._errors import UsageError
from ._manifest import MANIFEST_NAME

__all__ = ["InstallLimits", "Source", "read_source", "sri"]


@dataclass(frozen=True)
class InstallLimits:
    """How much an install source may hold (H30)."""

    max_files: int = 256
    max_file_bytes: int = 2 * 1024 * 1024
    max_total_bytes: int = 8 * 1024 * 1024
    max_download_bytes: int = 8 * 1024 * 1024
    timeout_seconds: float = 30.0


@dataclass(frozen=True)
class Source:
    """What was read, and from where (kept in the registry, never shown to an agent: C5)."""

    kind: str  # "folder", "zip", "tar" or "url"
    location: str
    files: dict[str, bytes]


def sri(data: bytes) -> str:
    """``sha256-<base64>`` of some bytes: the integrity a URL install is checked against."""
    return "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode("ascii")


class _Collector:
    def __init__(self, where: str, limits: InstallLimits) -> None:
        self.where = where
        self.limits = limits
        self.files: dict[str, bytes] = {}
        self.total = 0

    def refuse(self, why: str) -> UsageError:
        return UsageError(f"[lineup] {self.where}: {why} (H30)")

    def name(self, raw: str) -> str:
        if "\\" in raw or "\x00" in raw:
            raise self.refuse(f"the name {raw!r} holds a backslash or NUL")
        path = PurePosixPath(raw)
        if path.is_absolute() or raw.startswith("/"):
            raise self.refuse(f"{raw!r} is an absolute path")
        parts = [part for part in path.parts if part != "."]
        if not parts or any(part == ".." for part in parts):
            raise self.refuse(f"{raw!r} leaves the app's folder")
        return "/".join(parts)

    def announce(self, size: int) -> None:
        """Refuse before reading what is declared too large (a zip bomb says so up front)."""
        if len(self.files) >= self.limits.max_files:
            raise self.refuse(f"it holds more than {self.limits.max_files} files")
        if size > self.limits.max_file_bytes:
            raise self.refuse(f"a file is {size} bytes; the limit is {self.limits.max_file_bytes}")
        if self.total + size > self.limits.max_total_bytes:
            raise self.refuse(f"its files exceed {self.limits.max_total_bytes} bytes together")

    def add(self, name: str, content: bytes) -> None:
        self.announce(len(content))
        if name in self.files:
            raise self.refuse(f"{name!r} is in it twice")
        self.files[name] = content
        self.total += len(content)

    def read_bounded(self, stream: IO[bytes], declared: int) -> bytes:
        # Read at most one byte more than declared: an entry that lies about its size is caught.
        content = stream.read(declared + 1)
        if len(content) != declared:
            raise self.refuse("an entry's size differs from what the archive declares")
        return content

    def rooted(self) -> dict[str, bytes]:
        """The files relative to the folder holding the manifest: the archive's root, or its
        single top folder (as `zip -r app.zip app/` and release archives make them)."""
        if MANIFEST_NAME in self.files:
            return self.files
        tops = {name.split("/", 1)[0] for name in self.files}
        if len(tops) == 1:
            top = tops.pop() + "/"
            if top + MANIFEST_NAME in self.files:
                return {name.removeprefix(top): data for name, data in self.files.items()}
        raise self.refuse(f"no {MANIFEST_NAME} at its root or in its single top folder")


def _read_folder(folder: Path, collector: _Collector) -> None:
    for root, dirs, names in os.walk(folder, followlinks=False):
        # Hidden entries (.git, .DS_Store) are never read: a manifest cannot name them (H30),
        # and a checkout's .git alone would pass the file limit.
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        names = [name for name in names if not name.startswith(".")]
        for entry in [*dirs, *names]:
            full = Path(root) / entry
            relative = full.relative_to(folder).as_posix()
            try:  # a file may be unreadable, or gone since the walk listed it
                mode = full.lstat().st_mode
                if stat.S_ISLNK(mode):
                    raise collector.refuse(f"{relative!r} is a symbolic link")
                if entry in names:
                    if not stat.S_ISREG(mode):
                        raise collector.refuse(f"{relative!r} is not a regular file")
                    collector.announce(full.stat().st_size)
                    collector.add(collector.name(relative), full.read_bytes())
            except OSError as exc:
                raise collector.refuse(
                    f"{relative!r} cannot be read: {exc.strerror or exc}"
                ) from None


def _read_zip(data: io.BytesIO, collector: _Collector) -> None:
    try:
        archive = zipfile.ZipFile(data)
    except (zipfile.BadZipFile, OSError) as exc:
        raise collector.refuse(f"not a readable zip archive: {exc}") from None
    with archive:
        for info in archive.infolist():
            if stat.S_ISLNK(info.external_attr >> 16):
                raise collector.refuse(f"{info.filename!r} is a symbolic link")
            name = collector.name(info.filename)
            if info.is_dir():
                continue
            collector.announce(info.file_size)
            try:
                with archive.open(info) as stream:
                    content = collector.read_bounded(stream, info.file_size)
            except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
                raise collector.refuse(f"{info.filename!r} cannot be read: {exc}") from None
            collector.add(name, content)


def _read_tar(data: io.BytesIO, collector: _Collector) -> None:
    try:
        with tarfile.open(fileobj=data, mode="r:*") as archive:
            for member in archive:
                if member.issym() or member.islnk():
                    raise collector.refuse(f"{member.name!r} is a link")
                name = collector.name(member.name)
                if member.isdir():
                    continue
                if not member.isfile():
                    raise collector.refuse(f"{member.name!r} is not a regular file")
                collector.announce(member.size)
                stream = archive.extractfile(member)
                if stream is None:  # isfile() members always have one; mypy cannot know
                    raise collector.refuse(f"{member.name!r} cannot be read")
                collector.add(name, collector.read_bounded(stream, member.size))
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise collector.refuse(f"not a readable zip or tar archive: {exc}") from None


def _read_archive(data: bytes, collector: _Collector) -> str:
    if zipfile.is_zipfile(io.BytesIO(data)):
        _read_zip(io.BytesIO(data), collector)
        return "zip"
    _read_tar(io.BytesIO(data), collector)
    return "tar"


def _download(url: str, integrity: str | None, limits: InstallLimits) -> bytes:
    where = f"downloading {url}"
    if integrity is None:
        raise UsageError(
            f"[lineup] {where}: an install from a URL needs integrity='sha256-...', the digest "
            "of the file to download (`lineup app hash FILE` prints it) (H31)"
        )
    request = urllib.request.Request(url, headers={"User-Agent": "lineup-jupyter"})
    try:
        with urllib.request.urlopen(request, timeout=limits.timeout_seconds) as response:
            declared = response.headers.get("Content-Length")
            if (
                declared is not None
                and declared.isdigit()
                and int(declared) > limits.max_download_bytes
            ):
                raise UsageError(
                    f"[lineup] {where}: the server announces {declared} bytes; the limit is "
                    f"{limits.max_download_bytes} (H31)"
                )
            data: bytes = response.read(limits.max_download_bytes + 1)
    except UsageError:
        raise
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise UsageError(f"[lineup] {where}: the download failed: {reason}") from None
    if len(data) > limits.max_download_bytes:
        raise UsageError(
            f"[lineup] {where}: more than {limits.max_download_bytes} bytes; refused (H31)"
        )
    actual = sri(data)
    if actual != integrity:
        raise UsageError(
            f"[lineup] {where}: the file hashes to {actual}, not {integrity}; it was changed "
            "or the digest is wrong, and nothing was installed (H31)"
        )
    return data


def read_source(
    source: str | os.PathLike[str], integrity: str | None, limits: InstallLimits
) -> Source:
    """The files of an app: a folder, an archive (zip, tar, tar.gz, ...) or an http(s) URL."""
    text = os.fspath(source)
    if text.startswith(("http://", "https://")):
        data = _download(text, integrity, limits)
        collector = _Collector(f"the archive at {text}", limits)
        _read_archive(data, collector)
        return Source("url", text, collector.rooted())
    if "://" in text:
        raise UsageError(
            f"[lineup] {text!r}: only http(s) URLs, folders and archives install (H31)"
        )
    path = Path(text).expanduser()
    collector = _Collector(str(path), limits)
    if path.is_dir():
        _read_folder(path, collector)
        kind = "folder"
    elif path.is_file():
        if path.stat().st_size > limits.max_download_bytes:
            raise collector.refuse(f"the archive is larger than {limits.max_download_bytes} bytes")
        data = path.read_bytes()
        if integrity is not None and sri(data) != integrity:
            raise UsageError(f"[lineup] {path}: the archive does not hash to {integrity} (H31)")
        kind = _read_archive(data, collector)
    else:
        raise UsageError(f"[lineup] {path}: no such folder or archive")
    return Source(kind, str(path.resolve()), collector.rooted())
