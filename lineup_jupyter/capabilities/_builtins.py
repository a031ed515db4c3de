"""The capabilities every host declares: artifact.save in the kernel, and three that only the
browser can do, inside the user's Allow click (H21): app.open_url, clipboard.write and
device.pick_file. For those the kernel never trusts the browser's report blindly: it checks
its shape, and for a picked file that the content matches the size and sha256 reported.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..protocol._errors import CapabilityError
from ._capabilities import Capability

__all__ = ["PICK_FILE_CONTENT_BYTES", "builtin_capabilities", "save_artifact"]

PICK_FILE_CONTENT_BYTES = 256 * 1024  # a picked file's content comes back up to this size
MAX_CLIPBOARD_CHARACTERS = 100_000
MAX_URL_LENGTH = 2048
# http(s) only; no userinfo before the host ("https://bank.example@evil.example"), no spaces.
URL_PATTERN = r"^https?://[^\s/?#@]+([/?#][^\s]*)?$"
_PATH = "$.payload.arguments.path"
_SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")

ARTIFACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["path", "content"],
    "additionalProperties": False,
    "properties": {
        "path": {"type": "string", "minLength": 1, "maxLength": 1024},
        "content": {"type": "string"},
        "encoding": {"enum": ["utf-8", "base64"]},
    },
}


def builtin_capabilities(artifacts_dir: Callable[[], Path]) -> list[Capability]:
    """The four built-ins; ``artifacts_dir`` is read at each save (the user may change it)."""
    return [
        Capability(
            "artifact.save",
            "user_confirmation",
            input_schema=ARTIFACT_SCHEMA,
            handler=lambda arguments: save_artifact(artifacts_dir(), arguments),
            description="Save a file into the notebook's artifacts folder.",
        ),
        Capability(
            "app.open_url",
            "user_confirmation",
            input_schema={
                "type": "object",
                "required": ["url"],
                "additionalProperties": False,
                "properties": {
                    "url": {"type": "string", "maxLength": MAX_URL_LENGTH, "pattern": URL_PATTERN}
                },
            },
            browser_check=_opened,
            browser_options={"action": "open_url"},
            description="Open a web page in a new browser tab.",
        ),
        Capability(
            "clipboard.write",
            "user_confirmation",
            input_schema={
                "type": "object",
                "required": ["text"],
                "additionalProperties": False,
                "properties": {"text": {"type": "string", "maxLength": MAX_CLIPBOARD_CHARACTERS}},
            },
            browser_check=_written,
            browser_options={"action": "clipboard_write"},
            description="Put text on the clipboard.",
        ),
        Capability(
            "device.pick_file",
            "system_permission",
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {"accept": {"type": "string", "maxLength": 256}},
            },
            browser_check=_picked,
            browser_options={"action": "pick_file", "max_content_bytes": PICK_FILE_CONTENT_BYTES},
            description="Let the user choose one file to hand to the agent.",
        ),
    ]


# ---- artifact.save -----------------------------------------------------------------------


def save_artifact(folder: Path, arguments: dict[str, Any]) -> dict[str, Any]:
    """Write a new file under ``folder``; never outside it, never over another file (H25).

    Every folder on the way is opened relative to the one before with O_NOFOLLOW, and the
    file is created with O_EXCL, so neither a ``..`` nor a symlink planted inside the
    folder, even one that appears between a check and the write, leads anywhere else.
    """
    parts = _relative_parts(arguments["path"])
    if arguments.get("encoding") == "base64":
        try:
            data = base64.b64decode(arguments["content"], validate=True)
        except (binascii.Error, ValueError):
            raise CapabilityError("content is not valid base64") from None
    else:
        data = arguments["content"].encode("utf-8")
    if not {os.open, os.mkdir} <= os.supports_dir_fd:
        raise CapabilityError("artifact.save needs a system that opens files relative to a folder")
    folder.mkdir(parents=True, exist_ok=True)
    directory = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, dir_fd=directory)
            try:
                inner = os.open(
                    part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory
                )
            except OSError:
                raise CapabilityError(
                    f"{part!r} in the path is not a folder inside the artifacts folder "
                    "(a file, or a symlink, which is never followed)",
                    path=_PATH,
                ) from None
            os.close(directory)
            directory = inner
        name, renamed = _create(directory, parts[-1], data)
    finally:
        os.close(directory)
    saved = "/".join([*parts[:-1], name])
    return {
        "path": saved,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "renamed": renamed,
    }


def _relative_parts(path: str) -> list[str]:
    if "\x00" in path or "\\" in path:
        raise CapabilityError("the path may not contain NUL or backslash characters", path=_PATH)
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        raise CapabilityError(
            f"{path!r} is absolute; give a path inside the artifacts folder", path=_PATH
        )
    parts = path.split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise CapabilityError(
                f"{path!r} has an empty, '.' or '..' part; give plain names separated by '/'",
                path=_PATH,
            )
        if len(part.encode("utf-8")) > 255:
            raise CapabilityError("a name in the path is longer than 255 bytes", path=_PATH)
    return parts


def _create(directory: int, name: str, data: bytes) -> tuple[str, bool]:
    """Create ``name`` (or ``stem-1.ext``, ``stem-2.ext``... if taken); returns the name used."""
    stem, dot, extension = name.rpartition(".")
    if not stem:  # no extension, or a dotfile like ".env"
        stem, dot, extension = name, "", ""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_BINARY", 0)
    for n in range(1000):
        candidate = name if n == 0 else f"{stem}-{n}{dot}{extension}"
        try:
            handle = os.open(candidate, flags, 0o644, dir_fd=directory)
        except FileExistsError:
            continue
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        return candidate, n > 0
    raise CapabilityError(f"{name!r} and its next 999 numbered names are all taken")


# ---- what the browser reports -----------------------------------------------------------


def _opened(arguments: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    if report.get("opened") is not True:
        raise CapabilityError("the browser did not report the page as opened")
    return {"url": arguments["url"]}


def _written(arguments: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    if report.get("written") is not True:
        raise CapabilityError("the browser did not report the text as written")
    return {"characters": len(arguments["text"])}


def _picked(_arguments: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    name, size = report.get("name"), report.get("size")
    media_type, sha256 = report.get("media_type"), report.get("sha256")
    content = report.get("content_base64")
    if not (isinstance(name, str) and 0 < len(name) <= 255):
        raise CapabilityError("the browser reported no usable file name")
    if not (isinstance(size, int) and not isinstance(size, bool) and size >= 0):
        raise CapabilityError("the browser reported no usable file size")
    if not (isinstance(media_type, str) and len(media_type) <= 255):
        raise CapabilityError("the browser reported no usable media type")
    if not (isinstance(sha256, str) and _SHA256_HEX.match(sha256)):
        raise CapabilityError("the browser reported no usable sha256")
    result: dict[str, Any] = {
        "name": name,
        "size": size,
        "media_type": media_type or "application/octet-stream",
        "sha256": sha256,
        "content_included": size <= PICK_FILE_CONTENT_BYTES,
    }
    if size <= PICK_FILE_CONTENT_BYTES:
        if not isinstance(content, str):
            raise CapabilityError("the file's content is missing")
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise CapabilityError("the file's content is not valid base64") from None
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
            raise CapabilityError("the file's content does not match its size and sha256")
        result["content_base64"] = content
    elif content is not None:
        raise CapabilityError(
            f"content is sent only for files up to {PICK_FILE_CONTENT_BYTES} bytes"
        )
    return result
