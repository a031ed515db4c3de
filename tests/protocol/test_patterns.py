"""Agent- and app-supplied regular expressions and schemas cannot hang the kernel (H14, C6).

The attacks of issue 14 run in a fresh interpreter with a 120 s timeout: a regression hangs
there and fails the test (subprocess.TimeoutExpired) instead of hanging the suite. Every
assertion is about the outcome (accepted, refused with which code, rule and path), never
about time. One control shows that the same pattern and answer do not finish on Python's
``re`` within seconds: the attack is real, and RE2 is what makes the outcome arrive.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter.core._schemas import first_problem, schema_error
from lineup_jupyter.protocol._patterns import PatternError, compile_pattern

# Generous: the checks take milliseconds, but starting an interpreter that imports
# jsonschema took 23 s on this 2-core machine under a load of 14. Only a hang reaches it.
ATTACK_TIMEOUT = 120.0


def run_isolated(code: str, home: Path) -> Any:
    """Run ``code`` in a new interpreter; its last stdout line is JSON, returned. It imports
    jsonschema without rfc3987_syntax, as the test workers do (tests/conftest.py says why)."""
    prelude = "import sys; sys.modules['rfc3987_syntax'] = None\n"
    result = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=ATTACK_TIMEOUT,
        cwd=home,
        env={**os.environ, "LINEUP_JUPYTER_HOME": str(home)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


# ---- the translation from JavaScript pattern syntax to RE2 ------------------------------------

ACCEPTED = {
    # pattern: (a value it matches whole, a value it does not)
    "[a-z]+": ("abc", "abc1"),
    "(?:ab)+": ("abab", "aba"),
    "\\d{3}-\\d{4}": ("555-1234", "555-12345"),
    "(foo|bar)": ("bar", "foobar"),
    "[\\(+*]+": ("(+*", "a"),
    "(?<x>a)b": ("ab", "a"),
    "\\u0041\\u{1F600}": ("A😀", "A"),
    "\\uD83D\\uDE00": ("😀", "\ud83d"),  # a surrogate pair is one code point (v flag)
    "a.c": ("abc", "a\nc"),  # '.' does not match a line terminator, as in JavaScript
    "a.c ": ("a\u00e9c ", "a\u2028c "),
    "\\s": ("\u00a0", "x"),  # JavaScript's \s holds the no-break space
    "[^\\s]+": ("ab", "a b"),
    "\\p{Lu}\\p{Ll}+": ("Ada", "ada"),
    "\\p{Script=Greek}+": ("αβ", "ab"),
    "[\\d\\-]+": ("12-3", "12a"),
    "[\\~\\&]\\.\\/": ("~./", "~.a"),
    "^(a+)+$": ("aaaa", "aaab"),  # nested repetition is harmless on a linear-time engine
    "\\cJ": ("\n", "J"),
    "[\\b]": ("\b", "b"),
}


@pytest.mark.parametrize("pattern", sorted(ACCEPTED))
def test_H14_javascript_patterns_keep_their_meaning_on_re2(pattern: str) -> None:
    good, bad = ACCEPTED[pattern]
    compiled = compile_pattern(pattern)
    assert compiled.fullmatch(good)
    assert not compiled.fullmatch(bad)


REFUSED = {
    # pattern: what the refusal says
    "(a)\\1": "backreference",
    "(?<x>a)\\k<x>": "backreference",
    "a(?=b)": "lookaround",
    "a(?!b)": "lookaround",
    "(?<=a)b": "lookaround",
    "(?<!a)b": "lookaround",
    "(?x) ^ (a+) + $": "inline modifiers",
    "(?i)abc": "inline modifiers",
    "(?P<x>a)": "(?P<name>",
    "a{": "lone '{'",
    "a}": "lone '}'",
    "[(]": "must be escaped",
    "[a-]": "must be escaped",
    "[a&&b]": "set operations",
    "[[a]]": "nested classes",
    "[**]": "reserved",
    "[]": "empty class",
    "[abc": "never closed",
    "[a-": "never closed",
    "\\p{Emoji}": "general category",
    "\\q": "not an escape",
    "a\\-b": "not an escape",  # '-' is escaped only inside a class
    "[\\_]": "not an escape",
    "\\uZZ": "four hex digits",
    "\\u{110000}": "not a Unicode scalar",
    "a{1001}": "RE2 cannot run it",
    "(?:a{999}){999}": "RE2 cannot run it",
    "\\p{L}{1000}": "RE2 cannot run it",  # a program over RE2's memory budget
    "\\": "lone backslash",
}


@pytest.mark.parametrize("pattern", sorted(REFUSED))
def test_H14_what_re2_cannot_run_or_javascript_reads_otherwise_is_refused(pattern: str) -> None:
    with pytest.raises(PatternError, match=None) as refused:
        compile_pattern(pattern)
    assert REFUSED[pattern] in str(refused.value)


def test_C6_schema_patterns_read_classes_with_the_u_flag() -> None:
    """JSON Schema patterns are ECMA-262 as JavaScript validators run them (u flag): '/' and
    '(' are plain inside a class there, while an HTML pattern (v flag) must escape them."""
    url = r"^https?://[^\s/?#@]+([/?#][^\s]*)?$"  # app.open_url's input_schema
    assert compile_pattern(url, unicode_sets=False).fullmatch("https://example.org/a?b")
    assert not compile_pattern(url, unicode_sets=False).fullmatch("https://a@b")
    assert compile_pattern("[-/(]", unicode_sets=False).fullmatch("(")
    with pytest.raises(PatternError, match="must be escaped"):
        compile_pattern("[-/(]")


@pytest.mark.parametrize("unicode_sets", [True, False])
def test_H14_any_string_compiles_or_is_refused_never_raises_otherwise(unicode_sets: bool) -> None:
    """Hostile pattern text: 20 000 random strings over the syntax's characters each compile
    (and match) or give a PatternError, nothing else."""
    alphabet = [*"ab[]()\\-^$.*+?{}|,:=!<>0123456789dDsSwWbBpPkuxcL&~#/", "é", "\n"]
    rng = random.Random(14)
    for _ in range(20_000):
        source = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        try:
            compiled = compile_pattern(source, unicode_sets=unicode_sets)
        except PatternError:
            continue
        compiled.fullmatch("ab")
        compiled.search("a\ud800b")  # a lone surrogate matches nothing, raises nothing


# ---- JSON Schema: patterns on RE2, no remote references -----------------------------------------

SCHEMAS_REFUSED = {
    "lookaround in pattern": ({"pattern": "(?=a)"}, "lookaround"),
    "backreference in patternProperties": ({"patternProperties": {"(a)\\1": {}}}, "backref"),
    "remote $ref": ({"$ref": "http://127.0.0.1:9/x"}, "points outside the schema"),
    "relative $ref": ({"properties": {"a": {"$ref": "other.json"}}}, "['properties']['a']"),
    "remote $dynamicRef": ({"$dynamicRef": "https://example.org/m"}, "$dynamicRef"),
    "unevaluatedProperties with patternProperties": (
        {"patternProperties": {"a": {}}, "unevaluatedProperties": False},
        "not supported",
    ),
}


@pytest.mark.parametrize("case", sorted(SCHEMAS_REFUSED))
def test_C6_C7_a_schema_with_an_unsafe_pattern_or_a_remote_reference_is_refused(
    case: str,
) -> None:
    schema, why = SCHEMAS_REFUSED[case]
    problem = schema_error(schema)
    assert problem is not None and why in problem


def test_C6_schema_patterns_search_on_re2_and_additional_properties_agree() -> None:
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string", "pattern": "^(a+)+$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": False,
    }
    assert schema_error(schema) is None
    assert first_problem(schema, {"name": "aaa", "x-1": 1}) is None
    problem = first_problem(schema, {"name": "a" * 5000 + "!"})
    assert problem is not None and problem.path == ("name",)
    problem = first_problem(schema, {"x-1": "one"})
    assert problem is not None and problem.path == ("x-1",)
    problem = first_problem(schema, {"y": 1})
    assert problem is not None and "'y' unexpected" in problem.message
    # JSON Schema's pattern is not anchored (ECMA-262 search)
    assert first_problem({"pattern": "b"}, "abc") is None


def test_C6_a_reference_that_cannot_resolve_or_loops_is_a_problem_not_an_exception() -> None:
    for schema in ({"$ref": "#/nowhere"}, {"$ref": "#"}, {"$dynamicRef": "#meta"}):
        assert schema_error(schema) is None
        problem = first_problem(schema, {"a": 1})
        assert problem is not None and "schema" in problem.message


# ---- the attacks of issue 14, each in its own interpreter ----------------------------------------

_PRELUDE = """
import json
from lineup_jupyter import Host, ProtocolError, UsageError

host = Host(conversation_id="conv_01")
ids = iter(range(10**6))

def send(type_, payload):
    error = host.receive({
        "v": 1, "id": f"m{next(ids)}", "type": "lineup.v1." + type_,
        "conversation_id": "conv_01", "sender": {"kind": "agent", "id": "agent_a"},
        "payload": payload,
    })
    return None if error is None else [error.code, error.rule, error.path, error.message]

def ask(component_id, pattern):
    return send("component.show", {
        "component_id": component_id, "kind": "input", "prompt": "?", "pattern": pattern,
    })

def answer(component_id, value):
    try:
        host.answer(component_id, "answered", value)
    except ProtocolError as error:
        return [error.code, error.rule, error.path]
    return None
"""


def test_H14_issue14_input_patterns_are_answered_without_hanging(tmp_path: Path) -> None:
    outcome = run_isolated(
        _PRELUDE
        + """
out = {}
out["verbose"] = ask("q0", "(?x) ^ (a+) + $")
out["optional"] = ask("q1", "^(?:a?){36}a{36}$")
out["optional_ok"] = answer("q1", "a" * 36)
ask("q2", "^(?:a?){36}a{36}$")
out["optional_bad"] = answer("q2", "a" * 35)
out["digits"] = ask("q3", "\\\\d*\\\\d*\\\\d*x")
out["digits_bad"] = answer("q3", "1" * 16000)
ask("q4", "^(a+)+$")
out["nested_bad"] = answer("q4", "a" * 16000 + "!")
print(json.dumps(out))
""",
        tmp_path,
    )
    code, rule, path, message = outcome["verbose"]
    assert (code, rule, path) == ("invalid", "H14", "$.payload.pattern")
    assert "inline modifiers" in message
    assert outcome["optional"] is None and outcome["optional_ok"] is None
    assert outcome["optional_bad"] == ["invalid", "H14", "$.payload.value"]
    assert outcome["digits"] is None
    assert outcome["digits_bad"] == ["invalid", "H14", "$.payload.value"]
    assert outcome["nested_bad"] == ["invalid", "H14", "$.payload.value"]


def test_C6_issue14_an_app_event_schema_pattern_checks_one_event_without_hanging(
    tmp_path: Path,
) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "index.html").write_text("<p>x</p>")
    schema = {"type": "object", "properties": {"text": {"type": "string", "pattern": "^(a+)+$"}}}
    manifest = {
        "id": "com.example.regex",
        "name": "Regex",
        "version": "1.0.0",
        "surfaces": [
            {
                "id": "main",
                "html": "index.html",
                "events": ["save"],
                "event_schemas": {"save": schema},
            }
        ],
    }
    (app / "lineup-app.json").write_text(json.dumps(manifest))
    remote = json.loads(json.dumps(manifest))
    remote["id"] = "com.example.remote"
    remote["surfaces"][0]["event_schemas"] = {"save": {"$ref": "http://127.0.0.1:9/x"}}
    (tmp_path / "remote").mkdir()
    (tmp_path / "remote" / "index.html").write_text("<p>x</p>")
    (tmp_path / "remote" / "lineup-app.json").write_text(json.dumps(remote))
    outcome = run_isolated(
        _PRELUDE
        + f"""
out = {{}}
host.apps.install({str(app)!r})
send("ui.open", {{"instance_id": "n1", "app": {{"id": "com.example.regex", "surface": "main"}}}})
try:
    host.user_event("n1", "save", {{"text": "a" * 16000 + "!"}})
except ProtocolError as error:
    out["hostile"] = [error.code, error.rule, error.path]
out["fine"] = host.user_event("n1", "save", {{"text": "aaaa"}})
try:
    host.apps.install({str(tmp_path / "remote")!r})
except UsageError as refused:
    out["remote"] = str(refused)
print(json.dumps(out))
""",
        tmp_path,
    )
    assert outcome["hostile"] == ["invalid", "C6", "$.data.text"]
    assert outcome["fine"] is None
    assert "points outside the schema" in outcome["remote"]


def test_C7_issue14_a_capability_input_schema_pattern_checks_one_call_without_hanging(
    tmp_path: Path,
) -> None:
    outcome = run_isolated(
        _PRELUDE
        + """
out = {}
schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "^(a+)+$"}}}
host.capability("x.lookup", risk="display_only", input_schema=schema)(lambda arguments: {})
agent = host.connect_agent("agent_b")
out["hostile"] = agent.call("x.lookup", {"q": "a" * 50000 + "!"}, reason="r").result(30).status
out["fine"] = agent.call("x.lookup", {"q": "aaa"}, reason="r").result(30).status
try:
    host.capability("x.remote", risk="display_only", input_schema={"$ref": "http://127.0.0.1:9/x"})(
        lambda arguments: {}
    )
except UsageError as refused:
    out["remote"] = str(refused)
print(json.dumps(out))
""",
        tmp_path,
    )
    assert outcome == {
        "hostile": "failed",
        "fine": "completed",
        "remote": outcome["remote"],
    }
    assert "points outside the schema" in outcome["remote"]


def test_H14_control_the_same_attack_does_not_finish_on_pythons_re(tmp_path: Path) -> None:
    """The detector sees the escape: on Python's backtracking re, the pattern and answer the
    attack test sends do not finish within 1 s (2**40 paths: hours), so the outcome above is
    RE2's."""
    code = "import re; re.fullmatch('^(a+)+$', 'a' * 40 + '!')"
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", code], timeout=1, check=False, cwd=tmp_path)
