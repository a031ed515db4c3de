"""Markdown that grows (a streamed answer), rendered again only from its last open block.

``render_markdown`` is used as it is, a black box: the text is cut where what comes before
can no longer change, the part before is rendered once and kept, and each extension renders
only the part after the last cut. A cut is made only where rendering the two parts apart
gives exactly what rendering them together gives (tests/core/test_markdown_stream.py checks it on
the Markdown corpus cut every few characters): at the start of a complete line, at column 0,
after a blank line, outside a fenced code block, that cannot continue what came before (a
list marker would continue a list, an indented line a list item, ``>`` a quote, ``<`` an HTML
block of another renderer). A link reference definition (``[x]: url``, ``]:`` anywhere)
changes links anywhere in the text, so a text with one is always rendered whole.
"""

from __future__ import annotations

from ._markdown import render_markdown

__all__ = ["MarkdownStream"]

_NO_CUT_BEFORE = frozenset(" \t\r\n-+*>0123456789<")


class MarkdownStream:
    """The sanitized HTML of a Markdown text that may grow. ``html`` is always exactly
    ``render_markdown(text)``; ``stable_length`` characters of it never change again."""

    __slots__ = ("_closed_html", "_closed_src", "_tail_html", "_text", "_whole")

    def __init__(self, text: str) -> None:
        self._text = ""
        self._closed_src = 0  # where the part that is rendered again starts, in the text
        self._closed_html = ""  # the HTML of the text before it, final
        self._tail_html = ""
        self._whole = False  # a reference definition: render everything, every time
        self.extend(text)

    @property
    def text(self) -> str:
        return self._text

    @property
    def html(self) -> str:
        return self._closed_html + self._tail_html

    @property
    def stable_length(self) -> int:
        return len(self._closed_html)

    def extends(self, text: str) -> bool:
        """Whether ``text`` is this text with something added."""
        return len(text) >= len(self._text) and text.startswith(self._text)

    def extend(self, text: str) -> None:
        """Take ``text``, which must extend the current text (see ``extends``)."""
        if not self.extends(text):
            raise ValueError("the new text does not extend the old one")
        # "]:" may straddle the old end: look from one character before it
        if not self._whole and "]:" in text[max(0, len(self._text) - 1) :]:
            self._whole = True
            self._closed_src, self._closed_html = 0, ""
        self._text = text
        if not self._whole:
            cut = _last_cut(text, self._closed_src)
            if cut > self._closed_src:
                self._closed_html += render_markdown(text[self._closed_src : cut])
                self._closed_src = cut
        self._tail_html = render_markdown(text[self._closed_src :])


def _last_cut(text: str, start: int) -> int:
    """The last place after ``start`` where the text may be cut (``start`` if none): the
    start of a complete line that begins a new top-level block after a blank line."""
    cut = start
    fence: tuple[str, int] | None = None  # the open fence's character and length
    previous_blank = False
    at = start
    end = len(text)
    while at < end:
        newline = text.find("\n", at)
        if newline < 0:
            break  # the last line is not complete: it may still become anything
        line = text[at:newline]
        first = line[:1]
        if (
            fence is None
            and previous_blank
            and at > start
            and first
            and first not in _NO_CUT_BEFORE
        ):
            cut = at
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if indent <= 3 and stripped[:1] == "<" and fence is None:
            return cut  # an HTML block may span blank lines in another renderer: stop here
        if indent <= 3 and stripped[:3] in ("```", "~~~"):
            mark = stripped[0]
            length = len(stripped) - len(stripped.lstrip(mark))
            rest = stripped[length:]
            if fence is None:
                if mark != "`" or "`" not in rest:
                    fence = (mark, length)
            elif mark == fence[0] and length >= fence[1] and not rest.strip(" \t\r"):
                fence = None
        previous_blank = not line.strip(" \t\r")
        at = newline + 1
    return cut
