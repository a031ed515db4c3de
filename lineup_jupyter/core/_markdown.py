"""Agent Markdown to HTML that may enter the notebook page (S6, H15).

Two independent layers, because either alone has failed somewhere before. comrak (Rust,
CommonMark and GFM) parses with tables and strikethrough on and raw HTML *escaped*, so agent
HTML arrives as text; its own URL check leaves javascript:, vbscript:, file: and non-image data:
links without a target. Then nh3 (ammonia) keeps only the allowlist of ``protocol._rules``: the
tags Markdown produces, ``href``/``title`` on links and ``src``/``alt``/``title`` on images, no
class, id or style. The browser checks the same allowlist again before it inserts anything
(js/components.js).

Links may only be http, https or mailto, never relative (a relative link would resolve
against the Jupyter server's own URL); they open in a new tab with
``rel="noopener noreferrer nofollow"``. Images load only from ``data:`` URLs: a remote image
would tell the agent's author when and where its text is read, so it is shown as a link.

Hostile text must never crash the renderer: a lone surrogate (which neither Rust library can
take) becomes U+FFFD, and any other failure of either library, a Rust panic included (PyO3
raises it as ``PanicException``, a ``BaseException``), gives a notice and the text shown as
written, escaped, instead of an exception in the host.
"""

from __future__ import annotations

import html
import logging
import re

import comrak
import nh3

from ..protocol import rules

__all__ = ["render_markdown"]

logger = logging.getLogger("lineup_jupyter")

_DATA_IMAGE = re.compile(rules.MARKDOWN_IMAGE_PATTERN)
_LINK_SCHEMES = frozenset(rules.MARKDOWN_LINK_SCHEMES)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# comrak writes every image in exactly this form, its attribute values escaped; with raw HTML
# escaped, no "<img" in its output can come from the agent's own markup.
_IMAGE = re.compile(r'<img src="([^"]*)" alt="([^"]*)"( title="[^"]*")? />')
_FAILED = (
    "<p><strong>This Markdown could not be rendered; it is shown as written.</strong></p>\n"
    "<pre><code>{}</code></pre>\n"
)


def _image(match: re.Match[str]) -> str:
    """An image from a data: URL stays an image; any other becomes a link to it."""
    source, alt, title = match.group(1), match.group(2), match.group(3) or ""
    if _DATA_IMAGE.fullmatch(source):
        return f'<img src="{source}" alt="{alt}"{title}>'
    return f'<a href="{source}"{title}>{alt or source}</a>'


def _keep(tag: str, attribute: str, value: str) -> str | None:
    """nh3's last word on each URL: the scheme allowlists differ for links and images."""
    if tag == "img" and attribute == "src":
        return value if _DATA_IMAGE.fullmatch(value) else None
    if tag == "a" and attribute == "href":
        scheme = _SCHEME.match(value)
        return value if scheme and scheme.group(1).lower() in _LINK_SCHEMES else None
    return value


_EXTENSIONS = comrak.ExtensionOptions()
_EXTENSIONS.table = True
_EXTENSIONS.strikethrough = True
_RENDER = comrak.RenderOptions()
_RENDER.escape = True  # raw HTML shown as text, not dropped (unsafe_ stays off)
_PARSE = comrak.ParseOptions()

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


def _render(markdown: str) -> str:
    rendered = comrak.render_markdown(
        markdown, extension_options=_EXTENSIONS, parse_options=_PARSE, render_options=_RENDER
    )
    if "<img " in rendered:
        rendered = _IMAGE.sub(_image, rendered)
    if "<del>" in rendered:  # GFM's strikethrough, as <s> like before (the allowlist's tag)
        rendered = rendered.replace("<del>", "<s>").replace("</del>", "</s>")
    return _CLEANER.clean(rendered)


def _is_panic(error: BaseException) -> bool:
    """PyO3's PanicException: not importable, and a BaseException so that `except Exception`
    does not swallow it; recognised by its type's name and module."""
    kind = type(error)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


def render_markdown(markdown: str) -> str:
    """Sanitized HTML for ``markdown`` (H15): safe to insert into the notebook page. Never
    raises for any text: see the module's docstring."""
    try:
        try:
            return _render(markdown)
        except UnicodeEncodeError:  # a lone surrogate: not text either library can hold
            markdown = _LONE_SURROGATE.sub("\ufffd", markdown)
            return _render(markdown)
    except BaseException as error:
        if not isinstance(error, Exception) and not _is_panic(error):
            raise  # KeyboardInterrupt, SystemExit: the user's or the interpreter's, not ours
        logger.warning("Markdown could not be rendered; shown as text", exc_info=True)
        return _FAILED.format(html.escape(_LONE_SURROGATE.sub("\ufffd", markdown)))
