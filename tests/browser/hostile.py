"""Helpers for test_hostile.py: the hostile surface bundles, the kernel-side code that opens
each bundle and reports what the host accepted and refused, and the page-side probes.

The bundles are the project's own (tests/vectors/hostile_surfaces.py), plus, when
``LINEUP_EXTRA_CORPORA`` names a folder with a ``hostile-surfaces.json`` of the same shape, that
corpus's bundles as an extra run (ids prefixed ``corpus-``). A bundle's class (its id without
the prefix) picks what it may achieve (test_hostile.SPECS). Placeholders are filled with the
canary's addresses and the instance ids used here. Bundles call ``probe(key, value)`` to report
what an attempt did; each bundle's js is preceded by one that writes ``PROBE ["instance", key,
value]`` to the console (read from the page, never from a frame that may be stuck), and by a
listener that probes its uncaught errors as "uncaught".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..vectors import extra_corpus_or_empty
from ..vectors.hostile_surfaces import BUNDLES as OWN_BUNDLES

VICTIM = "victim.surface.01"
CONVERSATION = "conv_hostile"
AGENT = "agent_hostile"


EXTRA_PREFIX = "corpus-"


def instance_of(bundle_id: str) -> str:
    return f"hostile.{bundle_id}"


def class_of(bundle_id: str) -> str:
    """The class of attack a bundle belongs to: what test_hostile.SPECS is keyed by."""
    return bundle_id.removeprefix(EXTRA_PREFIX)


def own_bundles() -> list[dict[str, Any]]:
    return list(OWN_BUNDLES)


def extra_bundles() -> list[dict[str, Any]]:
    """The extra corpus's bundles, ids prefixed so they never collide with ours; [] if unset."""
    return [
        {**bundle, "id": EXTRA_PREFIX + bundle["id"]}
        for bundle in extra_corpus_or_empty("hostile-surfaces.json")
    ]


PROBE_PRELUDE = (
    "const probe = (k, v) => { let s; try { s = JSON.stringify(['{{INSTANCE}}', k, v]); } "
    "catch (e) { s = JSON.stringify(['{{INSTANCE}}', k, String(v)]); } "
    "console.log('PROBE ' + s); };\n"
    "window.addEventListener('error', (e) => probe('uncaught', String(e.message).slice(0, 200)));\n"
)


def substitute(
    text: str, *, canary_url: str, canary_port: int, stun_port: int, instance: str
) -> str:
    return (
        text.replace("{{CANARY}}", canary_url)
        .replace("{{CANARY_PORT}}", str(canary_port))
        .replace("{{STUN_PORT}}", str(stun_port))
        .replace("{{VICTIM_INSTANCE}}", VICTIM)
        .replace("{{INSTANCE}}", instance)
    )


def prepare(
    bundle: dict[str, Any], *, canary_url: str, canary_port: int, stun_port: int
) -> dict[str, Any]:
    """The bundle as ui.open will carry it: placeholders filled, the probe function first."""
    instance = instance_of(bundle["id"])

    def fill(text: str) -> str:
        return substitute(
            text,
            canary_url=canary_url,
            canary_port=canary_port,
            stun_port=stun_port,
            instance=instance,
        )

    out = {
        "id": bundle["id"],
        "instance": instance,
        "app_id": "com.lineup.hostile." + bundle["id"].lower(),
        "html": fill(bundle["html"]),
        "css": fill(bundle["css"]),
        "js": fill(PROBE_PRELUDE + bundle["js"]),
    }
    for key in ("html", "css", "js"):
        assert "{{" not in out[key], f"{bundle['id']}: a placeholder is left in its {key}"
    return out


# The victim: a benign surface open next to every hostile one. It logs every message it
# receives other than the host's own ping/theme/state (from its parent), and its button sends
# 'victim.click' so the test can prove it still answers.
VICTIM_HTML = "<button id=b style='font-size:20px'>victim</button><pre id=log></pre>"
VICTIM_JS = """
const log = document.getElementById('log');
window.addEventListener('message', (e) => {
  const d = e.data;
  const host = e.source === parent && d && d.namespace === 'lineup.surface.v1'
    && ['ping', 'theme', 'state'].includes(d.type);
  if (!host) log.textContent += 'MSG ' + JSON.stringify(d).slice(0, 200) + '\\n';
});
let n = 0;
document.getElementById('b').onclick = () => LineUpSurface.event('victim.click', {n: ++n});
"""

KERNEL_SETUP = f"""\
import json
from pathlib import Path
from lineup_jupyter import Host

BUNDLES = {{b["id"]: b for b in json.loads(Path("hostile-bundles.json").read_text())}}
VICTIM = {VICTIM!r}
host = Host(conversation_id={CONVERSATION!r}, history_size=100000)
agent = host.connect_agent({AGENT!r})
agent.open(VICTIM, app_id="com.lineup.test.victim", version="1.0.0",
           html={VICTIM_HTML!r}, js={VICTIM_JS!r})

def hostile_open(bundle_id):
    b = BUNDLES[bundle_id]
    since = host.history[-1].seq
    agent.open(b["instance"], app_id=b["app_id"], version="1.0.0",
               html=b["html"], css=b["css"], js=b["js"])
    print(since)

def hostile_report(since):
    accepted, refused, problems = [], [], []
    for r in host.history:
        if r.seq <= since:
            continue
        if r.kind == "refused":
            m = r.message if isinstance(r.message, dict) else {{}}
            e = r.error or {{}}
            refused.append({{"instance": m.get("instance_id"), "code": e.get("code"),
                            "rule": e.get("rule"), "path": e.get("path")}})
        elif r.kind == "handler_error":
            problems.append(r.error)
        elif r.direction == "to_agent" and r.envelope["type"] == "lineup.v1.ui.event":
            p = r.envelope["payload"]
            text = json.dumps(p["data"])
            data = p["data"] if len(text) <= 2000 else {{"__bytes__": len(text)}}
            accepted.append({{"instance": p["instance_id"], "event": p["event"], "data": data,
                             "secret": "TOPSECRET" in text}})
    print(json.dumps({{"accepted": accepted, "refused": refused, "problems": problems,
                      "last": host.history[-1].seq, "open": list(host.surfaces)}}))

def hostile_close(instance_id):
    if host.surfaces.get(instance_id) is not None:
        agent.close(instance_id, reason="test done")
    print(json.dumps(list(host.surfaces)))

host
"""

# Runs code in the notebook's kernel without adding a cell (the notebook stays one cell long,
# so the host's view never scrolls away); returns the outputs as nbformat-like dicts.
RUN_CODE = """async ([name, code]) => {
  let panel = null;
  for (const w of window.jupyterapp.shell.widgets('main')) {
    if (w?.context?.path === name && w.content?.model) panel = w;
  }
  if (!panel) throw new Error(`notebook ${name} is not open`);
  const kernel = panel.sessionContext.session.kernel;
  const future = kernel.requestExecute({ code, store_history: false, stop_on_error: false });
  const out = [];
  future.onIOPub = (msg) => {
    const t = msg.header.msg_type, c = msg.content;
    if (t === 'stream') out.push({ output_type: 'stream', text: c.text });
    if (t === 'error') {
      out.push({ output_type: 'error', ename: c.ename, evalue: c.evalue, traceback: c.traceback });
    }
    if (t === 'execute_result' || t === 'display_data') out.push({ output_type: t, data: c.data });
  };
  await future.done;
  return out;
}"""

# Planted in the notebook page once: a secret the surfaces must not read, a marker that must
# not change, an input for the focus test, and a heartbeat that measures the page's longest
# stall (a frozen page would show a long gap).
PAGE_SETUP = """() => {
  window.hostSecret = 'TOPSECRET-global';
  const marker = document.createElement('div');
  marker.id = 'host-secret';
  marker.textContent = 'TOPSECRET-marker';
  marker.setAttribute(
    'style', 'position:fixed;top:0;right:0;z-index:100000;background:#ffd;font:10px sans-serif');
  const input = document.createElement('input');
  input.id = 'hostile-keys';
  marker.append(input);
  document.body.append(marker);
  window.__hb = { last: performance.now(), maxGap: 0, gaps: [], beats: 0 };
  setInterval(() => {
    window.__hb.beats += 1;
    const now = performance.now();
    const gap = now - window.__hb.last;
    if (gap > 250) window.__hb.gaps.push([Math.round(now), Math.round(gap)]);
    window.__hb.maxGap = Math.max(window.__hb.maxGap, now - window.__hb.last);
    window.__hb.last = now;
  }, 50);
}"""

PAGE_SNAPSHOT = """() => ({
  url: location.href,
  title: document.title,
  marker: document.getElementById('host-secret')?.innerHTML ?? null,
  markerParent: document.getElementById('host-secret')?.parentNode === document.body,
  globals: ['pwned', 'lineupConfig', 'hostConfig'].map((k) => k + ':' + typeof window[k]),
  polluted: [({}).polluted, ({}).polluted2, Object.prototype.polluted].map(String),
  hosts: document.querySelectorAll('.lineup-host').length,
  victimCards: document.querySelectorAll(
    '.lineup-surface[data-instance-id="victim.surface.01"]').length,
})"""


@dataclass
class Spec:
    """What a bundle needs and what it may achieve.

    ``clicks``: selectors in the surface frame the user clicks (a real click, user activation).
    ``accepted``: the exact event names the host may accept from it, in order (None: checked
    by the test itself). ``refused``: (code, rule) pairs every refusal must be one of, and
    ``min_refused`` how many at least (CSP reports, S3, are always allowed).
    """

    clicks: list[str] = field(default_factory=list)
    wait: float = 1.0
    accepted: list[str] | None = field(default_factory=list)
    refused: set[tuple[str, str]] = field(default_factory=set)
    min_refused: int = 0
    rules: str = "S2, S3"
