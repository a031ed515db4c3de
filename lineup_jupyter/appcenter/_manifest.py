"""An app's manifest (``lineup-app.json``) and the surface bundles it names (H30).

A manifest is data the host reads, never code it runs. From it and the files of an install
source come one framing per surface (``bundle_bytes``, H4): what the cache stores and what
its integrity is computed over. Assets are inlined as ``data:`` URLs only when a surface is
opened, so the digest covers the sources as written.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..core._schemas import schema_error
from ..protocol import rules
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._integrity import bundle_bytes, bundle_integrity
from ..protocol._json import loads
from ..protocol._models import AppId, EventName, Id, SemVer

__all__ = [
    "ASSET_SCHEME",
    "MANIFEST_NAME",
    "AppManifest",
    "SurfaceManifest",
    "build_bundles",
    "inline_assets",
    "parse_manifest",
    "semver_key",
]

MANIFEST_NAME = "lineup-app.json"
ASSET_SCHEME = "lineup-asset:"  # html/css/js name an asset as lineup-asset:PATH
_MAX_SURFACES = 32
_MAX_ASSETS = 64

# A relative path of plain names: no leading '/', no '.' or '..' part (no part starts with
# a dot at all), no backslash; the same form inside an archive as on disk.
RelPath = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$", max_length=255
    ),
]
_ASSET_REFERENCE = re.compile(re.escape(ASSET_SCHEME) + r"([A-Za-z0-9._/-]+)")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class SurfaceManifest(_Model):
    """One surface of an app: its files, the events it may send (C6) and their schemas."""

    id: Id
    html: RelPath
    css: RelPath | None = None
    js: RelPath | None = None
    events: list[EventName] = Field(max_length=64)
    event_schemas: dict[EventName, dict[str, Any]] = Field(default_factory=dict)
    assets: list[RelPath] = Field(default_factory=list, max_length=_MAX_ASSETS)
    integrity: Annotated[str, Field(pattern=rules.INTEGRITY_PATTERN)] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> SurfaceManifest:
        if len(set(self.events)) != len(self.events):
            raise ValueError("events are listed more than once")
        if len(set(self.assets)) != len(self.assets):
            raise ValueError("assets are listed more than once")
        for event, schema in self.event_schemas.items():
            if event not in self.events:
                raise ValueError(f"event_schemas names {event!r}, which events does not declare")
            problem = schema_error(schema)
            if problem is not None:
                raise ValueError(f"the schema of event {event!r} is not a JSON Schema: {problem}")
        return self


class AppManifest(_Model):
    """``lineup-app.json``: id (U2), name, version (SemVer, U2), surfaces (1 to 32)."""

    id: AppId
    name: Annotated[str, Field(min_length=1, max_length=256)]
    version: SemVer
    description: Annotated[str, Field(max_length=2048)] | None = None
    surfaces: list[SurfaceManifest] = Field(min_length=1, max_length=_MAX_SURFACES)

    @model_validator(mode="after")
    def _unique_surfaces(self) -> AppManifest:
        ids = [surface.id for surface in self.surfaces]
        if len(set(ids)) != len(ids):
            raise ValueError("two surfaces have the same id")
        return self

    def surface(self, surface_id: str) -> SurfaceManifest | None:
        return next((s for s in self.surfaces if s.id == surface_id), None)


def load_manifest(data: bytes, where: str, max_bytes: int) -> AppManifest:
    """The manifest from its file's bytes: strict JSON (H2), then its fields (H30)."""
    try:
        value = loads(data, max_bytes=max_bytes)
    except ProtocolError as exc:
        raise UsageError(f"[lineup] {where}: {MANIFEST_NAME} is not JSON: {exc.message}") from None
    return parse_manifest(value, where)


def parse_manifest(value: Any, where: str) -> AppManifest:
    """The manifest, or a UsageError naming every field at fault (H30)."""
    try:
        return AppManifest.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'manifest'}: {error['msg']}"
            for error in exc.errors()[:8]
        )
        raise UsageError(
            f"[lineup] {where}: {MANIFEST_NAME} is not valid (H30): {problems}"
        ) from None


def _text(files: Mapping[str, bytes], path: str | None, where: str) -> str:
    if path is None:
        return ""
    if path not in files:
        raise UsageError(f"[lineup] {where}: the manifest names {path!r}, which is not there")
    try:
        return files[path].decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"[lineup] {where}: {path!r} is not UTF-8 text") from None


def build_bundles(
    manifest: AppManifest, files: Mapping[str, bytes], where: str, max_bundle_bytes: int
) -> dict[str, bytes]:
    """Each surface's framing (H4), checked: files present, assets declared and local, the
    opened bundle (assets inlined) within the bundle limit (U3), a declared integrity met."""
    framings: dict[str, bytes] = {}
    for surface in manifest.surfaces:
        html, css, js = (
            _text(files, path, where) for path in (surface.html, surface.css, surface.js)
        )
        assets: dict[str, bytes] = {}
        for path in surface.assets:
            if path not in files:
                raise UsageError(
                    f"[lineup] {where}: surface {surface.id!r} lists the asset {path!r}, "
                    "which is not there"
                )
            assets[path] = files[path]
        for text in (html, css, js):
            for match in _ASSET_REFERENCE.finditer(text):
                if match.group(1) not in assets:
                    raise UsageError(
                        f"[lineup] {where}: surface {surface.id!r} refers to "
                        f"{match.group(0)!r}, which is not one of its assets (U3: resources "
                        "are local and declared)"
                    )
        opened = sum(len(part.encode()) for part in inline_assets(html, css, js, assets))
        if opened > max_bundle_bytes:
            raise UsageError(
                f"[lineup] {where}: surface {surface.id!r} is {opened} bytes once its assets "
                f"are inlined; the bundle limit is {max_bundle_bytes} (U3)"
            )
        if surface.integrity is not None:
            actual = bundle_integrity(html, css, js, assets)
            if actual != surface.integrity:
                raise UsageError(
                    f"[lineup] {where}: surface {surface.id!r} hashes to {actual}, not the "
                    f"{surface.integrity} its manifest declares (S7, H4)"
                )
        framings[surface.id] = bundle_bytes(html, css, js, assets)
    return framings


def _data_url(path: str, content: bytes) -> str:
    mime = mimetypes.guess_type(path)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(content).decode('ascii')}"


def inline_assets(
    html: str, css: str, js: str, assets: Mapping[str, bytes]
) -> tuple[str, str, str]:
    """html, css and js with every ``lineup-asset:PATH`` replaced by the asset as a data: URL
    (the surface CSP allows images and fonts from data: only, S3)."""
    if not assets:
        return html, css, js
    urls = {path: _data_url(path, content) for path, content in assets.items()}

    def replace(match: re.Match[str]) -> str:
        return urls.get(match.group(1), match.group(0))

    return tuple(_ASSET_REFERENCE.sub(replace, text) for text in (html, css, js))  # type: ignore[return-value]


def semver_key(version: str) -> tuple[Any, ...]:
    """A sort key with SemVer 2.0.0 precedence (build metadata ignored; a pre-release sorts
    before its release; numeric identifiers before alphanumeric ones)."""
    core, _, pre = version.split("+", 1)[0].partition("-")
    major, minor, patch = (int(part) for part in core.split("."))
    if not pre:
        return (major, minor, patch, 1, ())
    identifiers = tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in pre.split(".")
    )
    return (major, minor, patch, 0, identifiers)
