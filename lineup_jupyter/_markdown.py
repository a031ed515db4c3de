"""Agent Markdown to HTML that may enter the notebook page (S6, H15).

Two independent layers, because either alone has failed somewhere before. markdown-it-py
parses CommonMark with raw HTML off (so agent HTML arrives as text), tables and strikethrough
on, and its own link check (no javascript:, vbscript:, file: or non-image data: URLs). Then
nh3 (ammonia) keeps only the allowlist of ``protocol._rules``: the tags Markdown produces,
``href``/``title`` on links and ``src``/``alt``/``title`` on images, no class, id or style. The
browser checks the same allowlist again before it inserts anything (js/components.js).

Links may only be http, https or mailto, never relative (a relative link would resolve
against the Jupyter server's own URL); they open in a new tab with
``rel="noopener noreferrer nofollow"``. Images load only from ``data:`` URLs: a remote image
would tell the agent's author when and where its text is read, so it is shown as a link.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from .protocol import rules

__all__ = ["render_markdown"]

_DATA_IMAGE = re.compile(rules.MARKDOWN_IMAGE_PATTERN)
_LINK_SCHEMES = frozenset(rules.MARKDOWN_LINK_SCHEMES)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def _image(
    self: Any, tokens: Sequence[Token], index: int, options: OptionsDict, env: EnvType
) -> str:
    """An image from a data: URL stays an image; any other becomes a link to it."""
    token = tokens[index]
    source = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    if _DATA_IMAGE.fullmatch(source):
        return f'<img src="{escapeHtml(source)}" alt="{escapeHtml(alt)}">'
    return f'<a href="{escapeHtml(source)}">{escapeHtml(alt or source)}</a>'


def _keep(tag: str, attribute: str, value: str) -> str | None:
    """nh3's last word on each URL: the scheme allowlists differ for links and images."""
    if tag == "img" and attribute == "src":
        return value if _DATA_IMAGE.fullmatch(value) else None
    if tag == "a" and attribute == "href":
        scheme = _SCHEME.match(value)
        return value if scheme and scheme.group(1).lower() in _LINK_SCHEMES else None
    return value


_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_PARSER.add_render_rule("image", _image)

_CLEANER = nh3.Cleaner(
    tags=set(rules.MARKDOWN_TAGS),
    # rel and target are written by nh3 itself (link_rel, set_tag_attribute_values), never
    # taken from the input.
    attributes={
        tag: set(names) - {"rel", "target"} for tag, names in rules.MARKDOWN_ATTRIBUTES.items()
    },
    attribute_filter=_keep,
    link_rel=rules.MARKDOWN_LINK_REL,
    url_schemes={*rules.MARKDOWN_LINK_SCHEMES, "data"},
    url_relative="deny",
    set_tag_attribute_values={"a": {"target": "_blank"}},
    strip_comments=True,
)


def render_markdown(markdown: str) -> str:
    """Sanitized HTML for ``markdown`` (H15): safe to insert into the notebook page."""
    return _CLEANER.clean(_PARSER.render(markdown))
