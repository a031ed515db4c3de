// The documents a surface lives in (S2, S3, U6): built from pieces, checked as text here and
// as they reach the DOM in the browser tests.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ALLOW, SANDBOX, SHELL_CSP, SURFACE_CSP, shellDocument, surfaceDocument } from "../frames.js";

const bundle = { html: "<main id=m></main>", css: "main{color:red}", js: "window.x = 1" };

test("S2: the sandbox is allow-scripts and nothing more", () => {
  assert.equal(SANDBOX, "allow-scripts");
});

test("S3: the surface CSP contains the seed's minimum and closes frames, workers, forms", () => {
  for (const part of [
    "default-src 'none'",
    "connect-src 'none'",
    "img-src data: blob:",
    "style-src 'unsafe-inline'",
    "script-src 'unsafe-inline'",
    "frame-src 'none'",
    "worker-src 'none'",
    "form-action 'none'",
  ]) {
    assert.ok(SURFACE_CSP.split("; ").includes(part), part);
  }
});

test("S3: the CSP meta is the first node, then the base, then the bridge, then the bundle", () => {
  const doc = surfaceDocument(bundle);
  assert.ok(doc.startsWith(`<meta http-equiv="Content-Security-Policy" content="${SURFACE_CSP.replace(/'/g, "'")}">`));
  const base = doc.indexOf('<base href="about:srcdoc">');
  const bridge = doc.indexOf("LineUpSurface");
  const html = doc.indexOf("<main id=m>");
  const js = doc.indexOf("window.x = 1");
  assert.ok(base > 0 && base < bridge && bridge < html && html < js);
});

test("a bundle cannot close the bridge's or its own script element early", () => {
  const doc = surfaceDocument({ html: "", css: "</style><script>alert(1)</script>", js: "'</script><img src=x>'" });
  assert.equal(doc.match(/<\/script>/g)?.length, 2); // the bridge's and the bundle's own end
  assert.ok(!doc.includes("</style><script>alert(1)"));
});

test("the shell's CSP forbids frames navigating and runs only its relay", () => {
  const doc = shellDocument(surfaceDocument(bundle));
  assert.ok(doc.startsWith(`<meta http-equiv="Content-Security-Policy" content="${SHELL_CSP}">`));
  assert.ok(SHELL_CSP.includes("frame-src 'none'"));
  // One real script element; the surface's own scripts sit escaped inside its JSON string.
  assert.equal(doc.match(/<\/script>/g)?.length, 1);
  assert.ok(doc.includes(JSON.stringify(ALLOW).slice(1, -1)));
});

test("L1: the surface frame is denied camera, microphone, geolocation, clipboard, fullscreen, payment, usb, display capture", () => {
  for (const feature of ["camera", "microphone", "geolocation", "clipboard-write", "fullscreen", "payment", "usb", "display-capture"]) {
    assert.ok(ALLOW.includes(`${feature} 'none'`), feature);
  }
});
