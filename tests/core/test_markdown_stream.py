"""Markdown that grows (_markdown_stream.py, H15, H45): rendered again only from its last open
block, and always exactly what rendering the whole text at once gives."""

from __future__ import annotations

import pytest

from lineup_jupyter import render_markdown
from lineup_jupyter.core._markdown_stream import MarkdownStream

from ..vectors import SKIP_EXTRA, extra_corpus_or_empty
from ..vectors import markdown as markdown_vectors

VECTORS = [vector["payload"] for vector in markdown_vectors.VECTORS]
EXTRA = [vector["payload"] for vector in extra_corpus_or_empty("markdown-vectors.json")]

ANSWER = "".join(
    f"## Step {n}\n\nThe data of step {n} came back with **{n * 7} rows**; see "
    f"[the run](https://example.org/run/{n}) for details.\n\n"
    f"- checked {n} sources\n- kept `{n * 3}` rows\n\n"
    f"```python\nrows = fetch(step={n})\n\nprint(rows)\n```\n\n"
    f"| a | b |\n|---|---|\n| {n} | {2 * n} |\n\n"
    "> quoted\nlazily\n\n1. one\n\n2. two\n\n    indented code\n\n***\n\n"
    for n in range(1, 9)
)


def streamed(text: str, step: int) -> MarkdownStream:
    """``text`` given to a stream ``step`` characters at a time, each checked against a whole
    render of the same prefix."""
    stream = MarkdownStream("")
    for end in [*range(0, len(text), step), len(text)]:
        stream.extend(text[:end])
        assert stream.html == render_markdown(text[:end]), repr(text[:end][-120:])
    return stream


@pytest.mark.parametrize("index", range(len(VECTORS)))
def test_h15_each_vector_streamed_renders_as_a_whole(index: int) -> None:
    """Every Markdown vector, cut after every character, renders as the whole text does."""
    streamed(VECTORS[index], 1)


@pytest.mark.parametrize(
    "payload", EXTRA or [pytest.param("", marks=SKIP_EXTRA)], ids=lambda _: "extra"
)
def test_h15_each_extra_corpus_vector_streamed_renders_as_a_whole(payload: str) -> None:
    streamed(payload, 1)


@pytest.mark.parametrize(
    "vectors",
    [VECTORS, pytest.param(EXTRA, marks=() if EXTRA else SKIP_EXTRA)],
    ids=["own", "extra"],
)
def test_h15_the_vectors_as_one_document_streamed_render_as_a_whole(vectors: list[str]) -> None:
    """All vectors one after another (blank lines between: blocks close and are kept), cut
    every few characters: the HTML is always the whole render."""
    streamed("\n\n".join(vectors), 29)
    streamed("\n".join(vectors), 31)


def test_an_answer_keeps_its_closed_blocks_and_renders_only_its_end() -> None:
    """Lists, fences with blank lines, quotes, tables, indented code: cut only where safe,
    and the closed part (stable_length) really is kept."""
    stream = streamed(ANSWER, 7)
    assert stream.stable_length > 0.8 * len(stream.html)
    assert stream.html[: stream.stable_length] == render_markdown(ANSWER)[: stream.stable_length]


def test_a_reference_definition_renders_the_whole_text_every_time() -> None:
    """``[x]: url`` changes links before it: no cut is trusted once one may be there."""
    text = "See [docs][d].\n\nMore text.\n\n[d]: https://example.org/docs\n\nafter\n"
    stream = streamed(text, 1)
    assert stream.stable_length == 0
    assert 'href="https://example.org/docs"' in stream.html


def test_a_text_that_does_not_extend_is_refused() -> None:
    stream = MarkdownStream("abc")
    assert stream.extends("abcd") and not stream.extends("abx")
    with pytest.raises(ValueError, match="does not extend"):
        stream.extend("abx")
