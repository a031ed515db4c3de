"""JSON Schema checks (Draft 2020-12) for capability arguments and app events, importing
jsonschema only when a schema is first used.

Why lazily: in a Jupyter environment jsonschema finds ``rfc3987_syntax`` installed (JupyterLab
pulls it in) and builds its Lark grammar at import, which took 1.5-2.7 s here: every kernel
importing lineup_jupyter paid it before its first cell ran. A host that never checks a schema
now never pays it. Formats are not asserted (no format checker), as before.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

__all__ = ["SchemaProblem", "first_problem", "schema_error"]


class SchemaProblem(NamedTuple):
    """Where a value breaks its schema (the path inside the value) and why."""

    path: Sequence[str | int]
    message: str


def schema_error(schema: Any) -> str | None:
    """Why ``schema`` is not a valid Draft 2020-12 schema, or None when it is."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        return error.message
    return None


@lru_cache(maxsize=256)
def _validator(schema_text: str) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema_text))


def first_problem(schema: Any, instance: Any) -> SchemaProblem | None:
    """The most relevant way ``instance`` breaks ``schema`` (jsonschema's best match), or None.
    ``schema`` must have passed :func:`schema_error`."""
    from jsonschema.exceptions import best_match

    # Validators are cached by the schema's canonical text: a schema is a dict (unhashable),
    # and building a validator for every event or call would cost more than the check.
    validator = _validator(json.dumps(schema, sort_keys=True))
    problem = best_match(validator.iter_errors(instance))
    return None if problem is None else SchemaProblem(tuple(problem.absolute_path), problem.message)
