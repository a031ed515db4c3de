// The documents a surface lives in (S2, S3, U6): built from pieces, checked as text here and
// as they reach the DOM in the browser tests.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import {
  ALLOW,
  MAX_MESSAGE_CHARS,
  SANDBOX,
  scriptSafe,
  shellCsp,
  shellDocument,
  surfaceCsp,
  surfaceDocument,
} from "../frames.js";
import { cspHash } from "../sha256.js";

const bundle = { html: "<main id=m></main>", css: "main{color:red}", js: "window.x = 1" };

/** The one <script> element's text of a document, as the HTML parser will see it. @param {string} doc */
function scripts(doc) {
  return [...doc.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]);
}

/** @param {string} text */
function nodeHash(text) {
  return `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;
}

test("S2: the sandbox is allow-scripts and nothing more", () => {
  assert.equal(SANDBOX, "allow-scripts");
});

test("the CSP hash is SHA-256 of the UTF-8 text, as node computes it", () => {
  for (const text of ["", "a", "abc", "x".repeat(55), "x".repeat(56), "x".repeat(64), "é€😀\n", "y".repeat(100_000)]) {
    assert.equal(cspHash(text), nodeHash(text), JSON.stringify(text.slice(0, 20)));
  }
});

test("S3: the surface CSP keeps the seed's minimum, closes frames, workers, forms, and admits one script", () => {
  const csp = surfaceCsp("'sha256-abc'");
  for (const part of [
    "default-src 'none'",
    "connect-src 'none'",
    "img-src data: blob:",
    "style-src 'unsafe-inline'",
    "script-src 'sha256-abc'",
    "frame-src 'none'",
    "worker-src 'none'",
    "form-action 'none'",
  ]) {
    assert.ok(csp.split("; ").includes(part), part);
  }
  assert.ok(!csp.includes("unsafe-eval") && !/script-src[^;]*unsafe-inline/.test(csp));
});

test("S3, U6: the CSP admits exactly the one script: the bridge, then the bundle's js", () => {
  const { srcdoc, scriptHash } = surfaceDocument(bundle);
  assert.ok(srcdoc.startsWith(`<meta http-equiv="Content-Security-Policy" content="${surfaceCsp(scriptHash)}">`));
  const [script, ...more] = scripts(srcdoc);
  assert.deepEqual(more, []);
  assert.equal(scriptHash, nodeHash(script));
  const bridge = script.indexOf("LineUpSurface");
  assert.ok(bridge > 0 && bridge < script.indexOf("window.x = 1"));
  assert.ok(script.endsWith("\nwindow.x = 1"));
  // The base comes before anything of the bundle; the html before the script that uses it.
  const base = srcdoc.indexOf('<base href="about:srcdoc">');
  assert.ok(base > 0 && base < srcdoc.indexOf("main{color:red}"));
  assert.ok(srcdoc.indexOf("<main id=m>") < srcdoc.indexOf("<script>"));
  // Another bundle is another hash: a script admitted in one surface runs in no other.
  assert.notEqual(surfaceDocument({ ...bundle, js: "window.x = 2" }).scriptHash, scriptHash);
  // Without js, the bridge alone is the script.
  const bare = surfaceDocument({ html: "<p>hi</p>" });
  assert.equal(bare.scriptHash, nodeHash(scripts(bare.srcdoc)[0]));
});

test("the hash is of the text the parser will see: CR, CRLF and NUL as the parser turns them", () => {
  assert.equal(scriptSafe("a\r\nb\rc\0d"), "a\nb\nc\uFFFDd");
  const { srcdoc, scriptHash } = surfaceDocument({ html: "", js: "let a = 1;\r\nlet b = '\0';" });
  assert.equal(scriptHash, nodeHash(scripts(srcdoc)[0]));
  assert.ok(!scripts(srcdoc)[0].includes("\r"));
});

test("a bundle cannot close the script or style element early", () => {
  const { srcdoc } = surfaceDocument({
    html: "",
    css: "</style><script>alert(1)</script>",
    js: "'</script><img src=x>'",
  });
  assert.equal(srcdoc.match(/<\/script>/g)?.length, 1); // the one script's own end
  assert.ok(!srcdoc.includes("</style><script>alert(1)"));
});

test("the shell's CSP forbids frames navigating and admits only its relay and the surface's script", () => {
  const surface = surfaceDocument(bundle);
  const doc = shellDocument(surface);
  const [relay, ...more] = scripts(doc);
  assert.deepEqual(more, []); // the surface's own script sits escaped inside the relay's JSON
  const csp = shellCsp(nodeHash(relay), surface.scriptHash);
  assert.ok(doc.startsWith(`<meta http-equiv="Content-Security-Policy" content="${csp}">`));
  assert.ok(csp.includes("frame-src 'none'"));
  assert.ok(relay.includes(JSON.stringify(ALLOW).slice(1, -1)));
  assert.ok(relay.includes(`"maxChars":${MAX_MESSAGE_CHARS}`));
});

test("L1: the surface frame is denied camera, microphone, geolocation, clipboard, fullscreen, payment, usb, display capture", () => {
  for (const feature of [
    "camera",
    "microphone",
    "geolocation",
    "clipboard-write",
    "fullscreen",
    "payment",
    "usb",
    "display-capture",
  ]) {
    assert.ok(ALLOW.includes(`${feature} 'none'`), feature);
  }
});
