"""Reading an app's files from where the user points: a folder, a zip or tar archive, or an
http(s) URL the kernel downloads (H30, H31). The result is a map of relative path -> bytes;
nothing is written anywhere and nothing is followed outside the source.

Every source is bounded (entries of every kind, size of each file and of all of them, the
archive's size packed and unpacked, the download) and every limit is checked before the
memory it guards is allocated: a compressed tar is inflated at most to ``max_unpacked_bytes``
before tarfile reads a header (a header may declare 64 GiB in 109 bytes), a zip's entry count
is read from its end record before zipfile builds an object per entry. Every name is a
relative path of plain names, so an archive cannot write or read outside its own tree: no
absolute path, no ``..``, no backslash, no links or devices. A folder is read through file
descriptors, each entry opened relative to its folder with ``O_NOFOLLOW`` and checked with
``fstat`` on what was opened, so a link swapped in after the listing is never followed.
"""

from __future__ import annotations

import base64
import bz2
import errno
import hashlib
import io
import lzma
import os
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from ..protocol._errors import UsageError
from ._download import download
from ._manifest import MANIFEST_NAME

__all__ = ["InstallLimits", "Source", "read_source", "sri"]


@dataclass(frozen=True)
class InstallLimits:
    """How much an install source may hold (H30), and how long a download may take (H31)."""

    max_files: int = 256  # entries of every kind: files, folders, links (refused anyway)
    max_file_bytes: int = 2 * 1024 * 1024
    max_total_bytes: int = 8 * 1024 * 1024
    max_download_bytes: int = 8 * 1024 * 1024  # an archive file, downloaded or local
    max_unpacked_bytes: int = 10 * 1024 * 1024  # a compressed tar, inflated
    timeout_seconds: float = 30.0  # one deadline for a whole download, redirects included
    max_redirects: int = 5


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
        self.entries = 0

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

    def count(self) -> None:
        """Count one entry of any kind (a folder too) against the entry limit."""
        self.entries += 1
        if self.entries > self.limits.max_files:
            raise self.refuse(
                f"it holds more than {self.limits.max_files} entries (files and folders)"
            )

    def announce(self, size: int) -> None:
        """Refuse before reading what is declared too large (a zip bomb says so up front)."""
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


_OPEN_ENTRY = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # a link is refused (ELOOP), never followed
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO opens at once, and is then refused by fstat
    | getattr(os, "O_CLOEXEC", 0)
)

_OPENAT = os.open in os.supports_dir_fd  # POSIX


def _read_folder(folder: Path, collector: _Collector) -> None:
    if not _OPENAT:
        raise collector.refuse("installing from a folder needs POSIX (openat); use an archive")
    try:
        root = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError as exc:
        raise collector.refuse(f"the folder cannot be read: {exc.strerror or exc}") from None
    try:
        _read_directory(root, "", collector)
    finally:
        os.close(root)


def _read_directory(directory: int, prefix: str, collector: _Collector) -> None:
    """Read the folder open as ``directory``: the listing gives names only; what each entry
    is, and its bytes, come from the descriptor opened without following links."""
    try:
        with os.scandir(directory) as listing:
            names = sorted(entry.name for entry in listing)
    except OSError as exc:
        raise collector.refuse(
            f"{prefix or '.'!r} cannot be listed: {exc.strerror or exc}"
        ) from None
    for name in names:
        # Hidden entries (.git, .DS_Store) are never read: a manifest cannot name them (H30),
        # and a checkout's .git alone would pass the entry limit.
        if name.startswith("."):
            continue
        relative = prefix + name
        collector.count()
        try:
            entry = os.open(name, _OPEN_ENTRY, dir_fd=directory)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise collector.refuse(f"{relative!r} is a symbolic link") from None
            raise collector.refuse(f"{relative!r} cannot be read: {exc.strerror or exc}") from None
        try:
            mode = os.fstat(entry).st_mode
            if stat.S_ISDIR(mode):
                _read_directory(entry, relative + "/", collector)
            elif stat.S_ISREG(mode):
                size = os.fstat(entry).st_size
                collector.announce(size)
                collector.add(collector.name(relative), _read_descriptor(entry, size, collector))
            else:
                raise collector.refuse(f"{relative!r} is not a regular file")
        except OSError as exc:
            raise collector.refuse(f"{relative!r} cannot be read: {exc.strerror or exc}") from None
        finally:
            os.close(entry)


def _read_descriptor(descriptor: int, size: int, collector: _Collector) -> bytes:
    """Exactly ``size`` bytes (what fstat said) from an open file; one more means it grew."""
    parts: list[bytes] = []
    got = 0
    while got <= size:
        part = os.read(descriptor, size + 1 - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    if got != size:
        raise collector.refuse("a file changed size while it was read")
    return b"".join(parts)


def _zip_entries(data: bytes) -> int:
    """The entry count a zip's end record declares (the larger of the classic and the
    ZIP64 one), read before zipfile builds an object for each."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - 65_557))
    if end < 0:
        return 0
    count = int.from_bytes(data[end + 10 : end + 12], "little")
    locator = end - 20
    if locator >= 0 and data[locator : locator + 4] == b"PK\x06\x07":
        at = int.from_bytes(data[locator + 8 : locator + 16], "little")
        if data[at : at + 4] == b"PK\x06\x06":
            count = max(count, int.from_bytes(data[at + 32 : at + 40], "little"))
    return count


def _read_zip(data: io.BytesIO, collector: _Collector) -> None:
    declared = _zip_entries(data.getvalue())
    if declared > collector.limits.max_files:
        raise collector.refuse(
            f"it holds more than {collector.limits.max_files} entries (files and folders): "
            f"its directory declares {declared}"
        )
    try:
        archive = zipfile.ZipFile(data)
    except (zipfile.BadZipFile, OSError) as exc:
        raise collector.refuse(f"not a readable zip archive: {exc}") from None
    with archive:
        for info in archive.infolist():
            collector.count()
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


def _inflated(data: bytes, collector: _Collector) -> bytes:
    """A gzip, bzip2 or xz archive inflated, never past ``max_unpacked_bytes``; anything else
    as it is (a plain tar is already within ``max_download_bytes``)."""
    limit = collector.limits.max_unpacked_bytes
    too_large = collector.refuse(
        f"it unpacks to more than {limit} bytes (max_unpacked_bytes); refused before reading "
        "its entries"
    )
    out = bytearray()
    try:
        if data.startswith(b"\x1f\x8b"):
            pending = data
            while pending.startswith(b"\x1f\x8b"):  # a gzip file may hold several members
                inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
                while pending:
                    out += inflater.decompress(pending, limit + 1 - len(out))
                    if len(out) > limit:
                        raise too_large
                    if inflater.eof:
                        break
                    if pending == inflater.unconsumed_tail:
                        break  # truncated: tarfile says what is missing
                    pending = inflater.unconsumed_tail
                pending = inflater.unused_data if inflater.eof else b""
            return bytes(out)
        decompressor: bz2.BZ2Decompressor | lzma.LZMADecompressor
        if data.startswith(b"BZh"):
            decompressor = bz2.BZ2Decompressor()
        elif data.startswith(b"\xfd7zXZ\x00"):
            decompressor = lzma.LZMADecompressor()
        else:
            return data
        out += decompressor.decompress(data, limit + 1)
        while len(out) <= limit and not decompressor.eof and not decompressor.needs_input:
            out += decompressor.decompress(b"", limit + 1 - len(out))
    except (zlib.error, OSError, EOFError, lzma.LZMAError) as exc:
        raise collector.refuse(f"not a readable compressed archive: {exc}") from None
    if len(out) > limit:
        raise too_large
    return bytes(out)


def _read_tar(data: bytes, collector: _Collector) -> None:
    # tarfile reads every header's declared size at once (a GNU long name, a pax header):
    # from this bounded buffer it can get no more than the buffer holds.
    unpacked = io.BytesIO(_inflated(data, collector))
    try:
        with tarfile.open(fileobj=unpacked, mode="r:") as archive:
            for member in archive:
                collector.count()
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
    _read_tar(data, collector)
    return "tar"


def _download(url: str, integrity: str | None, limits: InstallLimits) -> bytes:
    where = f"downloading {url}"
    if integrity is None:
        raise UsageError(
            f"[lineup] {where}: an install from a URL needs integrity='sha256-...', the digest "
            "of the file to download (`lineup app hash FILE` prints it) (H31)"
        )
    data = download(
        url,
        max_bytes=limits.max_download_bytes,
        timeout_seconds=limits.timeout_seconds,
        max_redirects=limits.max_redirects,
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
        try:
            with path.open("rb") as file:  # bounded read: the file may grow after a stat
                data = file.read(limits.max_download_bytes + 1)
        except OSError as exc:
            raise collector.refuse(f"the archive cannot be read: {exc.strerror or exc}") from None
        if len(data) > limits.max_download_bytes:
            raise collector.refuse(f"the archive is larger than {limits.max_download_bytes} bytes")
        if integrity is not None and sri(data) != integrity:
            raise UsageError(f"[lineup] {path}: the archive does not hash to {integrity} (H31)")
        kind = _read_archive(data, collector)
    else:
        raise UsageError(f"[lineup] {path}: no such folder or archive")
    return Source(kind, str(path.resolve()), collector.rooted())
