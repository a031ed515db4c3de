"""Agent Markdown to sanitized HTML (S6, H15, L2): the policy, and the attack corpora.

The policy tests name each decision of ``_markdown.py``. The corpus tests render every XSS
vector and every Markdown-shaped vector of the project's own (tests/vectors/), and of the extra
corpora when ``LINEUP_EXTRA_CORPORA`` names them, through the real pipeline and read the
*output* back with the standard library's HTML parser, independent of
markdown-it-py and nh3: only allowlisted tags and attributes, no event handler, links only
http/https/mailto (as a browser would parse the URL), images only data: URLs of raster types.
"""

from __future__ import annotations

import json
import re
from html import escape as html_escape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineup_jupyter import Host
from lineup_jupyter.core import _markdown
from lineup_jupyter.core._markdown import render_markdown
from lineup_jupyter.protocol import rules

from ..conftest import envelope, examples
from ..vectors import extra_corpus
from ..vectors import markdown as markdown_vectors
from ..vectors import xss as xss_vectors

REPO = Path(__file__).resolve().parents[2]
LINK_SCHEMES = {"http", "https", "mailto"}  # H15, written out: not read from the code under test
IMAGE_SOURCE = re.compile(rules.MARKDOWN_IMAGE_PATTERN)
REL = "noopener noreferrer nofollow"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
# What a browser's URL parser drops before it reads the scheme (WHATWG URL: leading and
# trailing C0 controls and spaces, and every tab or newline anywhere).
_URL_EDGES = "".join(chr(c) for c in range(0x21))
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")


# ---- an independent reading of the output -------------------------------------------------


class Inspector(HTMLParser):
    """Collects every way an HTML string breaks the H15 allowlist, as the browser reads it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)  # attribute values as the browser sees them
        self.problems: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag not in rules.MARKDOWN_TAGS:
            self.problems.append(f"tag <{tag}>")
            return
        allowed = rules.MARKDOWN_ATTRIBUTES.get(tag, ())
        names = [name for name, _ in attrs]
        if len(set(names)) != len(names):
            self.problems.append(f"<{tag}> repeats an attribute: {names}")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"event handler {name} on <{tag}>")
            if name not in allowed:
                self.problems.append(f"attribute {name} on <{tag}>")
            self._check_value(tag, name, value or "")
        if tag == "a":
            given = dict(attrs)
            if given.get("rel") != REL or given.get("target") != "_blank":
                self.problems.append(f"link without rel/target: {attrs}")

    handle_startendtag = handle_starttag

    def _check_value(self, tag: str, name: str, value: str) -> None:
        if tag == "a" and name == "href":
            url = _TAB_OR_NEWLINE.sub("", value.strip(_URL_EDGES))
            scheme = _SCHEME.match(url)
            if scheme is None or scheme.group(1).lower() not in LINK_SCHEMES:
                self.problems.append(f"href {value!r}")
        elif tag == "img" and name == "src" and not IMAGE_SOURCE.fullmatch(value):
            self.problems.append(f"img src {value[:80]!r}")
        elif name == "rel" and value != REL:
            self.problems.append(f"rel {value!r}")
        elif name == "target" and value != "_blank":
            self.problems.append(f"target {value!r}")

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"comment {data[:40]!r}")

    def handle_decl(self, decl: str) -> None:
        self.problems.append(f"declaration {decl[:40]!r}")

    def handle_pi(self, data: str) -> None:
        self.problems.append(f"processing instruction {data[:40]!r}")

    def unknown_decl(self, data: str) -> None:
        self.problems.append(f"declaration {data[:40]!r}")


def problems_in(html: str) -> list[str]:
    inspector = Inspector()
    inspector.feed(html)
    inspector.close()
    return inspector.problems


def tags_in(html: str) -> list[str]:
    inspector = Inspector()
    inspector.feed(html)
    inspector.close()
    return inspector.tags


def attributes_of(html: str, tag: str) -> list[dict[str, str | None]]:
    found: list[dict[str, str | None]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, name: str, attrs: list[tuple[str, str | None]]) -> None:
            if name == tag:
                found.append(dict(attrs))

    Collect().feed(html)
    return found


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ('<a href="javascript:alert(1)" target="_blank" rel="' + REL + '">x</a>', "href"),
        ('<a href=" java\tscript:alert(1)" target="_blank" rel="' + REL + '">x</a>', "href"),
        ('<a href="/tree" target="_blank" rel="' + REL + '">x</a>', "href"),
        ('<a href="https://x.org">x</a>', "link without rel/target"),
        ('<img src="https://tracker.example/p.gif">', "img src"),
        ('<img src="data:image/svg+xml;base64,PHN2Zz4=">', "img src"),
        ("<p onclick=x>", "event handler onclick"),
        ('<p class="x">', "attribute class"),
        ("<div>", "tag <div>"),
        ("<svg/onload=x>", "tag <svg>"),
        ("<!-- hidden -->", "comment"),
    ],
)
def test_the_inspector_catches_what_it_looks_for(html: str, expected: str) -> None:
    """The corpus tests below can fail: the independent check flags each kind of breach."""
    assert any(p.startswith(expected) for p in problems_in(html)), problems_in(html)


def test_the_inspector_passes_allowed_output() -> None:
    html = (
        '<p><a href="mailto:a@example.org" title="t" target="_blank" rel="' + REL + '">m</a>'
        '<img src="data:image/png;base64,iVBORw0KGgo=" alt="a"></p><ol start="3"><li>x</li></ol>'
    )
    assert problems_in(html) == []


# ---- the policy (H15) ---------------------------------------------------------------------


def test_H15_tables_are_rendered() -> None:
    html = render_markdown("| a | b |\n|---|---|\n| 1 | 2 |")
    assert tags_in(html) == ["table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td"]
    assert "|" not in html


def test_H15_strikethrough_is_rendered() -> None:
    assert render_markdown("~~gone~~") == "<p><s>gone</s></p>\n"


def test_H15_commonmark_structure_survives() -> None:
    html = render_markdown(
        "# T\n\n> q\n\n3. a\n4. b\n\n- x\n\n---\n\n`c` **b** *e*\n\n```py\nx<y\n```"
    )
    assert tags_in(html) == [
        "h1", "blockquote", "p", "ol", "li", "li", "ul", "li", "hr", "p", "code", "strong", "em",
        "pre", "code",
    ]  # fmt: skip
    assert attributes_of(html, "ol") == [{"start": "3"}]
    assert "x&lt;y" in html
    assert "class" not in html  # the fence's info string does not become a class


@pytest.mark.parametrize(
    "markdown",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "hi <b onclick=alert(1)>b</b>",
        '<a href="javascript:alert(1)">x</a>',
        "<!-- comment -->",
        "<div>\n\n**md**\n\n</div>",
    ],
)
def test_H15_raw_html_arrives_as_text(markdown: str) -> None:
    """Raw HTML is off: every tag the agent wrote is escaped, none is parsed."""
    html = render_markdown(markdown)
    assert set(tags_in(html)) <= {"p", "strong"}
    assert "&lt;" in html
    assert problems_in(html) == []


@pytest.mark.parametrize(
    "markdown",
    [
        "[j](javascript:alert(1))",
        "[j](JaVaScRiPt:alert(1))",
        "[j](java&#115;cript:alert(1))",
        "[v](vbscript:msgbox(1))",
        "[d](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "[d](data:image/png;base64,iVBORw0KGgo=)",  # a data: image is fine as an image only
        "[f](file:///etc/passwd)",
        "<javascript:alert(1)>",
        "[r]: javascript:alert(1)\n\n[x][r]",
    ],
)
def test_H15_dangerous_link_schemes_lose_their_link(markdown: str) -> None:
    html = render_markdown(markdown)
    assert all("href" not in a for a in attributes_of(html, "a"))
    assert problems_in(html) == []


@pytest.mark.parametrize("markdown", ["[rel](/tree/secret.ipynb)", "[rel](secret)", "[f](#top)"])
def test_H15_relative_and_fragment_links_lose_their_href(markdown: str) -> None:
    """A relative link would resolve against the Jupyter server's own URL."""
    html = render_markdown(markdown)
    [link] = attributes_of(html, "a")
    assert "href" not in link
    assert link["rel"] == REL  # still a link element, inert


def test_H15_protocol_relative_links_lose_their_href() -> None:
    [link] = attributes_of(render_markdown("[p](//evil.example/x)"), "a")
    assert "href" not in link


@pytest.mark.parametrize(
    ("markdown", "href"),
    [
        ("[m](mailto:ada@example.org)", "mailto:ada@example.org"),
        ("<mailto:ada@example.org>", "mailto:ada@example.org"),
        ("<ada@example.org>", "mailto:ada@example.org"),
        ('[h](https://example.org/a?b=1 "Title")', "https://example.org/a?b=1"),
        ("[h](http://example.org)", "http://example.org"),
        ("<https://example.org>", "https://example.org"),
    ],
)
def test_H15_http_https_mailto_links_are_kept_with_rel_and_target(markdown: str, href: str) -> None:
    [link] = attributes_of(render_markdown(markdown), "a")
    assert link["href"] == href
    assert link["rel"] == "noopener noreferrer nofollow"
    assert link["target"] == "_blank"


def test_H15_link_title_is_kept_and_escaped() -> None:
    [link] = attributes_of(render_markdown('[h](https://example.org "a \\" onclick=x")'), "a")
    assert link["title"] == 'a " onclick=x'
    assert "onclick" not in link


def test_H15_rel_and_target_from_the_agent_are_not_taken() -> None:
    """Markdown cannot set them, and raw HTML that tries arrives as text."""
    html = render_markdown('<a href="https://x.org" rel="opener" target="_self">x</a>')
    assert attributes_of(html, "a") == []


def test_H15_remote_image_becomes_a_link() -> None:
    """No tracking pixel: a remote image is shown as a link to it, never loaded."""
    html = render_markdown("![pixel](https://tracker.example/p.gif?u=1)")
    assert attributes_of(html, "img") == []
    [link] = attributes_of(html, "a")
    assert link["href"] == "https://tracker.example/p.gif?u=1"
    assert ">pixel</a>" in html


def test_H15_relative_image_becomes_an_inert_link() -> None:
    html = render_markdown("![logo](static/logo.png)")
    assert attributes_of(html, "img") == []
    assert all("href" not in a for a in attributes_of(html, "a"))


@pytest.mark.parametrize("kind", ["png", "gif", "jpeg", "webp"])
def test_H15_data_image_of_a_raster_type_is_kept(kind: str) -> None:
    source = f"data:image/{kind};base64,iVBORw0KGgo="
    [image] = attributes_of(render_markdown(f"![chart]({source})"), "img")
    assert image == {"src": source, "alt": "chart"}


@pytest.mark.parametrize(
    "source",
    [
        "data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+",
        "data:image/svg+xml,%3Csvg%20onload=alert(1)%3E",
        "data:image/png,not-base64",
        "data:text/html;base64,PHNjcmlwdD4=",
    ],
)
def test_H15_other_data_urls_are_not_images(source: str) -> None:
    html = render_markdown(f"![x]({source})")
    assert attributes_of(html, "img") == []
    assert problems_in(html) == []


def test_H15_image_alt_text_is_escaped() -> None:
    html = render_markdown('![a" onerror="alert(1)](data:image/png;base64,AAAA)')
    [image] = attributes_of(html, "img")
    assert image["alt"] == 'a" onerror="alert(1)'
    assert set(image) == {"src", "alt"}


def test_S6_plain_text_component_keeps_the_text_verbatim() -> None:
    """L2, S6: text is inserted as text by the browser, so the kernel leaves it untouched."""
    host = Host(conversation_id="conv_01")
    text = '<script>alert(1)</script> **not bold** [x](javascript:y) &amp; "q"\n  indented'
    body = {"component_id": "t", "kind": "text", "text": text}
    assert host.receive(envelope("component.show", body)) is None
    view = host.components.get("t").to_view()
    assert view["text"] == text
    assert "html" not in view


# ---- the corpora (S6) -----------------------------------------------------------------------


def assert_every_output_is_allowed(vectors: list[dict[str, Any]]) -> dict[str, str]:
    """Render each payload; return the outputs; fail naming every vector whose output breaks
    the allowlist."""
    outputs = {vector["id"]: render_markdown(vector["payload"]) for vector in vectors}
    failures = {key: problems_in(html) for key, html in outputs.items()}
    failures = {key: found for key, found in failures.items() if found}
    assert failures == {}, (
        f"{len(failures)} vectors got through: {dict(list(failures.items())[:20])}"
    )
    return outputs


def check_xss_vectors(vectors: list[dict[str, Any]]) -> None:
    outputs = assert_every_output_is_allowed(vectors)
    # Raw HTML is off, so none of these tags can come from the payloads' own markup.
    made = {tag for html in outputs.values() for tag in tags_in(html)}
    assert made <= set(rules.MARKDOWN_TAGS)
    assert "script" not in made and "iframe" not in made and "svg" not in made


def check_markdown_vectors(vectors: list[dict[str, Any]]) -> None:
    outputs = assert_every_output_is_allowed(vectors)
    # the vectors have both kinds of link: the kept ones are http(s)/mailto, the rest lost href
    hrefs = [a.get("href") for html in outputs.values() for a in attributes_of(html, "a")]
    assert any(h is not None for h in hrefs) and any(h is None for h in hrefs)
    # the ones that would load something (remote images) render no remote image
    remote = [v for v in vectors if "network" in v["expect"]]
    assert len(remote) >= 3
    for vector in remote:
        html = render_markdown(vector["payload"])
        assert all(
            IMAGE_SOURCE.fullmatch(image.get("src") or "") for image in attributes_of(html, "img")
        ), vector["id"]


def test_S6_the_own_vectors_cover_every_class() -> None:
    """The classes docs/testing.md lists, each with vectors (a refactor that drops a section of
    tests/vectors/ fails here, not silently)."""
    assert sorted(
        [
            "CSS", "DOM clobbering", "context breakout", "dangling markup", "event handler",
            "frames, embeds, meta and SVG animation", "mutation (parser differential)",
            "polyglot", "script URL", "script element",
        ]
    ) == xss_vectors.TECHNIQUES  # fmt: skip
    assert sorted(
        [
            "autolink", "code span / fence", "entities in text", "host-specific", "image",
            "inline link destination", "nested in Markdown structure", "raw HTML",
            "reference link / definition",
        ]
    ) == markdown_vectors.TECHNIQUES  # fmt: skip
    assert len(xss_vectors.VECTORS) >= 400 and len(markdown_vectors.VECTORS) >= 170


def test_S6_the_inspector_flags_the_own_vectors_inserted_raw() -> None:
    """The control: the same payloads put into a page as they are, with no pipeline, break the
    allowlist (all but the few that are plain text or Markdown until parsed)."""
    raw = [v for v in xss_vectors.VECTORS if problems_in(v["payload"])]
    assert len(raw) >= 0.95 * len(xss_vectors.VECTORS)
    html = [v for v in markdown_vectors.VECTORS if v["technique"] == "raw HTML"]
    assert all(problems_in(v["payload"]) for v in html), [v["id"] for v in html]


def test_S6_every_xss_vector_renders_to_allowed_html_only() -> None:
    check_xss_vectors(xss_vectors.VECTORS)


def test_S6_every_markdown_vector_renders_to_allowed_html_only() -> None:
    check_markdown_vectors(markdown_vectors.VECTORS)


def test_S6_every_xss_vector_of_the_extra_corpora_renders_to_allowed_html_only() -> None:
    check_xss_vectors(extra_corpus("xss-vectors.json"))


def test_S6_every_markdown_vector_of_the_extra_corpora_renders_to_allowed_html_only() -> None:
    check_markdown_vectors(extra_corpus("markdown-vectors.json"))


# ---- comrak's fixed forms, rewritten after it (H15) ---------------------------------------


def test_H15_remote_image_title_goes_to_its_link() -> None:
    html = render_markdown('![chart](https://example.org/c.png "Q3")')
    assert attributes_of(html, "img") == []
    [link] = attributes_of(html, "a")
    assert link["href"] == "https://example.org/c.png" and link["title"] == "Q3"


@pytest.mark.parametrize(
    "markdown",
    [
        '`<img src="https://t.example/p.gif" alt="a" />`',
        '<img src="https://t.example/p.gif" alt="a" />',
        '```\n<img src="https://t.example/p.gif" alt="a" />\n<del>x</del>\n```',
        "<del>x</del> `<del>`",
    ],
)
def test_H15_image_and_strikethrough_forms_written_by_the_agent_stay_text(markdown: str) -> None:
    """The rewrite of comrak's <img> and <del> only ever sees comrak's own tags: the agent's
    raw HTML and code are escaped before it, so they stay text."""
    html = render_markdown(markdown)
    assert attributes_of(html, "a") == [] and attributes_of(html, "img") == []
    assert set(tags_in(html)) <= {"p", "code", "pre"}
    assert "&lt;" in html


# ---- the same structure as markdown-it-py on the CommonMark spec ---------------------------

SPEC = json.loads((REPO / "tests" / "fixtures" / "commonmark-spec-0.31.2.json").read_text("utf-8"))
# The examples whose tag sequence differs from markdown-it-py's (the renderer before issue 16),
# all for one reason, kept in docs/components.md: comrak recognises raw HTML where CommonMark
# says it is HTML and, with RenderOptions.escape, shows it exactly as written, while
# markdown-it-py with raw HTML off never recognised it and read it as Markdown. So an HTML
# block is shown as text outside any <p>, with no Markdown parsed inside it (the spec's "HTML
# blocks", and comments that separate lists, 308-309); an inline tag is shown as written, where
# markdown-it-py found emphasis, a code span, a link, a hard break, a backslash escape or an
# entity inside its attribute text (21, 31, 344, 475-477, 524, 536, 642-643).
# The spec's "HTML blocks" are 148-191; these five give the same tags either way.
HTML_BLOCKS = frozenset(range(148, 192)) - {168, 175, 176, 185, 187}
INLINE_HTML = frozenset((21, 31, 344, 475, 476, 477, 524, 536, 642, 643))
COMMENT_BLOCKS = frozenset((308, 309))


def previous_renderer() -> Any:
    """markdown-it-py as configured before issue 16, remote images as links, then the same
    Cleaner: the reference structure."""
    from markdown_it import MarkdownIt
    from markdown_it.common.utils import escapeHtml

    from lineup_jupyter.core._markdown import _CLEANER

    def image(self: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
        token = tokens[index]
        source = str(token.attrGet("src") or "")
        alt = self.renderInlineAsText(token.children or [], options, env)
        if IMAGE_SOURCE.fullmatch(source):
            return f'<img src="{escapeHtml(source)}" alt="{escapeHtml(alt)}">'
        return f'<a href="{escapeHtml(source)}">{escapeHtml(alt or source)}</a>'

    parser = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    parser.add_render_rule("image", image)
    return lambda markdown: _CLEANER.clean(parser.render(markdown))


def test_H15_commonmark_spec_examples_keep_their_structure() -> None:
    """Every one of the 652 examples of CommonMark 0.31.2 renders to the same tag sequence as
    with markdown-it-py, except the documented raw-HTML ones above; all pass the allowlist."""
    examples = SPEC["examples"]
    assert len(examples) == 652
    before = previous_renderer()
    differ = set()
    for example in examples:
        html = render_markdown(example["markdown"])
        assert problems_in(html) == [], example["example"]
        if tags_in(html) != tags_in(before(example["markdown"])):
            differ.add(example["example"])
    assert differ == HTML_BLOCKS | INLINE_HTML | COMMENT_BLOCKS
    assert {e["example"] for e in examples if e["section"] == "HTML blocks"} >= HTML_BLOCKS


# ---- never a crash (H15, issue 16) ---------------------------------------------------------

FUZZ = settings(
    max_examples=examples(300),
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# Every code point, lone surrogates and control characters included.
ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=200)
# Markdown's own syntax, URLs and HTML in pieces, so the parser's rarer paths are reached.
PIECES = st.sampled_from(
    [
        "*", "**", "_", "~~", "`", "```", "    ", "\t", "\n", "\n\n", "> ", "- ", "1. ", "# ",
        "|", "|---|", ":-:", "[", "]", "(", ")", "![", "](", "]: ", "<", ">", "\\", "&", "&#",
        ";", "&#65534;", "&#0;", "\x00", "\ufffe", "\ud800", "javascript:", "JaVa\tScRiPt:",
        "data:image/png;base64,", "data:text/html,", "http://", "https://a.example/",
        "mailto:", "//", "#x", '"', "'", "<img src=x onerror=alert(1)>", "<script>", "</del>",
        '<img src="https://t.example/p" alt="a" />', "<!--", "-->", "<a href=", "x", "é", "😀",
    ]
)  # fmt: skip
MARKDOWNISH = st.lists(PIECES, max_size=60).map("".join)


@FUZZ
@given(markdown=st.one_of(ANY_TEXT, MARKDOWNISH))
def test_H15_no_text_crashes_the_renderer_or_escapes_the_allowlist(markdown: str) -> None:
    html = render_markdown(markdown)
    assert isinstance(html, str)
    assert problems_in(html) == []
    assert "could not be rendered" not in html  # the real libraries take every text


def test_H15_a_lone_surrogate_becomes_a_replacement_character() -> None:
    """Neither Rust library can hold one (I-JSON refuses it on the wire, H2; an in-kernel agent
    can still pass one): it is replaced, the rest rendered as usual."""
    assert render_markdown("**a\ud800b**") == "<p><strong>a\ufffdb</strong></p>\n"


class PanicException(BaseException):
    """What PyO3 raises for a Rust panic: a BaseException named so, in module pyo3_runtime,
    created on the first panic and not importable (so this stand-in has its exact shape)."""


PanicException.__module__ = "pyo3_runtime"


def panicking(*args: Any, **kwargs: Any) -> str:
    raise PanicException("index out of bounds: the len is 3 but the index is 7")


def failing(*args: Any, **kwargs: Any) -> str:
    raise ValueError("nh3 refused")


def assert_failure_notice(html: str, markdown: str) -> None:
    assert html.startswith("<p><strong>This Markdown could not be rendered")
    assert problems_in(html) == []
    assert tags_in(html) == ["p", "strong", "pre", "code"]
    text = html.split("<code>", 1)[1].rsplit("</code>", 1)[0]
    assert text == html_escape(re.sub("[\ud800-\udfff]", "\ufffd", markdown))


@FUZZ
@given(markdown=st.one_of(ANY_TEXT, MARKDOWNISH))
def test_H15_a_rust_panic_in_the_parser_gives_the_text_escaped_not_a_crash(markdown: str) -> None:
    """A panic (a BaseException) in comrak: the notice and the text as written, escaped."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_markdown.comrak, "render_markdown", panicking)
        html = render_markdown(markdown)
    assert_failure_notice(html, markdown)


@pytest.mark.parametrize("raises", [panicking, failing])
def test_H15_a_failure_of_the_sanitizer_gives_the_text_escaped_not_a_crash(
    raises: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Cleaner:
        clean = staticmethod(raises)

    monkeypatch.setattr(_markdown, "_CLEANER", Cleaner())
    markdown = "<script>alert(1)</script> **b** \ud800"
    assert_failure_notice(render_markdown(markdown), markdown)
    assert "could not be rendered" in caplog.text  # and the developer hears of it


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_H15_an_interrupt_is_not_taken_for_a_failure(
    stop: type[BaseException], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> str:
        raise stop

    monkeypatch.setattr(_markdown.comrak, "render_markdown", interrupted)
    with pytest.raises(stop):
        render_markdown("x")
