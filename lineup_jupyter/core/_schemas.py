"""JSON Schema checks (Draft 2020-12) for capability arguments and app events, importing
jsonschema only when a schema is first used.

Why lazily: in a Jupyter environment jsonschema finds ``rfc3987_syntax`` installed (JupyterLab
pulls it in) and builds its Lark grammar at import, which took 1.5-2.7 s here: every kernel
importing lineup_jupyter paid it before its first cell ran. A host that never checks a schema
now never pays it. Formats are not asserted (no format checker), as before.

Schemas come from apps and notebook authors, values from agents and surfaces, so checking
must neither hang nor reach out (issue 14):

- ``pattern`` and ``patternProperties`` (and ``additionalProperties``, which weeds out what
  ``patternProperties`` matched) run on RE2 through ``_patterns``; a pattern RE2 cannot run
  is refused when the schema is declared or installed. jsonschema's ``unevaluatedProperties``
  matches ``patternProperties`` with Python's ``re`` inside its own code, so a schema that
  holds both is refused.
- ``$ref`` and ``$dynamicRef`` must point inside the schema (``#...``), checked when it is
  declared; and validation runs with a registry that retrieves nothing, so nothing is ever
  downloaded. A reference that still cannot be resolved, or that loops without end, is a
  problem with the value's check, never an exception out of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from ..protocol._patterns import PatternError, compile_pattern

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

# jsonschema's validators.extend and referencing's attrs classes (Registry, NoSuchResource)
# have no keyword signatures mypy can read: they are called through Any, below.

__all__ = ["SchemaProblem", "first_problem", "schema_error"]


class SchemaProblem(NamedTuple):
    """Where a value breaks its schema (the path inside the value) and why."""

    path: Sequence[str | int]
    message: str


def schema_error(schema: Any) -> str | None:
    """Why ``schema`` is not a valid Draft 2020-12 schema this host checks, or None."""
    from jsonschema import FormatChecker
    from jsonschema.exceptions import SchemaError

    # The metaschema marks every pattern (pattern, patternProperties' names) as format
    # "regex": checked here by RE2, in place of jsonschema's default check with Python's re.
    regex_only = FormatChecker(formats=())
    regex_only.checks("regex", raises=PatternError)(_compiles)
    try:
        _validator_class().check_schema(schema, format_checker=regex_only)
    except SchemaError as error:
        where = "".join(f"[{part!r}]" for part in error.absolute_path)
        cause = f": {error.cause}" if isinstance(error.cause, PatternError) else ""
        return f"{error.message}{cause}" + (f" (at {where})" if where else "")
    for path, node in _nodes(schema):
        for keyword in ("$ref", "$dynamicRef"):
            reference = node.get(keyword)
            if isinstance(reference, str) and not reference.startswith("#"):
                return (
                    f"{keyword} {reference!r} at {path or 'the root'} points outside the schema; "
                    "only references inside it (#...) are followed, nothing is downloaded"
                )
    keywords = {key for _, node in _nodes(schema) for key in node}
    if "unevaluatedProperties" in keywords and "patternProperties" in keywords:
        return (
            "unevaluatedProperties together with patternProperties is not supported: "
            "jsonschema would match those patterns with Python's backtracking re"
        )
    return None


def _compiles(instance: object) -> bool:
    if isinstance(instance, str):
        compile_pattern(instance, unicode_sets=False)  # PatternError says why not
    return True


def _nodes(value: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object anywhere in a schema document, with its path: a ``$ref`` may point
    anywhere inside it (``#/x/y``), also into what no keyword reads."""
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _nodes(item, f"{path}[{key!r}]")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nodes(item, f"{path}[{index}]")


@lru_cache(maxsize=1)
def _validator_class() -> Any:
    """Draft 2020-12 with the pattern keywords on RE2."""
    from jsonschema import Draft202012Validator
    from jsonschema import validators as jsonschema_validators
    from jsonschema.exceptions import ValidationError

    def matcher(pattern: str) -> Any:
        try:
            return compile_pattern(pattern, unicode_sets=False)
        except PatternError as exc:  # only a pattern no keyword reads can get here: refuse it
            raise ValidationError(f"the pattern {pattern!r} cannot be checked: {exc}") from None

    def pattern(validator: Any, source: str, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "string"):
            return
        try:
            if not matcher(source).search(instance):
                yield ValidationError(f"{instance!r} does not match {source!r}")
        except ValidationError as error:
            yield error

    def pattern_properties(
        validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for source, subschema in patterns.items():
            try:
                compiled = matcher(source)
            except ValidationError as error:
                yield error
                continue
            for key, value in instance.items():
                if compiled.search(key):
                    yield from validator.descend(value, subschema, path=key, schema_path=source)

    def additional_properties(
        validator: Any, additional: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        known = schema.get("properties", {})
        try:
            patterns = [matcher(source) for source in schema.get("patternProperties", {})]
        except ValidationError as error:
            yield error
            return
        extras = sorted(
            (
                key
                for key in instance
                if key not in known and not any(p.search(key) for p in patterns)
            ),
            key=str,
        )
        if validator.is_type(additional, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], additional, path=extra)
        elif not additional and extras:
            listed = ", ".join(repr(extra) for extra in extras)
            yield ValidationError(f"Additional properties are not allowed ({listed} unexpected)")

    extend: Any = jsonschema_validators.extend
    return extend(
        Draft202012Validator,
        {
            "pattern": pattern,
            "patternProperties": pattern_properties,
            "additionalProperties": additional_properties,
        },
    )


def _refuse_retrieval(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    refusal: Any = NoSuchResource
    raise refusal(ref=uri)


@lru_cache(maxsize=256)
def _validator(schema_text: str) -> Validator:
    from referencing import Registry

    # Nothing is retrieved: jsonschema's default would fetch a remote $ref with urllib.
    registry_class: Any = Registry
    validator: Validator = _validator_class()(
        json.loads(schema_text), registry=registry_class(retrieve=_refuse_retrieval)
    )
    return validator


def first_problem(schema: Any, instance: Any) -> SchemaProblem | None:
    """The most relevant way ``instance`` breaks ``schema`` (jsonschema's best match), or None.
    ``schema`` must have passed :func:`schema_error`. Never raises for a valid schema."""
    from jsonschema.exceptions import best_match
    from referencing.exceptions import Unresolvable

    # Validators are cached by the schema's canonical text: a schema is a dict (unhashable),
    # and building a validator for every event or call would cost more than the check.
    validator = _validator(json.dumps(schema, sort_keys=True))
    try:
        problem = best_match(validator.iter_errors(instance))
    except Unresolvable as exc:
        return SchemaProblem((), f"the schema's reference {exc.ref!r} cannot be resolved")
    except RecursionError:
        return SchemaProblem((), "the schema refers to itself without end; it cannot be checked")
    return None if problem is None else SchemaProblem(tuple(problem.absolute_path), problem.message)
