"""``lineup app ...``: the app center from a shell (docs/apps.md).

lineup app install SOURCE [--integrity SRI] [--disabled]   a folder, archive, URL or shipped id
lineup app upgrade SOURCE [--integrity SRI]
lineup app list [--json]
lineup app enable|disable|rollback|remove ID
lineup app verify [ID]                                      exit 1 if any bundle fails
lineup app hash FILE                                        the integrity a URL install needs

Every command takes ``--home DIR`` (else $LINEUP_JUPYTER_HOME, else the platform's data dir).
A running kernel sees these changes on its next ui.open and its next inventory.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TextIO

from .appcenter._app_sources import sri
from .appcenter._apps import AppCenter, AppInfo
from .protocol._errors import LineUpError
from .runtime._store import data_dir

__all__ = ["add_app_commands"]


def _center(args: argparse.Namespace) -> AppCenter:
    return AppCenter(data_dir(args.home))


def _describe(info: AppInfo) -> str:
    state = "enabled" if info.enabled else "disabled"
    rollback = f", rollback to {info.previous}" if info.previous else ""
    surfaces = ", ".join(info.surfaces)
    return f"{info.id} {info.version} ({state}{rollback}): {info.name}; surfaces {surfaces}"


def _run(args: argparse.Namespace, out: TextIO) -> int:
    if args.app_command == "hash":
        try:
            print(sri(Path(args.file).read_bytes()), file=out)
        except OSError as exc:
            print(f"lineup: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 2
        return 0
    center = _center(args)
    try:
        if args.app_command == "install":
            print(
                _describe(
                    center.install(args.source, integrity=args.integrity, enable=not args.disabled)
                ),
                file=out,
            )
        elif args.app_command == "upgrade":
            print(_describe(center.upgrade(args.source, integrity=args.integrity)), file=out)
        elif args.app_command == "list":
            apps = center.list()
            if args.json:
                print(json.dumps([dataclasses.asdict(info) for info in apps], indent=2), file=out)
            for info in [] if args.json else apps:
                print(_describe(info), file=out)
        elif args.app_command == "remove":
            center.remove(args.id)
            print(f"removed {args.id}", file=out)
        elif args.app_command == "verify":
            results = center.verify(args.id)
            for result in results:
                verdict = "ok" if result.ok else f"FAILED: {result.problem}"
                print(f"{result.app_id} {result.version} {result.surface}: {verdict}", file=out)
            return 0 if all(results) else 1
        else:  # enable, disable, rollback
            print(_describe(getattr(center, args.app_command)(args.id)), file=out)
    except LineUpError as error:
        print(f"lineup: {error}", file=sys.stderr)
        return 1
    except (OSError, MemoryError) as error:  # one line, never a traceback, whatever failed
        print(f"lineup: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    finally:
        center.close()
    return 0


def add_app_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    app = commands.add_parser("app", help="install, enable, disable, roll back and verify apps")
    app.add_argument(
        "--home", help="the data dir (default: $LINEUP_JUPYTER_HOME or the platform's)"
    )
    sub = app.add_subparsers(dest="app_command", required=True)
    for name in ("install", "upgrade"):
        command = sub.add_parser(
            name,
            help=f"{name} an app: a folder, a zip/tar archive, an http(s) URL or a shipped app id",
        )
        command.add_argument("source")
        command.add_argument(
            "--integrity", help="sha256-<base64> of the archive (required for a URL)"
        )
        if name == "install":
            command.add_argument(
                "--disabled", action="store_true", help="install without enabling it"
            )
    listing = sub.add_parser("list", help="the installed apps")
    listing.add_argument("--json", action="store_true")
    for name, text in (
        ("enable", "let agents see and open it"),
        ("disable", "withdraw it from agents"),
        ("rollback", "go back to the version the current one replaced"),
        ("remove", "uninstall every version"),
    ):
        sub.add_parser(name, help=text).add_argument("id")
    sub.add_parser("verify", help="re-hash the cached bundles").add_argument("id", nargs="?")
    sub.add_parser("hash", help="print the integrity of an archive for a URL install").add_argument(
        "file"
    )
    app.set_defaults(run=_run)
