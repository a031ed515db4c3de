// The two documents a surface lives in, built from small tested pieces (no string soup):
// the host-owned shell frame, and inside it the surface frame whose first node is its CSP (S3).

import { cspReports, exceeds, realmGuard, shellRelay, surfaceBridge } from "./bridge.js";
import { mergePatch } from "./deltas.js";
import { EVENT_NAME_PATTERN, SURFACE_NAMESPACE } from "./protocol.generated.js";
import { cspHash } from "./sha256.js";

/** S2: exactly this, never allow-same-origin, allow-top-navigation, allow-popups, allow-forms. */
export const SANDBOX = "allow-scripts";

/**
 * What a surface's or an MCP app's frame never gets, whatever it was granted: nested frames
 * (a frame's navigation, a fresh realm), workers, plugins, forms, a manifest.
 */
export const NEVER = [
  "frame-src 'none'",
  "child-src 'none'",
  "worker-src 'none'",
  "object-src 'none'",
  "form-action 'none'",
  "manifest-src 'none'",
];

/**
 * S3 and more: no network, no nested frames, no workers, no forms, nothing remote. Scripts:
 * only the one script whose hash is `scriptHash` (the host's guard and bridge, then the
 * bundle's js, as one text): no inline handler, no eval, no other <script>, in this document
 * and in every frame it creates, which inherits the policy (docs/security.md). Stricter than
 * S3's `script-src 'unsafe-inline'`, which it replaces.
 * @param {string} scriptHash a CSP hash source, 'sha256-...'
 */
export function surfaceCsp(scriptHash) {
  return [
    "default-src 'none'",
    "connect-src 'none'",
    "img-src data: blob:",
    "style-src 'unsafe-inline'",
    `script-src ${scriptHash}`,
    "font-src data:",
    "media-src data: blob:",
    ...NEVER,
  ].join("; ");
}

/**
 * The shell runs only its relay; frame-src 'none' blocks the surface navigating. A srcdoc
 * frame inherits its parent's policy on top of its own, so the shell admits the surface's one
 * script too (both policies apply there) and exactly the local resources the surface CSP
 * grants (data:/blob: images, fonts, media; S3): with img-src 'none' here, a surface's data:
 * image (an app's inlined asset) was blocked.
 * @param {string} relayHash the shell's own script
 * @param {string} surfaceHash the surface's one script
 */
export function shellCsp(relayHash, surfaceHash) {
  return [
    "default-src 'none'",
    `script-src ${relayHash} ${surfaceHash}`,
    "style-src 'unsafe-inline'",
    "frame-src 'none'",
    "child-src 'none'",
    "img-src data: blob:",
    "font-src data:",
    "media-src data: blob:",
    "connect-src 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** Messages a shell passes up per second, all kinds together; a flood stops at the shell. */
export const SHELL_MESSAGES_PER_SECOND = 200;

/**
 * The largest message a shell passes up, in characters of its JSON text (or, for a message a
 * surface posts around its bridge, an estimate of the same, counted until it is exceeded).
 * Above U9's 16 KiB of event data with room for the envelope; a bigger one is refused in the
 * shell, so nothing large is ever cloned into the notebook page (measured: two very large
 * structured clones stalled the page's main thread for 8 s).
 */
export const MAX_MESSAGE_CHARS = 64 * 1024;

/** Device abilities a surface never gets, whatever it asks (L1). */
export const ALLOW = [
  "camera",
  "microphone",
  "geolocation",
  "clipboard-read",
  "clipboard-write",
  "fullscreen",
  "payment",
  "usb",
  "display-capture",
  "serial",
  "hid",
  "bluetooth",
  "midi",
  "screen-wake-lock",
  "web-share",
  "xr-spatial-tracking",
]
  .map((feature) => `${feature} 'none'`)
  .join("; ");

/** @param {string} text */
export function escapeAttribute(text) {
  return text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/**
 * What a surface looks like before its own css: the notebook's font and colours, from the
 * theme variables the bridge sets (--lineup-*, docs/protocol.md "theme"), with fallbacks
 * until they arrive. Every selector is inside :where(), so any rule of the bundle wins.
 */
export const SURFACE_DEFAULT_CSS =
  ":where(:root){font-family:var(--lineup-font,system-ui,-apple-system,'Segoe UI',Roboto,sans-serif);" +
  "font-size:13px;line-height:1.4;color:var(--lineup-text,#212121)}" +
  ":where(code,pre,kbd,samp){font-family:var(--lineup-code-font,ui-monospace,Menlo,Consolas,monospace)}" +
  ":where(button,input,select,textarea){font:inherit}" +
  ":where(a){color:var(--lineup-accent,#1976d2)}";

/**
 * Text for inside <script> or <style>: nothing in it can close the element early. Also as the
 * HTML parser will hand it to the CSP check: it turns CR and CRLF into LF and NUL into U+FFFD,
 * so the hash is taken over the text after the same changes.
 * @param {string} text
 */
export function scriptSafe(text) {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/\0/g, "\uFFFD")
    .replace(/<\/(script|style)/gi, "<\\/$1")
    .replace(/<!--/g, "<\\!--");
}

/**
 * A call of a self-contained function (bridge.js) as script text: `(fn)(config, ...helpers);`.
 * @param {Function} fn
 * @param {unknown} config
 * @param {Function[]} helpers self-contained functions passed after the config, as text
 */
export function inlineCall(fn, config, helpers = []) {
  const args = [JSON.stringify(config), ...helpers.map((helper) => helper.toString())].join(", ");
  return scriptSafe(`(${fn.toString()})(${args});`);
}

/** @typedef {{ srcdoc: string, scriptHash: string }} SurfaceDocument */

/**
 * The surface frame's document. Order matters: the CSP meta is the first node (S3); then a
 * base that makes relative and # links resolve nowhere (an agent's own <base> comes later and
 * loses); then the bundle's style and html; then the one script the CSP admits: the host's
 * bridge, then the bundle's js (U6). Nothing in the html runs (no <script>, no on* handler),
 * so the bridge is the first code in the frame even though it comes after the html; and the
 * two are one text, so neither can be copied into a nested frame without the other.
 * @param {{ html: string, css?: string, js?: string }} bundle
 * @returns {SurfaceDocument}
 */
export function surfaceDocument(bundle) {
  const { script } = surfaceScript(bundle);
  const scriptHash = cspHash(script);
  const srcdoc =
    `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(surfaceCsp(scriptHash))}">` +
    `<base href="about:srcdoc">` +
    `<meta charset="utf-8">` +
    `<style>${SURFACE_DEFAULT_CSS}</style>` +
    `<style>${scriptSafe(bundle.css ?? "")}</style>` +
    bundle.html +
    `<script>${script}</script>`;
  return { srcdoc, scriptHash };
}

/**
 * The one script a surface runs: the bridge, a newline, then the bundle's js (U6). `jsLine` is
 * the script's line where the bundle's js starts, to name a line of the js (syntax_check.js).
 * @param {{ js?: string }} bundle
 * @returns {{ script: string, jsLine: number }}
 */
export function surfaceScript(bundle) {
  const bridge = inlineCall(surfaceBridge, { namespace: SURFACE_NAMESPACE, eventName: EVENT_NAME_PATTERN.source }, [
    mergePatch,
    realmGuard,
    cspReports,
  ]);
  // A newline, so a bundle starting with a comment or a regex cannot join the bridge's line.
  const script = bundle.js ? `${bridge}\n${scriptSafe(bundle.js)}` : bridge;
  return { script, jsLine: bridge.split("\n").length + 1 };
}

/**
 * The shell frame's document: its CSP first, then the relay that creates the surface frame.
 * @param {SurfaceDocument} surface
 * @param {number} [perSecond] messages the shell passes up each second (events, sizes, pongs)
 * @param {string} [key] the shell's secret that marks its own reports (shellKey)
 */
export function shellDocument(surface, perSecond = SHELL_MESSAGES_PER_SECOND, key = shellKey()) {
  return shellAround(
    { srcdoc: surface.srcdoc, title: "surface" },
    perSecond,
    (relayHash) => shellCsp(relayHash, surface.scriptHash),
    key,
  );
}

/**
 * A new shell's secret: the shell marks its own reports with it (bridge.js shellRelay), the
 * page keeps it beside the frame, its surface never sees it. 128 random bits, as hex.
 */
export function shellKey() {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A shell document around a child frame (a surface, an MCP app): its CSP first, made by `csp`
 * from the hash of the shell's own relay, then the relay.
 * @param {{ srcdoc: string, title: string }} child
 * @param {number} perSecond
 * @param {(relayHash: string) => string} csp
 * @param {string} key the shell's secret that marks its own reports (shellKey)
 */
export function shellAround(child, perSecond, csp, key) {
  const relay = inlineCall(
    shellRelay,
    {
      srcdoc: child.srcdoc,
      title: child.title,
      allow: ALLOW,
      namespace: SURFACE_NAMESPACE,
      perSecond,
      maxChars: MAX_MESSAGE_CHARS,
      key,
    },
    [exceeds, cspReports],
  );
  return (
    `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp(cspHash(relay)))}">` +
    `<meta charset="utf-8">` +
    `<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}` +
    `iframe{border:0;width:100%;height:100%;display:block}</style>` +
    `<body><script>${relay}</script></body>`
  );
}
