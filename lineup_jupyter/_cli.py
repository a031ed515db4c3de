"""``lineup``: validate envelopes, print the JSON Schema, hash a bundle.

lineup validate FILE|-     one envelope, or JSON lines; exit 1 if any is not valid
lineup schema              the JSON Schema of every lineup.v1 message
lineup hash PATH           the app.integrity string of a bundle (H4)
lineup keygen FILE         a new Ed25519 signing key in FILE (0600), its public key in FILE.pub
lineup sign --key FILE PATH  the app.signature of a bundle, for hosts in strict mode (H37)
lineup app ...             the app center: install, list, enable, disable, rollback, remove, verify
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from ._cli_apps import add_app_commands
from .appcenter._trust import SigningKey
from .protocol import Limits, bundle_integrity, validate_envelope
from .protocol._errors import ProtocolError, UsageError

__all__ = ["main"]

BUNDLE_FILES = {"html": "index.html", "css": "style.css", "js": "script.js"}


def _documents(text: str, force_lines: bool) -> Iterator[tuple[int, str]]:
    """(line number, text) of each message: the whole text if it is one JSON value, else lines."""
    if not force_lines:
        stripped = text.strip()
        try:
            _, end = json.JSONDecoder().raw_decode(stripped)
        except (ValueError, RecursionError):
            end = -1
        if end == len(stripped) or "\n" not in stripped:
            yield 1, text
            return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield number, line


def _verdict(raw: str, limits: Limits) -> dict[str, Any]:
    try:
        envelope = validate_envelope(raw, limits=limits)
    except ProtocolError as error:
        verdict = "unsupported" if error.code == "unsupported" else "invalid"
        return {"verdict": verdict, **error.to_payload()}
    return {"verdict": "valid", "type": envelope.type, "id": envelope.id}


def _validate(args: argparse.Namespace, out: TextIO) -> int:
    if args.file == "-":
        data = sys.stdin.buffer.read()
        name = "<stdin>"
    else:
        path = Path(args.file)
        try:
            data = path.read_bytes()
        except OSError as exc:
            print(f"lineup: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 2
        name = args.file
    limits = Limits(max_bundle_bytes=args.max_bundle_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        documents: Iterator[tuple[int, Any]] = iter([(1, data)])  # the validator explains why
    else:
        documents = _documents(text, args.jsonl)
    failures = 0
    for line, raw in documents:
        result = _verdict(raw, limits)
        failures += result["verdict"] != "valid"
        if args.json:
            print(json.dumps({"file": name, "line": line, **result}, ensure_ascii=False), file=out)
        elif result["verdict"] == "valid":
            print(f"{name}:{line}: valid {result['type']} (id {result['id']})", file=out)
        else:
            print(
                f"{name}:{line}: {result['verdict']} [{result['rule']} {result['code']}] "
                f"{result['path']}: {result['message']}",
                file=out,
            )
    return 1 if failures else 0


def _bundle_from(path: Path) -> dict[str, str]:
    if path.is_dir():
        return {
            part: (path / file).read_text("utf-8") if (path / file).exists() else ""
            for part, file in BUNDLE_FILES.items()
        }
    value = json.loads(path.read_text("utf-8"))
    if isinstance(value, dict) and isinstance(value.get("payload"), dict):
        value = value["payload"].get("app", value)  # a whole ui.open envelope
    if not isinstance(value, dict) or not isinstance(value.get("html"), str):
        raise ValueError("expected a bundle {html, css, js}, or a ui.open envelope carrying one")
    return {part: str(value.get(part, "")) for part in BUNDLE_FILES}


def _hash(args: argparse.Namespace, out: TextIO) -> int:
    try:
        bundle = _bundle_from(Path(args.path))
    except (OSError, ValueError) as exc:
        print(f"lineup: cannot read a bundle from {args.path}: {exc}", file=sys.stderr)
        return 2
    print(bundle_integrity(bundle["html"], bundle["css"], bundle["js"]), file=out)
    return 0


def _keygen(args: argparse.Namespace, out: TextIO) -> int:
    key = SigningKey.generate()
    private, public = Path(args.file), Path(f"{args.file}.pub")
    try:
        # O_EXCL: a key is never overwritten, and the private file is 0600 from its first byte.
        descriptor = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(key.to_pem())
        public.write_text(key.public_key + "\n", "ascii")
    except OSError as exc:
        print(f"lineup: cannot write the key: {exc}", file=sys.stderr)
        return 2
    print(f"private key: {private} (keep it secret)", file=out)
    print(f"public key:  {public}", file=out)
    print(f"key id:      {key.key_id}", file=out)
    print(key.public_key, file=out)
    return 0


def _sign(args: argparse.Namespace, out: TextIO) -> int:
    try:
        key = SigningKey.from_pem(Path(args.key).read_bytes())
        bundle = _bundle_from(Path(args.path))
    except UsageError as exc:
        print(exc, file=sys.stderr)
        return 2
    except (OSError, ValueError) as exc:
        print(f"lineup: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(key.sign(bundle["html"], bundle["css"], bundle["js"])), file=out)
    return 0


def _schema(args: argparse.Namespace, out: TextIO) -> int:
    from .protocol._codegen import envelope_schema

    print(json.dumps(envelope_schema(), indent=2, ensure_ascii=False), file=out)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lineup", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    validate = commands.add_parser("validate", help="check envelopes against every rule")
    validate.add_argument("file", help="a file of one envelope or JSON lines; - for standard input")
    validate.add_argument("--jsonl", action="store_true", help="read one envelope per line")
    validate.add_argument("--json", action="store_true", help="print verdicts as JSON lines")
    validate.add_argument(
        "--max-bundle-bytes",
        type=int,
        default=Limits().max_bundle_bytes,
        help="bundle size limit (U3), default %(default)s",
    )
    validate.set_defaults(run=_validate)
    schema = commands.add_parser("schema", help="print the JSON Schema of every message")
    schema.set_defaults(run=_schema)
    hash_ = commands.add_parser("hash", help="print a bundle's app.integrity (H4)")
    hash_.add_argument(
        "path",
        help=f"a folder with {', '.join(BUNDLE_FILES.values())}, "
        "or a JSON bundle or ui.open envelope",
    )
    hash_.set_defaults(run=_hash)
    keygen = commands.add_parser("keygen", help="make an Ed25519 key to sign bundles (H37)")
    keygen.add_argument("file", help="where to write the private key (FILE.pub: the public key)")
    keygen.set_defaults(run=_keygen)
    sign = commands.add_parser("sign", help="print a bundle's app.signature (H37)")
    sign.add_argument("--key", required=True, help="the private key file `lineup keygen` wrote")
    sign.add_argument("path", help="a bundle, as for `lineup hash`")
    sign.set_defaults(run=_sign)
    add_app_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    args = _parser().parse_args(argv)
    code: int = args.run(args, out or sys.stdout)
    return code
