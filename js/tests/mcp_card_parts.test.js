// What an MCP app's card says and asks, without the DOM (js/mcp_card_parts.js): its heading, made
// of the server's own strings, honestly; and which declared domains its grant card asks about.

import assert from "node:assert/strict";
import { test } from "node:test";

import { appHeading, undecided } from "../mcp_card_parts.js";

/** @param {Partial<import("../view_protocol.js").McpAppSpec>} fields */
const spec = (fields) =>
  /** @type {import("../view_protocol.js").McpAppSpec} */ ({
    app_id: "mcp-1",
    agent: "mcp.weather",
    server: "weather",
    server_version: "1.2.0",
    tool: "show_weather",
    title: "Show the weather",
    resource_uri: "ui://weather/app.html",
    html: "",
    csp: { connectDomains: [], resourceDomains: [] },
    granted: { connectDomains: [], resourceDomains: [] },
    refused_csp: [],
    prefers_border: null,
    arguments: {},
    result: null,
    cancelled: null,
    refused: null,
    generation: 1,
    notes: [],
    ...fields,
  });

test("the heading names the app, its server and version, and its tool", () => {
  const heading = appHeading(spec({}));
  assert.equal(heading.title, "Show the weather");
  assert.equal(heading.detail, "MCP app · server weather 1.2.0 · tool show_weather");
  assert.match(heading.tooltip, /ui:\/\/weather\/app\.html · mcp\.weather/);
});

test("a server's hidden characters are shown, and long names cut", () => {
  const heading = appHeading(spec({ title: "Safe\u202Etxt.exe", server: "w".repeat(500) }));
  assert.equal(heading.title, "Safe⟨U+202E⟩txt.exe");
  assert.ok(heading.detail.length < 200);
  assert.equal(appHeading(spec({ title: "" })).title, "show_weather", "no title: the tool's name");
});

test("the grant card asks about each declared domain not granted, not denied, and grantable", () => {
  const app = spec({
    csp: {
      connectDomains: ["https://api.example.com", "https://granted.example.com", "http://127.0.0.1:9"],
      resourceDomains: ["https://cdn.example.com"],
    },
    granted: { connectDomains: ["https://granted.example.com"], resourceDomains: [] },
  });
  assert.deepEqual(undecided(app, new Set()), [
    { directive: "connectDomains", domain: "https://api.example.com" },
    { directive: "connectDomains", domain: "http://127.0.0.1:9" },
    { directive: "resourceDomains", domain: "https://cdn.example.com" },
  ]);
  assert.deepEqual(undecided(app, new Set(["connectDomains https://api.example.com"])), [
    { directive: "connectDomains", domain: "http://127.0.0.1:9" },
    { directive: "resourceDomains", domain: "https://cdn.example.com" },
  ]);
  const bad = spec({ csp: { connectDomains: ["https://a.example; script-src *"], resourceDomains: [] } });
  assert.deepEqual(undecided(bad, new Set()), [], "never offered: it could not be written into a policy");
});

test("a CSP block is explained: an inline handler, a domain not allowed", async () => {
  const { cspHint } = await import("../mcp_cards.js");
  assert.match(cspHint("script-src-attr", "inline"), /no inline handler/);
  assert.equal(cspHint("connect-src", "https://api.example.com/x"), " (not a domain you allowed)");
  assert.equal(cspHint("img-src", "https://cdn.example.com/a.png"), " (not a domain you allowed)");
  assert.equal(cspHint("frame-src", "https://x.example"), "");
});

test("an app's frame starts at START_HEIGHT, within the host's bounds", async () => {
  const { START_HEIGHT, startHeight } = await import("../mcp_cards.js");
  assert.equal(startHeight({ min_height: 40, max_height: 800 }), START_HEIGHT);
  assert.equal(startHeight({ min_height: 40, max_height: 300 }), 300);
  assert.equal(startHeight({ min_height: 600, max_height: 1600 }), 600);
});
