// The documents an MCP app lives in (MCP Apps, docs/mcp-apps.md): the host's shell frame, as
// for a surface, and in it the app's frame, built from the app's own HTML (a `ui://`
// resource). The HTML is parsed inertly (DOMParser: nothing in it runs or loads), then:
//
// - the CSP meta is the first node of its head, then `<base href="about:srcdoc">` (relative
//   links resolve nowhere) and one script of ours: the realm's guard and the CSP reports;
// - every inline script (classic or module) starts with the same guard, and the CSP admits
//   exactly those scripts by their SHA-256: no 'unsafe-inline', so inline handlers and any
//   script the app makes later do not run, and a copy of one of its scripts in a nested frame
//   brings the guard along (docs/security.md);
// - 'unsafe-eval': eval and new Function only run from a script already running, so in a
//   realm whose first statement was the guard; they add nothing an app's own script could
//   not do (threejs runs its scenes with new Function). Tested as an attack with a control
//   (tests/browser/test_mcp_apps.py test_eval_runs_after_the_guard_and_escapes_nothing);
// - `blob:` scripts: an app's `import()` of a blob: URL it made runs in its realm, after the
//   guard; a nested frame is a new opaque origin, which may not load the app's blob: URLs
//   (measured: "Not allowed to load local resource") and cannot make one before its first
//   script, which runs by hash with the guard first. `data:` stays out: any realm can load it.
//   A `data:` JavaScript URL an app's script spells as a literal (PDF.js's worker, inlined by
//   its bundler) is made a blob: URL of the same text at run time (dataModule);
// - the domains the user granted (never those the app only declared) go into connect-src
//   (connectDomains) and script/style/img/font/media-src (resourceDomains); frames and
//   <base> never (frameDomains, baseUriDomains are refused: they would undo the shell).
//
// The shell's CSP is the app's plus its own relay (a srcdoc frame inherits its parent's
// policy, so a grant must be in both) and frame-src 'none', which stops the app navigating.

import { cspReports, realmGuard } from "./bridge.js";
import { inlineCall, NEVER, shellAround } from "./frames.js";
import { SURFACE_NAMESPACE } from "./protocol.generated.js";
import { cspHash } from "./sha256.js";

/** The directives of `_meta.ui.csp` this host can grant, in the order a grant card shows them. */
export const GRANTABLE = /** @type {const} */ (["connectDomains", "resourceDomains"]);

/**
 * @typedef {{ connectDomains: string[], resourceDomains: string[] }} Grants
 * @typedef {{ srcdoc: string, hashes: string[], scripts: number, sources: Grants,
 *   invalid: Array<{ directive: string, domain: string }> }} AppDocument
 */

// A CSP host source as MCP Apps declares them: a scheme, a host (optionally `*.` for its
// subdomains), an optional port and path, and nothing else. Checked before it is written into
// a policy: a `;` or a quote in a "domain" would add directives of the app's choosing.
const HOST_SOURCE =
  /^(https?|wss?):\/\/(\*\.)?([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(:(\d{1,5}|\*))?(\/[A-Za-z0-9._~%/-]*)?$/;

/**
 * A declared domain as a CSP source, or null when this host will not write it into a policy
 * (no scheme, a wildcard host, characters a source may not have).
 * @param {unknown} domain
 */
export function cspSource(domain) {
  if (typeof domain !== "string" || domain.length > 512) return null;
  const parts = /^([^/]*\/\/[^/]*)(.*)$/s.exec(domain);
  const source = parts ? parts[1].toLowerCase() + parts[2] : domain;
  return HOST_SOURCE.test(source) ? source : null;
}

/**
 * The granted domains this host can write into a policy, and those it cannot.
 * @param {Partial<Record<string, unknown>> | null | undefined} granted
 * @returns {{ sources: Grants, invalid: Array<{ directive: string, domain: string }> }}
 */
export function grantedSources(granted) {
  /** @type {Grants} */
  const sources = { connectDomains: [], resourceDomains: [] };
  const invalid = [];
  for (const directive of GRANTABLE) {
    const list = granted?.[directive];
    for (const domain of Array.isArray(list) ? list : []) {
      const source = cspSource(domain);
      if (source === null) invalid.push({ directive, domain: String(domain) });
      else if (!sources[directive].includes(source)) sources[directive].push(source);
    }
  }
  return { sources, invalid };
}

/**
 * The app frame's policy (and, with the relay's hash added, its shell's).
 * @param {Grants} sources granted domains, already checked (cspSource)
 * @param {string[]} hashes 'sha256-...' of every script the frame may run
 */
export function mcpCsp(sources, hashes) {
  const resources = sources.resourceDomains.join(" ");
  const join = (/** @type {string[]} */ parts) => parts.filter(Boolean).join(" ");
  return [
    "default-src 'none'",
    `script-src ${join([...hashes, "'unsafe-eval'", "blob:", resources])}`,
    `style-src ${join(["'unsafe-inline'", resources])}`,
    `img-src ${join(["data: blob:", resources])}`,
    `font-src ${join(["data:", resources])}`,
    `media-src ${join(["data: blob:", resources])}`,
    `connect-src ${sources.connectDomains.length ? sources.connectDomains.join(" ") : "'none'"}`,
    ...NEVER,
  ].join("; ");
}

/** The guard as the first statement of a script (bridge.js realmGuard: idempotent). */
export const GUARD = inlineCall(realmGuard, { namespace: SURFACE_NAMESPACE, sameRealmParent: true });

/** What an app's script calls instead of spelling a `data:` JavaScript URL (dataModulesAsBlobs). */
export const DATA_MODULE = "__lineupDataModule";

/**
 * Run in the app's realm, after the guard: `window[name](url)` is a blob: URL of the same
 * JavaScript as the `data:` URL `url` (one per URL), which the app's policy lets it import
 * while no other realm can load it. Not a guard: it only lets the app's own code run.
 * @param {{ name: string }} config
 */
export function dataModule(config) {
  const made = new Map();
  const decode = atob;
  const toUrl = URL.createObjectURL;
  Object.defineProperty(window, config.name, {
    value: (/** @type {string} */ url) => {
      let blob = made.get(url);
      if (blob === undefined) {
        const text = decode(url.slice(url.indexOf(",") + 1));
        const bytes = new Uint8Array(text.length);
        for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
        blob = toUrl(new Blob([bytes], { type: "text/javascript" }));
        made.set(url, blob);
      }
      return blob;
    },
  });
}

/** Our own first script of an app's frame: the guard, the CSP reports, dataModule. */
export const FIRST_SCRIPT = [
  GUARD,
  inlineCall(cspReports, { namespace: SURFACE_NAMESPACE }),
  inlineCall(dataModule, { name: DATA_MODULE }),
].join("\n");

// A `data:` JavaScript URL spelled as a string literal, as a bundler inlines a module's URL.
const DATA_MODULE_LITERAL = /(["'])(data:(?:text|application)\/javascript;base64,[A-Za-z0-9+/]+={0,2})\1/g;

/**
 * An app's script with each `data:` JavaScript URL literal made a call that gives a blob: URL
 * of the same text (dataModule): `data:` is no script source here, `blob:` is. Only a quoted
 * literal of base64 is changed; one inside a longer string or a comment would change that
 * text, and such a URL could not be loaded here anyway.
 * @param {string} text
 */
export function dataModulesAsBlobs(text) {
  return text.replace(DATA_MODULE_LITERAL, (_, quote, url) => `${DATA_MODULE}(${quote}${url}${quote})`);
}

/** `type` values of a <script> the browser runs as JavaScript (classic or module). */
const SCRIPT_TYPES = new Set([
  "",
  "module",
  "text/javascript",
  "application/javascript",
  "text/ecmascript",
  "application/ecmascript",
  "application/x-javascript",
  "text/x-javascript",
  "text/jscript",
  "text/livescript",
]);

/**
 * Whether a <script> element is code (not a data block such as JSON). One the browser runs
 * that is not counted here gets no hash, so it does not run either.
 * @param {Element} script
 */
export function runsAsScript(script) {
  return SCRIPT_TYPES.has((script.getAttribute("type") ?? "").trim().toLowerCase());
}

/**
 * An app's script text with the guard first. A directive prologue ("use strict") must stay
 * first to mean anything, so the guard goes right after it.
 * @param {string} text
 */
export function guarded(text) {
  const prologue = /^(\s*(['"])use strict\2\s*;?)/.exec(text);
  if (!prologue) return `${GUARD}\n${text}`;
  return `${prologue[1]}\n${GUARD}\n${text.slice(prologue[1].length)}`;
}

/**
 * The app frame's document from the app's HTML and the user's grants.
 * @param {string} html the `ui://` resource's text
 * @param {Partial<Record<string, unknown>> | null | undefined} granted the user's grants
 * @param {(text: string) => Document} [parse] an inert parser (DOMParser in the page)
 * @returns {AppDocument}
 */
export function mcpAppDocument(html, granted, parse = inertParse) {
  const { sources, invalid } = grantedSources(granted);
  const doc = parse(html);
  /** @type {Set<string>} the texts of the scripts we wrote: only these are hashed */
  const ours = new Set([FIRST_SCRIPT]);
  for (const script of Array.from(doc.querySelectorAll("script"))) {
    if (script.hasAttribute("src") || !runsAsScript(script)) continue; // CSP decides / not code
    const text = guarded(dataModulesAsBlobs(script.textContent ?? ""));
    script.textContent = text;
    ours.add(text);
  }
  const head = doc.head;
  const first = doc.createElement("script");
  first.textContent = FIRST_SCRIPT;
  const base = doc.createElement("base");
  base.setAttribute("href", "about:srcdoc");
  const meta = doc.createElement("meta");
  meta.setAttribute("http-equiv", "Content-Security-Policy");
  head.prepend(meta, base, first);
  // Hash what the browser will parse, not what we meant to write: the document is serialised
  // and parsed again, and a script counts only if its text there is one we wrote (a
  // serialisation that split or joined scripts would then run nothing, never something else).
  const hashes = new Set();
  let count = 0;
  for (const script of Array.from(parse(serialise(doc)).querySelectorAll("script"))) {
    const text = script.textContent ?? "";
    if (script.hasAttribute("src") || !ours.has(text)) continue;
    count += 1;
    hashes.add(cspHash(text));
  }
  const list = [...hashes];
  meta.setAttribute("content", mcpCsp(sources, list));
  return { srcdoc: serialise(doc), hashes: list, scripts: count, sources, invalid };
}

/** @param {string} text */
function inertParse(text) {
  return new DOMParser().parseFromString(text, "text/html");
}

/** @param {Document} doc */
function serialise(doc) {
  return `<!DOCTYPE html>${doc.documentElement.outerHTML}`;
}

/**
 * The shell frame's document around an app's frame.
 * @param {AppDocument} app
 * @param {number} perSecond messages the shell passes up each second
 * @param {string} key the shell's secret that marks its own reports (frames.js shellKey)
 */
export function mcpShellDocument(app, perSecond, key) {
  return shellAround(
    { srcdoc: app.srcdoc, title: "MCP app" },
    perSecond,
    (relayHash) => mcpCsp(app.sources, [relayHash, ...app.hashes]),
    key,
  );
}
