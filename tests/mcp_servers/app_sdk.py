"""Apps written with the official MCP Apps SDK, as their authors ship them: one HTML file with
``@modelcontextprotocol/ext-apps``'s ``app-with-deps`` build inlined (the npm devDependency in
node_modules; nothing is fetched).

``app_html(body, script)`` puts the SDK and the app's own script in one ``<script
type="module">``: the SDK's final ``export{qB as App, ...}`` becomes local bindings (``const
App = qB, ...``), so the script uses ``App`` as if it had imported it.
"""

from __future__ import annotations

import re
from functools import cache
from html import escape
from pathlib import Path

SDK = (
    Path(__file__).resolve().parents[2]
    / "node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"
)
_EXPORT = re.compile(r"export\s*\{([^}]*)\}\s*;?\s*$")


@cache
def sdk_inline() -> str:
    """app-with-deps with its export statement turned into local bindings."""
    text = SDK.read_text(encoding="utf-8")
    match = _EXPORT.search(text)
    if match is None:
        raise RuntimeError(f"{SDK}: no final export statement")
    bindings = []
    for item in match.group(1).split(","):
        local, _, exported = item.strip().partition(" as ")
        bindings.append(f"{(exported or local).strip()} = {local.strip()}")
    return f"{text[: match.start()]}\nconst {', '.join(bindings)};\n"


def app_html(body: str, script: str, *, title: str = "app") -> str:
    """An app's HTML: ``body`` as is, then the SDK and ``script`` in one module script."""
    return (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{escape(title)}</title></head>'
        f'<body>{body}<script type="module">\n{sdk_inline()}\n{script}\n</script></body></html>'
    )
