"""Whether the built documentation site loads anything from another host (./dev docs runs it).

    python tests/docs_offline.py site

Reads every HTML and CSS file of the site and lists each resource a browser would fetch from
elsewhere on opening a page: a script, stylesheet, icon, font, image, frame or media source
with an absolute or protocol-relative URL, an ``@import`` or ``url()`` in CSS, and a module
``import("https://...")``. Links in the text (``<a href>``) are not loads: they are followed only
when clicked. The one exception is nbconvert's Mermaid loader, which imports Mermaid from a CDN
only when a page holds a Mermaid diagram: allowed when the page has none, reported otherwise.
Exits 1 and prints the loads when there are any.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

REMOTE = re.compile(r"^\s*(?:[a-zA-Z][a-zA-Z0-9+.-]*:)?//", re.ASCII)
# (tag, attribute) pairs a browser fetches on load; <link> only for the rels that fetch.
LOADING = {
    ("script", "src"), ("img", "src"), ("img", "srcset"), ("iframe", "src"), ("embed", "src"),
    ("object", "data"), ("video", "src"), ("video", "poster"), ("audio", "src"),
    ("source", "src"), ("source", "srcset"), ("track", "src"), ("input", "src"),
}  # fmt: skip
LINK_RELS = {"stylesheet", "icon", "preload", "modulepreload", "prefetch", "manifest"}
CSS_URL = re.compile(r"""(?:url\(\s*['"]?|@import\s+['"])([^'")\s]+)""")
JS_IMPORT = re.compile(r"""import\(\s*["'`]((?:https?:)?//[^"'`]+)""")
MERMAID_DIAGRAM = "jp-Mermaid"
MERMAID_CDN = "cdnjs.cloudflare.com/ajax/libs/mermaid"


class _Loads(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_style = False
        self._in_script = False
        self.has_mermaid_diagram = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if MERMAID_DIAGRAM in values.get("class", "").split():
            self.has_mermaid_diagram = True
        for name, value in values.items():
            if (tag, name) in LOADING and _remote_any(value):
                self.found.append(f"<{tag} {name}={value[:120]}>")
            if name == "style":
                self.found += [f"style url({u})" for u in CSS_URL.findall(value) if _remote(u)]
        rels = set(values.get("rel", "").lower().split())
        if tag == "link" and rels & LINK_RELS and _remote(values.get("href", "")):
            self.found.append(f"<link rel={values['rel']} href={values['href'][:120]}>")
        self._in_style = tag == "style"
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.found += [f"<style> url({u})" for u in CSS_URL.findall(data) if _remote(u)]
        if self._in_script:
            self.found += [f"script import({u})" for u in JS_IMPORT.findall(data)]


def _remote(url: str) -> bool:
    return bool(REMOTE.match(url)) and not url.strip().lower().startswith("data:")


def _remote_any(value: str) -> bool:
    """A URL, or a srcset's list of them."""
    return any(_remote(part.strip().split(" ")[0]) for part in value.split(","))


def html_loads(text: str) -> list[str]:
    parser = _Loads()
    parser.feed(text)
    parser.close()
    if parser.has_mermaid_diagram:
        return parser.found
    return [load for load in parser.found if MERMAID_CDN not in load]


def css_loads(text: str) -> list[str]:
    return [f"url({u})" for u in CSS_URL.findall(text) if _remote(u)]


def remote_loads(site: Path) -> list[str]:
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix == ".html":
            loads = html_loads(path.read_text(encoding="utf-8"))
        elif path.suffix == ".css":
            loads = css_loads(path.read_text(encoding="utf-8"))
        else:
            continue
        found += [f"{path.relative_to(site)}: {load}" for load in loads]
    return found


def main(argv: list[str]) -> int:
    site = Path(argv[1] if len(argv) > 1 else "site")
    if not (site / "index.html").is_file():
        print(f"docs_offline: {site} is not a built site (no index.html)", file=sys.stderr)
        return 2
    found = remote_loads(site)
    for load in found:
        print(f"docs_offline: loads from another host: {load}", file=sys.stderr)
    pages = len(list(site.rglob("*.html")))
    print(f"docs_offline: {pages} pages, {len(found)} loads from another host")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
