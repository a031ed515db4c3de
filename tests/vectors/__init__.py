"""The project's own attack vectors, and the optional extra corpora.

The security tests run on what is written here (``xss.py``, ``markdown.py``,
``hostile_surfaces.py``): vectors written for this project, one or more for every class of
attack the tests claim to stop (docs/testing.md, "Attack vectors"). A larger corpus kept outside
the repository, in the same JSON shapes, is an optional extra run: set ``LINEUP_EXTRA_CORPORA``
to the folder that holds ``xss-vectors.json``, ``markdown-vectors.json`` and
``hostile-surfaces.json``. ``.ci/run`` sets it when such a folder sits beside the checkout;
without it the extra tests are skipped, and pytest's summary says so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

EXTRA_ENV = "LINEUP_EXTRA_CORPORA"


def extra_corpus(name: str) -> list[dict[str, Any]]:
    """The vectors of ``name`` in the extra corpora folder; skips the test when none is set,
    fails it when one is set but the file is not there (a typo must not pass as a skip)."""
    folder = os.environ.get(EXTRA_ENV, "")
    if not folder:
        pytest.skip(f"extra corpora not run: {EXTRA_ENV} is not set (docs/testing.md)")
    path = Path(folder) / name
    if not path.is_file():
        pytest.fail(f"{EXTRA_ENV}={folder} but {name} is not in it")
    vectors: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    assert vectors, f"{path} holds no vectors"
    return vectors


def extra_corpus_or_empty(name: str) -> list[dict[str, Any]]:
    """For parametrizing at import time: the extra vectors, or [] when none are set (pair it
    with ``SKIP_EXTRA``, so the run says they were skipped)."""
    folder = os.environ.get(EXTRA_ENV, "")
    if not folder:
        return []
    path = Path(folder) / name
    if not path.is_file():
        raise FileNotFoundError(f"{EXTRA_ENV}={folder} but {name} is not in it")
    vectors: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return vectors


SKIP_EXTRA = pytest.mark.skip(
    reason=f"extra corpora not run: {EXTRA_ENV} is not set (docs/testing.md)"
)
