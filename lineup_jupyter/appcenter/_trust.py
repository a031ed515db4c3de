"""Which inline bundles may open on this host: dev mode or strict mode (S7, host decision H37).

An agent's ``ui.open`` can carry code (html, css, js). In **dev** mode any bundle that passes
the protocol's checks opens, and a declared ``app.integrity`` must still match. In **strict**
mode (S7's production posture) a bundle opens only if its H4 digest is on the allowlist, or
``app.signature`` is a valid Ed25519 signature by a trusted key over that digest. Apps the user
installed in the app center are trusted in both modes: installing is the user's own act, and
their cached bytes are verified on every open (H32).

What a signature covers: ``b"lineup-bundle-signature-v1\\n" + digest`` where the digest is the
``sha256-...`` string of H4, computed by the host from the bytes it received. The digest names
the code; the app id and version are labels and are not signed (as in H4).

Keys: a public key is written ``ed25519:<base64 of the 32 raw bytes>`` (one line, easy to paste
into a notebook; PEM is accepted too). Its id is the first 16 characters of the unpadded
base64url SHA-256 of the raw bytes: short enough to read, long enough never to collide by
chance. A signature names its key id, so an unknown key is reported as such.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ..protocol import BundleSignature, rules
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._integrity import bundle_integrity

__all__ = ["TRUST_FILE", "BundleTrust", "SigningKey", "key_id"]

TRUST_FILE = "trust.json"  # in the data dir: a deployment's policy, read when a Host starts
PUBLIC_KEY_PREFIX = "ed25519:"
SIGNATURE_CONTEXT = b"lineup-bundle-signature-v1\n"

Mode = Literal["dev", "strict"]


def key_id(public_key: Ed25519PublicKey) -> str:
    """The short id a signature names its key by."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.urlsafe_b64encode(hashlib.sha256(raw).digest()).decode("ascii")[:16]


def _public_key(text: str | bytes) -> Ed25519PublicKey:
    """``ed25519:<base64>`` or a PEM public key; UsageError for anything else."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    text = text.strip()
    try:
        if text.startswith(PUBLIC_KEY_PREFIX):
            raw = base64.b64decode(text.removeprefix(PUBLIC_KEY_PREFIX), validate=True)
            return Ed25519PublicKey.from_public_bytes(raw)
        loaded = serialization.load_pem_public_key(text.encode("ascii"))
    except ValueError:
        loaded = None
    if not isinstance(loaded, Ed25519PublicKey):
        raise UsageError(
            f"[lineup] {text[:60]!r} is not an Ed25519 public key: write it "
            f"'{PUBLIC_KEY_PREFIX}<base64 of 32 bytes>' (what `lineup keygen` prints) or as PEM"
        )
    return loaded


def _signed_bytes(digest: str) -> bytes:
    return SIGNATURE_CONTEXT + digest.encode("ascii")


class SigningKey:
    """An Ed25519 private key that signs bundles for hosts in strict mode.

    >>> key = SigningKey.generate()
    >>> trust = BundleTrust.strict(keys=[key.public_key])
    >>> agent.open("w1", html=html, signature=key.sign(html))
    """

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        self._private = private_key
        public = private_key.public_key()
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.public_key = PUBLIC_KEY_PREFIX + base64.b64encode(raw).decode("ascii")
        self.key_id = key_id(public)

    @classmethod
    def generate(cls) -> SigningKey:
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_pem(cls, pem: str | bytes) -> SigningKey:
        """A PKCS#8 PEM private key, as ``lineup keygen`` or ``openssl genpkey -algorithm
        ed25519`` writes it (unencrypted)."""
        data = pem.encode("ascii") if isinstance(pem, str) else pem
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"[lineup] not an unencrypted PEM private key: {exc}") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise UsageError("[lineup] the private key is not an Ed25519 key")
        return cls(key)

    def to_pem(self) -> bytes:
        return self._private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    def sign_digest(self, digest: str) -> dict[str, str]:
        """``app.signature`` for a bundle whose H4 digest is ``digest``."""
        value = self._private.sign(_signed_bytes(digest))
        return {"key_id": self.key_id, "value": base64.b64encode(value).decode("ascii")}

    def sign(self, html: str, css: str = "", js: str = "") -> dict[str, str]:
        """``app.signature`` for this inline bundle."""
        return self.sign_digest(bundle_integrity(html, css, js))

    def __repr__(self) -> str:
        return f"SigningKey(key_id={self.key_id!r})"  # never the private bytes


@dataclass(frozen=True)
class BundleTrust:
    """The host's bundle policy (H37). Make one with :meth:`dev`, :meth:`strict` or
    :meth:`from_file`; pass it as ``Host(trust=...)``."""

    mode: Mode = "dev"
    allowed: frozenset[str] = frozenset()  # H4 digests that may open
    keys: Mapping[str, Ed25519PublicKey] = field(default_factory=dict)  # key id -> key

    @classmethod
    def dev(cls, *, keys: Iterable[str | bytes] = ()) -> BundleTrust:
        """Any bundle that passes the checks opens; a signature by one of ``keys`` must verify."""
        return cls._make("dev", (), keys)

    @classmethod
    def strict(cls, *, allow: Iterable[str] = (), keys: Iterable[str | bytes] = ()) -> BundleTrust:
        """Only bundles whose digest is in ``allow`` or that one of ``keys`` signed open."""
        return cls._make("strict", allow, keys)

    @classmethod
    def _make(cls, mode: Mode, allow: Iterable[str], keys: Iterable[str | bytes]) -> BundleTrust:
        if isinstance(allow, str) or isinstance(keys, (str, bytes)):
            raise UsageError("[lineup] allow and keys are lists of strings, not one string")
        allowed = frozenset(allow)
        for digest in allowed:
            if not isinstance(digest, str) or not re.fullmatch(rules.INTEGRITY_PATTERN, digest):
                raise UsageError(
                    f"[lineup] {digest!r} on the allowlist is not an H4 digest "
                    "(sha256-<base64>, what `lineup hash` prints)"
                )
        public = [_public_key(key) for key in keys]
        return cls(mode, allowed, {key_id(key): key for key in public})

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> BundleTrust:
        """A policy file: ``{"mode": "strict", "allow": [digests], "keys": [public keys]}``.

        A file that cannot be read or understood raises UsageError: a broken policy must stop
        the host, never quietly leave it in dev mode."""
        try:
            value = json.loads(Path(path).read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"[lineup] cannot read the bundle policy {path}: {exc}") from None
        if not isinstance(value, dict) or not set(value) <= {"mode", "allow", "keys"}:
            raise UsageError(
                f"[lineup] {path}: a bundle policy is an object with mode, allow and keys only"
            )
        mode = value.get("mode")
        if mode not in ("dev", "strict"):
            raise UsageError(f"[lineup] {path}: mode is 'dev' or 'strict', not {mode!r}")
        allow, keys = value.get("allow", []), value.get("keys", [])
        if not isinstance(allow, list) or not isinstance(keys, list):
            raise UsageError(f"[lineup] {path}: allow and keys are lists of strings")
        return cls._make(mode, allow, keys)

    @classmethod
    def load(cls, directory: Path) -> BundleTrust:
        """The data dir's ``trust.json`` if there is one, else dev mode."""
        path = directory / TRUST_FILE
        return cls.from_file(path) if path.exists() else cls.dev()

    def check(self, digest: str, signature: BundleSignature | None) -> None:
        """Raise ProtocolError ``untrusted_bundle`` (H37) unless a bundle with this H4 digest
        and this ``app.signature`` may open."""
        if signature is not None:
            public = self.keys.get(signature.key_id)
            if public is not None:
                try:
                    public.verify(base64.b64decode(signature.value), _signed_bytes(digest))
                except InvalidSignature:
                    # A forged or stale signature is refused in both modes: it is evidence
                    # that the bundle is not what its signer signed.
                    raise _untrusted(
                        "$.payload.app.signature.value",
                        f"the signature by key {signature.key_id} does not verify for this "
                        f"bundle (digest {digest}): the bundle changed after it was signed, or "
                        "the signature was made for other bytes",
                    ) from None
                return
        if self.mode == "dev" or digest in self.allowed:
            return
        if signature is not None:
            raise _untrusted(
                "$.payload.app.signature.key_id",
                f"key {signature.key_id} is not one of this host's trusted keys, and the "
                f"bundle's digest {digest} is not on its allowlist",
            )
        raise _untrusted(
            "$.payload.app",
            f"this host is in strict mode and the bundle (digest {digest}) is neither on its "
            "allowlist nor signed (app.signature) by a trusted key",
        )

    def summary(self) -> dict[str, Any]:
        """What the notebook shows of the policy (never the keys' bytes)."""
        return {"mode": self.mode, "allowed": len(self.allowed), "keys": sorted(self.keys)}


def _untrusted(path: str, why: str) -> ProtocolError:
    return ProtocolError("untrusted_bundle", "H37", path, f"{why}. " + rules.RULES["H37"])
