"""The `lineup` command: validate, schema, hash."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lineup_jupyter._cli import main
from lineup_jupyter.protocol import bundle_integrity

from ..conftest import ENVELOPES, EXPECTED, golden


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out)
    return code, out.getvalue()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_validate_prints_each_fixtures_verdict(name: str) -> None:
    """M1-M3, U*, C*, H*: valid fixtures print valid; invalid ones print the rule they break."""
    code, out = run("validate", str(ENVELOPES / name))
    expected = EXPECTED[name]
    if expected["verdict"] == "valid":
        assert code == 0 and ": valid lineup.v1." in out
    else:
        assert code == 1
        assert (
            f"{expected['verdict']} [{expected['rule']} {expected['code']}] {expected['path']}:"
            in out
        )


def test_validate_json_lines_reports_each_line(tmp_path: Path) -> None:
    bad = golden("ui-open-bad-instance-id.json")
    lines = [golden("seed-ui-open.json"), bad, golden("seed-ui-patch.json")]
    path = tmp_path / "conversation.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n\n")
    code, out = run("validate", "--json", str(path))
    verdicts = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [(v["line"], v["verdict"]) for v in verdicts] == [
        (1, "valid"),
        (2, "invalid"),
        (3, "valid"),
    ]
    assert verdicts[1]["rule"] == "U1" and verdicts[1]["path"] == "$.payload.instance_id"


def test_validate_all_valid_exits_zero() -> None:
    assert run("validate", str(ENVELOPES / "conversation.jsonl"))[0] == 0


def test_validate_reads_standard_input_as_a_module() -> None:
    """`python -m lineup_jupyter validate -` reads stdin; exit status 1 on any invalid."""
    result = subprocess.run(
        [sys.executable, "-m", "lineup_jupyter", "validate", "-"],
        input=b'{"v": 1}',
        capture_output=True,
        check=False,
    )
    assert result.returncode == 1
    assert b"<stdin>:1: invalid [M1 invalid] $.id:" in result.stdout


def test_validate_missing_file_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("validate", "/nonexistent/x.json")[0] == 2
    assert "cannot read /nonexistent/x.json" in capsys.readouterr().err


def test_validate_bundle_limit_option(tmp_path: Path) -> None:
    """U3: the limit is configurable from the command line too."""
    path = ENVELOPES / "seed-ui-open.json"
    assert run("validate", "--max-bundle-bytes", "50", str(path))[0] == 1
    assert run("validate", "--max-bundle-bytes", "500", str(path))[0] == 0


def test_hash_of_a_folder_envelope_and_bundle_agree(tmp_path: Path) -> None:
    """H4: `lineup hash` gives the digest the host verifies, from any of its inputs."""
    app = golden("seed-ui-open.json")["payload"]["app"]
    expected = bundle_integrity(app["html"], app["css"], app["js"])
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "index.html").write_text(app["html"], "utf-8")
    (folder / "style.css").write_text(app["css"], "utf-8")
    (folder / "script.js").write_text(app["js"], "utf-8")
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({k: app[k] for k in ("html", "css", "js")}), "utf-8")
    for source in (folder, bundle, ENVELOPES / "seed-ui-open.json"):
        code, out = run("hash", str(source))
        assert (code, out.strip()) == (0, expected)
    assert expected == app["integrity"]


def test_hash_of_something_else_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "x.json"
    path.write_text("[1, 2]")
    assert run("hash", str(path))[0] == 2
    assert "expected a bundle" in capsys.readouterr().err


def test_schema_is_a_json_schema_of_every_type() -> None:
    code, out = run("schema")
    schema = json.loads(out)
    assert code == 0
    text = json.dumps(schema)
    for kind in (
        "ui.open",
        "ui.patch",
        "ui.close",
        "ui.event",
        "client.inventory",
        "app.list",
        "app.call",
        "app.result",
        "error",
    ):
        assert f'"lineup.v1.{kind}"' in text
