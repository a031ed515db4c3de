// The pieces of an MCP app's frame that need no DOM (js/mcp_frames.js): which declared domains
// may be written into a policy, the policy itself, and the guard first in every script. The
// document itself (DOMParser) is checked in JupyterLab (tests/browser/test_mcp_apps.py).

import assert from "node:assert/strict";
import { test } from "node:test";

import { realmGuard } from "../bridge.js";
import { surfaceDocument } from "../frames.js";
import {
  cspSource,
  DATA_MODULE,
  dataModule,
  dataModulesAsBlobs,
  FIRST_SCRIPT,
  GUARD,
  grantedSources,
  guarded,
  mcpCsp,
} from "../mcp_frames.js";

test("a declared domain is written into a policy only as a plain host source", () => {
  for (const [domain, source] of [
    ["https://api.example.com", "https://api.example.com"],
    ["HTTPS://API.Example.com", "https://api.example.com"],
    ["wss://live.example.com:8443", "wss://live.example.com:8443"],
    ["https://*.example.com", "https://*.example.com"],
    ["http://127.0.0.1:8000", "http://127.0.0.1:8000"],
    ["https://cdn.example.com/npm/Lib/", "https://cdn.example.com/npm/Lib/"],
  ]) {
    assert.equal(cspSource(domain), source, domain);
  }
  for (const domain of [
    "api.example.com", // no scheme: what it would match depends on the frame's own
    "*",
    "https://*",
    "https:",
    "data:",
    "'unsafe-inline'",
    "https://a.example.com; script-src 'unsafe-inline'", // a directive of the app's choosing
    "https://a.example.com 'unsafe-eval'",
    "https://a.example.com,https://b.example.com",
    "javascript://x.example.com",
    "https://exa mple.com",
    "https://a.example.com/'x'",
    42,
    null,
  ]) {
    assert.equal(cspSource(domain), null, String(domain));
  }
});

test("grants: only valid sources, once each; the rest said", () => {
  const { sources, invalid } = grantedSources({
    connectDomains: ["https://api.example.com", "https://api.example.com", "nope; x"],
    resourceDomains: ["https://cdn.example.com"],
    frameDomains: ["https://frames.example.com"], // never granted here (not GRANTABLE)
  });
  assert.deepEqual(sources, {
    connectDomains: ["https://api.example.com"],
    resourceDomains: ["https://cdn.example.com"],
  });
  assert.deepEqual(invalid, [{ directive: "connectDomains", domain: "nope; x" }]);
  assert.deepEqual(grantedSources(undefined).sources, { connectDomains: [], resourceDomains: [] });
});

test("the app's policy: nothing out by default, grants where they belong, frames never", () => {
  const none = mcpCsp({ connectDomains: [], resourceDomains: [] }, ["'sha256-a'"]).split("; ");
  for (const part of [
    "default-src 'none'",
    "script-src 'sha256-a' 'unsafe-eval' blob:",
    "connect-src 'none'",
    "img-src data: blob:",
    "frame-src 'none'",
    "child-src 'none'",
    "worker-src 'none'",
    "object-src 'none'",
    "form-action 'none'",
  ]) {
    assert.ok(none.includes(part), part);
  }
  const csp = mcpCsp({ connectDomains: ["https://api.example.com"], resourceDomains: ["https://cdn.example.com"] }, [
    "'sha256-a'",
    "'sha256-b'",
  ]);
  assert.match(csp, /connect-src https:\/\/api\.example\.com;/);
  assert.match(csp, /script-src 'sha256-a' 'sha256-b' 'unsafe-eval' blob: https:\/\/cdn\.example\.com;/);
  assert.ok(!/script-src[^;]*data:/.test(csp)); // any realm, a nested frame's too, can load data:
  assert.match(csp, /img-src data: blob: https:\/\/cdn\.example\.com;/);
  assert.match(csp, /style-src 'unsafe-inline' https:\/\/cdn\.example\.com;/);
  assert.ok(!/script-src[^;]*unsafe-inline/.test(csp));
  assert.match(csp, /frame-src 'none'/);
});

test("every app script starts with the guard; a 'use strict' prologue stays first", () => {
  assert.ok(guarded("let x = 1;").startsWith(`${GUARD}\n`));
  const strict = guarded('"use strict";\nlet x = 1;');
  assert.ok(strict.startsWith('"use strict";\n'));
  assert.ok(strict.includes(`\n${GUARD}\n`));
  assert.ok(FIRST_SCRIPT.startsWith(GUARD));
  assert.ok(GUARD.includes(realmGuard.toString()));
});

test("surfaces and MCP apps share the one guard (bridge.js realmGuard), never a copy", () => {
  const { srcdoc } = surfaceDocument({ html: "", js: "" });
  assert.ok(srcdoc.includes(realmGuard.toString()));
  assert.equal(srcdoc.split("const MARK = Symbol.for").length, 2, "the guard's text once in a surface's script");
});

test("a data: JavaScript URL literal becomes a blob: URL of the same text, nothing else changes", async () => {
  const source = "export const answer = 6 * 7; // é";
  const url = `data:text/javascript;base64,${Buffer.from(source).toString("base64")}`;
  const app = `w.workerSrc = new URL("${url}", import.meta.url).href; load('${url}');`;
  const made = dataModulesAsBlobs(app);
  assert.equal(
    made,
    `w.workerSrc = new URL(${DATA_MODULE}("${url}"), import.meta.url).href; load(${DATA_MODULE}('${url}'));`,
  );
  for (const untouched of [
    "const a = 'data:text/html;base64,PGI+';", // not JavaScript
    'const b = "data:text/javascript,alert(1)";', // not base64
    "const c = \"data:text/javascript;base64,QQ==';", // quotes that do not pair
    "const d = `data:text/javascript;base64,QQ==`;", // a template: not a plain literal
  ]) {
    assert.equal(dataModulesAsBlobs(untouched), untouched);
  }
  assert.ok(FIRST_SCRIPT.includes(dataModule.toString()));
  // What the frame's first script defines: one blob: URL per data: URL, of the same bytes.
  const holder = /** @type {any} */ ({});
  const saved = globalThis.window;
  globalThis.window = holder;
  try {
    dataModule({ name: DATA_MODULE });
  } finally {
    globalThis.window = saved;
  }
  const blob = holder[DATA_MODULE](url);
  assert.match(blob, /^blob:/);
  assert.equal(holder[DATA_MODULE](url), blob);
  const { resolveObjectURL } = await import("node:buffer");
  assert.equal(await resolveObjectURL(blob)?.text(), source);
  assert.throws(() => {
    holder[DATA_MODULE] = null;
  });
});
