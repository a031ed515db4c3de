// The two documents a surface lives in, built from small tested pieces (no string soup):
// the host-owned shell frame, and inside it the surface frame whose first node is its CSP (S3).

import { EVENT_NAME_PATTERN, SURFACE_NAMESPACE } from "./protocol.generated.js";
import { shellRelay, surfaceBridge } from "./bridge.js";

/** S2: exactly this, never allow-same-origin, allow-top-navigation, allow-popups, allow-forms. */
export const SANDBOX = "allow-scripts";

/** S3 and more: no network, no nested frames, no workers, no forms, nothing remote. */
export const SURFACE_CSP = [
  "default-src 'none'",
  "connect-src 'none'",
  "img-src data: blob:",
  "style-src 'unsafe-inline'",
  "script-src 'unsafe-inline'",
  "font-src data:",
  "media-src data: blob:",
  "frame-src 'none'",
  "child-src 'none'",
  "worker-src 'none'",
  "object-src 'none'",
  "form-action 'none'",
  "manifest-src 'none'",
].join("; ");

/** The shell runs only our inline script; frame-src 'none' blocks the surface navigating.
 * A srcdoc frame inherits its parent's policy on top of its own, so the shell lets through
 * exactly the local resources SURFACE_CSP grants (data:/blob: images, fonts, media; S3):
 * with img-src 'none' here, a surface's data: image (an app's inlined asset) was blocked. */
export const SHELL_CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  "frame-src 'none'",
  "child-src 'none'",
  "img-src data: blob:",
  "font-src data:",
  "media-src data: blob:",
  "connect-src 'none'",
  "form-action 'none'",
].join("; ");

/** Messages a shell passes up per second, all kinds together; a flood stops at the shell. */
export const SHELL_MESSAGES_PER_SECOND = 200;

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
 * Text for inside <script> or <style>: nothing in it can close the element early.
 * @param {string} text
 */
function scriptSafe(text) {
  return text.replace(/<\/(script|style)/gi, "<\\/$1").replace(/<!--/g, "<\\!--");
}

/**
 * @param {Function} fn
 * @param {unknown} config
 */
function call(fn, config) {
  return scriptSafe(`(${fn.toString()})(${JSON.stringify(config)});`);
}

/**
 * The surface frame's document. Order matters: the CSP meta is the first node (S3); then a
 * base that makes relative and # links resolve nowhere (an agent's own <base> comes later and
 * loses); then the bridge, before any of the bundle's code (U6); then the bundle.
 * @param {{ html: string, css?: string, js?: string }} bundle
 */
export function surfaceDocument(bundle) {
  const bridge = call(surfaceBridge, { namespace: SURFACE_NAMESPACE, eventName: EVENT_NAME_PATTERN.source });
  return (
    `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(SURFACE_CSP)}">` +
    `<base href="about:srcdoc">` +
    `<meta charset="utf-8">` +
    `<script>${bridge}</script>` +
    `<style>${scriptSafe(bundle.css ?? "")}</style>` +
    bundle.html +
    (bundle.js ? `<script>${scriptSafe(bundle.js)}</script>` : "")
  );
}

/**
 * The shell frame's document: its CSP first, then the relay that creates the surface frame.
 * @param {string} surfaceSrcdoc
 * @param {number} [perSecond] messages the shell passes up each second (events, sizes, pongs)
 */
export function shellDocument(surfaceSrcdoc, perSecond = SHELL_MESSAGES_PER_SECOND) {
  return (
    `<meta http-equiv="Content-Security-Policy" content="${escapeAttribute(SHELL_CSP)}">` +
    `<meta charset="utf-8">` +
    `<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}` +
    `iframe{border:0;width:100%;height:100%;display:block}</style>` +
    `<body><script>${call(shellRelay, { srcdoc: surfaceSrcdoc, allow: ALLOW, namespace: SURFACE_NAMESPACE, perSecond })}</script></body>`
  );
}
