"""Markdown-shaped attack vectors written for this project.

Each vector is ``{"id", "technique", "payload", "expect"}``: the same attacks as ``xss.py`` in
Markdown's own syntax (link and image destinations, autolinks, reference definitions, raw
HTML in blocks and inlines, HTML inside tables, lists and quotes, code that must stay text).
``expect`` is what must happen, in words; ``"network"`` in it marks a vector that a naive
renderer would turn into a request (a remote image), which the tests check loads nothing.
"""

from __future__ import annotations

from typing import Any

_SCHEMES = [
    "javascript:alert(7)",
    "JavaScript:alert(7)",
    "javascript&#58;alert(7)",
    "javascript&#x3A;alert(7)",
    "&#106;avascript:alert(7)",
    "java%0ascript:alert(7)",
    "java&#9;script:alert(7)",
    "javascript&colon;alert(7)",
    "vbscript:msgbox(7)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCg3KTwvc2NyaXB0Pg==",
    "data:text/html,<script>alert(7)</script>",
    "file:///etc/passwd",
    "jupyter:kernel/restart",
]

_LINKS = [
    ("inline link destination", "[click]({u})", "no href with a script scheme"),
    ("inline link destination", "[click](<{u}>)", "no href with a script scheme"),
    ("inline link destination", '[click]({u} "title")', "no href with a script scheme"),
    ("inline link destination", "[click](  {u}  )", "no href with a script scheme"),
    ("image", "![pic]({u})", "no img, or a data: raster image only"),
    ("autolink", "<{u}>", "text, or a link without a script scheme"),
    ("reference link / definition", "[click][r]\n\n[r]: {u}", "no href with a script scheme"),
    ("reference link / definition", "[r]\n\n[r]: <{u}> 'title'", "no href with a script scheme"),
    ("reference link / definition", "![pic][p]\n\n[p]: {u}", "no img"),
]

_FIXED = [
    ("inline link destination", "[a](j a v a s c r i p t:alert(7))", "not a link"),
    ("inline link destination", "[a](javascript:alert`7`)", "blocked"),
    ("inline link destination", "[a](\\javascript:alert(7))", "blocked"),
    ("inline link destination", "[a](java\\script:alert(7))", "blocked"),
    ("inline link destination", '[a](https://example.org" onclick="alert(7))', "escaped"),
    (
        "inline link destination",
        '[a](https://example.org "x\\" onmouseover=\\"alert(7)")',
        "title escaped",
    ),
    (
        "inline link destination",
        "[a](/relative/path)",
        "no href: relative URLs resolve to the page",
    ),
    ("inline link destination", "[a](#fragment)", "no href: resolves against the page"),
    ("inline link destination", "[a](//127.0.0.1:9/proto-relative)", "no href"),
    (
        "inline link destination",
        "[![img](data:image/png;base64,AAAA)](javascript:alert(7))",
        "image kept, link dropped",
    ),
    ("image", "![x](https://127.0.0.1:9/track.gif)", "network: no remote image"),
    ("image", "![x](//127.0.0.1:9/track.gif)", "network: no remote image"),
    ("image", '![x](https://127.0.0.1:9/t.png "t") text', "network: becomes a link"),
    ("image", "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoNyk+)", "no svg image"),
    ("image", '![x" onerror="alert(7)](data:image/png;base64,AAAA)', "alt escaped"),
    ("image", '![x](data:image/png;base64,AAAA"onerror="alert(7))', "escaped"),
    ("autolink", '<https://example.org/"onmouseover="alert(7)>', "escaped"),
    ("autolink", "www.example.org/<script>alert(7)</script>", "text"),
    ("autolink", "<mailto:a@example.org?body=<script>>", "text"),
    ("autolink", "https://127.0.0.1:9/a?b=<img src=x onerror=alert(7)>", "text"),
    ("raw HTML", "<script>alert(7)</script>", "text"),
    ("raw HTML", "<div onclick=alert(7)>\n\n**bold**\n\n</div>", "text"),
    ("raw HTML", "text <img src=nope onerror=alert(7)> inline", "text"),
    ("raw HTML", "<iframe src=javascript:alert(7)></iframe>", "text"),
    ("raw HTML", "<details open ontoggle=alert(7)>x</details>", "text"),
    ("raw HTML", "<!-- <img src=nope onerror=alert(7)> -->", "text"),
    ("raw HTML", "<style>*{background:url(//127.0.0.1:9/x)}</style>", "text"),
    ("raw HTML", '<a href="javascript:alert(7)">x</a>', "text"),
    ("raw HTML", "<svg><script>alert(7)</script></svg>", "text"),
    ("raw HTML", "<textarea></textarea><script>alert(7)</script>", "text"),
    ("raw HTML", "*<img src=nope onerror=alert(7)>*", "text inside emphasis"),
    ("raw HTML", "<? alert(7) ?>", "text"),
    ("raw HTML", "<![CDATA[<script>alert(7)</script>]]>", "text"),
    ("raw HTML", "<meta http-equiv=refresh content='0;url=//127.0.0.1:9/'>", "text"),
    (
        "nested in Markdown structure",
        "| a | b |\n|---|---|\n| <img src=x onerror=alert(7)> | [x](javascript:alert(7)) |",
        "table cells escaped",
    ),
    (
        "nested in Markdown structure",
        "- item\n  <script>alert(7)</script>\n- [x](javascript:a)",
        "list items escaped",
    ),
    (
        "nested in Markdown structure",
        "> quote <svg onload=alert(7)>\n> [x](vbscript:a)",
        "quote escaped",
    ),
    ("nested in Markdown structure", "# Title <img src=x onerror=alert(7)>", "heading escaped"),
    (
        "nested in Markdown structure",
        "1. [x](javascript:alert(7))\n   ![y](javascript:alert(8))",
        "ordered list escaped",
    ),
    ("nested in Markdown structure", "~~<b onclick=alert(7)>x</b>~~", "strikethrough escaped"),
    ("nested in Markdown structure", "**[x](javascript:alert(7))**", "strong escaped"),
    ("nested in Markdown structure", "Footnote[^1]\n\n[^1]: <script>alert(7)</script>", "text"),
    ("code span / fence", "`<script>alert(7)</script>`", "stays code"),
    ("code span / fence", "```html\n<img src=x onerror=alert(7)>\n```", "stays code"),
    ("code span / fence", '```" onclick="alert(7)\n<b>x</b>\n```', "info string not a class"),
    ("code span / fence", "    <script>alert(7)</script>", "indented code"),
    ("code span / fence", "``[x](javascript:alert(7))``", "stays code"),
    ("entities in text", "&lt;script&gt;alert(7)&lt;/script&gt;", "text"),
    ("entities in text", "&#60;img src=x onerror=alert(7)&#62;", "text"),
    ("entities in text", "&#x3C;svg onload=alert(7)&#x3E;", "text"),
    ("entities in text", "&ltscript&gtalert(7)&lt/script&gt", "text"),
    ("host-specific", "[open the kernel](/api/kernels)", "no href: the server's own API"),
    ("host-specific", "[a](/lab/tree/secret.ipynb)", "no href"),
    ("host-specific", "<img src=/files/secret.png>", "text"),
    ("host-specific", "{{host.audit.path}} ${document.cookie}", "text"),
]


def _all() -> list[dict[str, Any]]:
    raw = [
        {"technique": technique, "payload": template.format(u=scheme), "expect": expect}
        for technique, template, expect in _LINKS
        for scheme in _SCHEMES
    ]
    raw += [
        {"technique": technique, "payload": payload, "expect": expect}
        for technique, payload, expect in _FIXED
    ]
    return [{"id": f"md-{n:03d}", **vector} for n, vector in enumerate(raw, start=1)]


VECTORS: list[dict[str, Any]] = _all()
TECHNIQUES = sorted({v["technique"] for v in VECTORS})
