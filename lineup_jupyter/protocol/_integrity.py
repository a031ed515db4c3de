"""The bundle digest behind app.integrity (host decision H4), so two hosts compute the same value.

The bytes hashed are, in this order, with every length a decimal count of UTF-8 bytes:

    b"lineup-bundle-v1\\n"
    for each part in html, css, js:       NAME b"\\n" LENGTH b"\\n" BYTES b"\\n"
    for each asset, sorted by path bytes:
        b"asset\\n" PATH_LENGTH b"\\n" PATH b"\\n" LENGTH b"\\n" BYTES b"\\n"

Lengths make the framing unambiguous (moving a character from html to css changes the digest).
The id, name and version are not hashed: the digest names the code, so the same bytes under
two versions share one cache entry. The result is ``"sha256-" + base64(sha256(bytes))``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping

__all__ = ["bundle_bytes", "bundle_integrity", "parse_bundle_bytes"]

_MAGIC = b"lineup-bundle-v1\n"


def _frame(name: bytes, content: bytes) -> bytes:
    return name + b"\n" + str(len(content)).encode() + b"\n" + content + b"\n"


def bundle_bytes(
    html: str, css: str = "", js: str = "", assets: Mapping[str, bytes] | None = None
) -> bytes:
    """The exact bytes the integrity digest is taken over."""
    parts = [_MAGIC]
    for name, text in (("html", html), ("css", css), ("js", js)):
        parts.append(_frame(name.encode(), text.encode("utf-8")))
    for path in sorted(assets or {}, key=lambda p: p.encode("utf-8")):
        encoded = path.encode("utf-8")
        parts.append(b"asset\n" + str(len(encoded)).encode() + b"\n" + encoded + b"\n")
        parts.append(str(len((assets or {})[path])).encode() + b"\n" + (assets or {})[path] + b"\n")
    return b"".join(parts)


def bundle_integrity(
    html: str, css: str = "", js: str = "", assets: Mapping[str, bytes] | None = None
) -> str:
    """``sha256-<base64>`` of :func:`bundle_bytes`."""
    digest = hashlib.sha256(bundle_bytes(html, css, js, assets)).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def parse_bundle_bytes(data: bytes) -> tuple[str, str, str, dict[str, bytes]]:
    """The inverse of :func:`bundle_bytes`: (html, css, js, assets). The app center's cache
    stores exactly the hashed bytes, so what is verified is what is opened.

    Raises ValueError for bytes that are not such a framing (a damaged cache file)."""
    if not data.startswith(_MAGIC):
        raise ValueError("not a lineup-bundle-v1 framing")
    view = memoryview(data)  # slices without copying 160 KiB at every step
    position = len(_MAGIC)

    def line() -> bytes:
        nonlocal position
        end = data.index(b"\n", position)
        value = data[position:end]
        position = end + 1
        return value

    def counted() -> memoryview:
        nonlocal position
        length = line()
        if not length.isdigit():
            raise ValueError("a length is not a decimal number")
        end = position + int(length)
        if data[end : end + 1] != b"\n":
            raise ValueError("a part does not end where its length says")
        value = view[position:end]
        position = end + 1
        return value

    texts: list[str] = []
    for name in (b"html", b"css", b"js"):
        if line() != name:
            raise ValueError(f"expected the {name.decode()} part")
        texts.append(str(counted(), "utf-8"))
    assets: dict[str, bytes] = {}
    while position < len(data):
        if line() != b"asset":
            raise ValueError("expected an asset")
        path = str(counted(), "utf-8")
        assets[path] = bytes(counted())
    return texts[0], texts[1], texts[2], assets
