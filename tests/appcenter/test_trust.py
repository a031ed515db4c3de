"""Strict mode and signed bundles (S7, host decision H37): what may open, and what is refused."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization

from lineup_jupyter import BundleTrust, Host, SigningKey, UsageError
from lineup_jupyter._cli import main
from lineup_jupyter.protocol import bundle_integrity, validate_envelope

from ..conftest import CONVERSATION, Recorder, envelope, open_payload
from ..host.test_host import assert_refused_once

HTML = "<main><button id='refresh'>refresh</button></main>"
DIGEST = bundle_integrity(HTML)


def ui_open(
    instance_id: str = "w", id_: str = "o1", html: str = HTML, **app: Any
) -> dict[str, Any]:
    payload = open_payload(instance_id)
    payload["app"].update(html=html, **app)
    return envelope("ui.open", payload, id_=id_)


def strict_host(**trust: Any) -> tuple[Host, Recorder]:
    host = Host(conversation_id=CONVERSATION, trust=BundleTrust.strict(**trust))
    return host, Recorder(host)


def test_s7_dev_mode_opens_any_checked_bundle(host: Host) -> None:
    assert host.trust.mode == "dev"
    assert host.receive(ui_open()) is None
    assert "w" in host.surfaces


def test_s7_strict_mode_refuses_an_unlisted_unsigned_bundle_and_changes_nothing() -> None:
    host, sent = strict_host()
    answer = assert_refused_once(host, sent, ui_open(), "untrusted_bundle", "H37")
    assert answer["payload"]["path"] == "$.payload.app"
    assert DIGEST in answer["payload"]["message"]  # the digest to allowlist, if the user wants
    assert "w" not in host.surfaces


def test_s7_strict_mode_never_replaces_an_open_surface_with_an_untrusted_one() -> None:
    """U1: a replace goes through the same check, and a refused one keeps the original."""
    host, sent = strict_host(allow=[DIGEST])
    assert host.receive(ui_open()) is None
    evil = ui_open(id_="o2", html=HTML + "<script>steal()</script>")
    assert_refused_once(host, sent, evil, "untrusted_bundle", "H37")
    assert host.surfaces["w"].app.html == HTML


def test_s7_strict_mode_opens_an_allowlisted_digest() -> None:
    host, _ = strict_host(allow=[DIGEST])
    assert host.receive(ui_open()) is None
    # integrity, when declared, is still checked first (S7)
    wrong = bundle_integrity("<p>other</p>")
    error = host.receive(ui_open("x", id_="o2", integrity=wrong))
    assert error is not None and (error.code, error.rule) == ("integrity_mismatch", "S7")


def test_s7_strict_mode_opens_a_bundle_signed_by_a_trusted_key() -> None:
    key = SigningKey.generate()
    host, sent = strict_host(keys=[key.public_key])
    assert host.receive(ui_open(signature=key.sign(HTML))) is None
    assert "w" in host.surfaces
    assert not [e for e in sent.sent if e["type"] == "lineup.v1.error"]


def test_h37_a_signature_for_other_bytes_is_refused_at_its_value() -> None:
    key = SigningKey.generate()
    host, sent = strict_host(keys=[key.public_key])
    message = ui_open(signature=key.sign("<p>what was signed</p>"))
    answer = assert_refused_once(host, sent, message, "untrusted_bundle", "H37")
    assert answer["payload"]["path"] == "$.payload.app.signature.value"
    assert "does not verify" in answer["payload"]["message"]


def test_h37_a_forged_signature_is_refused_in_dev_mode_too() -> None:
    """A bad signature by a key the host trusts is evidence of tampering, in every mode."""
    key = SigningKey.generate()
    host = Host(conversation_id=CONVERSATION, trust=BundleTrust.dev(keys=[key.public_key]))
    sent = Recorder(host)
    forged = {"key_id": key.key_id, "value": base64.b64encode(bytes(64)).decode()}
    assert_refused_once(host, sent, ui_open(signature=forged), "untrusted_bundle", "H37")
    # a signature by a key this host does not know is not checked in dev mode
    stranger = SigningKey.generate()
    assert host.receive(ui_open(id_="o2", signature=stranger.sign("<p>x</p>"))) is None


def test_h37_a_key_the_host_does_not_trust_is_named() -> None:
    trusted, stranger = SigningKey.generate(), SigningKey.generate()
    host, sent = strict_host(keys=[trusted.public_key])
    message = ui_open(signature=stranger.sign(HTML))
    answer = assert_refused_once(host, sent, message, "untrusted_bundle", "H37")
    assert answer["payload"]["path"] == "$.payload.app.signature.key_id"
    assert stranger.key_id in answer["payload"]["message"]


@pytest.mark.parametrize(
    ("signature", "path", "rule"),
    [
        ({"key_id": "short", "value": "A" * 86 + "=="}, "$.payload.app.signature.key_id", "H37"),
        ({"key_id": "A" * 16, "value": "not base64"}, "$.payload.app.signature.value", "H37"),
        ({"key_id": "A" * 16}, "$.payload.app.signature.value", "H37"),
        (
            {"key_id": "A" * 16, "value": "A" * 86 + "==", "alg": "x"},
            "$.payload.app.signature.alg",
            "H1",
        ),
    ],
)
def test_h37_a_malformed_signature_is_invalid_with_its_path(
    host: Host, sent: Recorder, signature: dict[str, str], path: str, rule: str
) -> None:
    answer = assert_refused_once(host, sent, ui_open(signature=signature), "invalid", rule)
    assert answer["payload"]["path"] == path


def test_h5_installed_apps_open_in_strict_mode() -> None:
    """Installing is the user's own act; the cache is verified on every open (H32)."""
    host, _ = strict_host()
    host.apps.install("com.lineup.svg-canvas")
    ref = {"instance_id": "c", "app": {"id": "com.lineup.svg-canvas", "surface": "canvas"}}
    assert host.receive(envelope("ui.open", ref)) is None
    assert "c" in host.surfaces


def test_h37_the_data_dirs_trust_file_sets_the_mode(lineup_home: Path) -> None:
    key = SigningKey.generate()
    policy = {"mode": "strict", "allow": [DIGEST], "keys": [key.public_key]}
    (lineup_home / "trust.json").write_text(json.dumps(policy))
    host = Host(conversation_id=CONVERSATION)
    assert host.trust.summary() == {"mode": "strict", "allowed": 1, "keys": [key.key_id]}
    assert host.receive(ui_open()) is None
    assert host.receive(ui_open("x", id_="o2", html="<p>x</p>")) is not None


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        json.dumps({"mode": "production"}),
        json.dumps({"mode": "strict", "allowed": []}),
        json.dumps({"mode": "strict", "allow": ["sha256-short"]}),
        json.dumps({"mode": "strict", "keys": ["ed25519:AAAA"]}),
        json.dumps({"mode": "strict", "keys": "ed25519:AAAA"}),
        json.dumps([]),
    ],
)
def test_h37_a_broken_trust_file_stops_the_host_instead_of_falling_back_to_dev(
    lineup_home: Path, text: str
) -> None:
    (lineup_home / "trust.json").write_text(text)
    with pytest.raises(UsageError, match=r"^\[lineup\]"):
        Host(conversation_id=CONVERSATION)


def test_h37_public_keys_are_read_from_the_one_line_form_or_pem() -> None:
    key = SigningKey.generate()
    pem = (
        serialization.load_pem_private_key(key.to_pem(), password=None)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    assert set(BundleTrust.strict(keys=[key.public_key]).keys) == {key.key_id}
    assert set(BundleTrust.strict(keys=[pem]).keys) == {key.key_id}
    assert SigningKey.from_pem(key.to_pem()).public_key == key.public_key
    assert "PRIVATE" not in repr(key) and key.key_id in repr(key)
    with pytest.raises(UsageError):
        BundleTrust.strict(keys=["ed25519:" + base64.b64encode(b"x" * 31).decode()])
    with pytest.raises(UsageError):
        SigningKey.from_pem(b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")


def test_h37_signed_envelope_is_a_valid_wire_message() -> None:
    key = SigningKey.generate()
    validate_envelope(ui_open(signature=key.sign(HTML)))


def test_cli_keygen_then_sign_opens_in_strict_mode(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    with out.open("w") as stream:
        assert main(["keygen", str(tmp_path / "signing.key")], out=stream) == 0
    assert stat.S_IMODE((tmp_path / "signing.key").stat().st_mode) == 0o600
    public = (tmp_path / "signing.key.pub").read_text().strip()
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "index.html").write_text(HTML)
    with out.open("w") as stream:
        assert main(["sign", "--key", str(tmp_path / "signing.key"), str(bundle)], out=stream) == 0
    signature = json.loads(out.read_text())
    host, _ = strict_host(keys=[public])
    assert host.receive(ui_open(signature=signature)) is None
    # a second keygen never overwrites the key
    with out.open("w") as stream:
        assert main(["keygen", str(tmp_path / "signing.key")], out=stream) == 2
