// js/mcp_host.js against the official MCP Apps SDK: the real `App` class of
// @modelcontextprotocol/ext-apps 2.0.4 (app-with-deps, the build apps inline), connected to
// the host over an in-memory transport (the SDK's Transport interface), every message of the
// `ui/*` set both ways; what the host sends is also checked with the SDK's own schemas. Then a
// hostile "app" that posts raw JSON-RPC: before `initialized`, forged ids, malformed, too
// large, a flood.

import assert from "node:assert/strict";
import { afterEach, test } from "node:test";

import {
  App,
  McpUiHostContextChangedNotificationSchema,
  McpUiInitializeResultSchema,
  McpUiToolCancelledNotificationSchema,
  McpUiToolInputNotificationSchema,
  McpUiToolInputPartialNotificationSchema,
  McpUiToolResultNotificationSchema,
} from "@modelcontextprotocol/ext-apps/app-with-deps";

import { LIMITS, McpHost, METHOD_NOT_FOUND, TrafficLog } from "../mcp_host.js";

/** What the host's checks of its outgoing notifications use, by method. */
const SCHEMAS = /** @type {Record<string, any>} */ ({
  "ui/notifications/host-context-changed": McpUiHostContextChangedNotificationSchema,
  "ui/notifications/tool-input": McpUiToolInputNotificationSchema,
  "ui/notifications/tool-input-partial": McpUiToolInputPartialNotificationSchema,
  "ui/notifications/tool-result": McpUiToolResultNotificationSchema,
  "ui/notifications/tool-cancelled": McpUiToolCancelledNotificationSchema,
});

/** A message crosses as postMessage carries it: cloned, later. @param {unknown} message */
const across = (message) => new Promise((resolve) => setImmediate(() => resolve(structuredClone(message))));

/** Wait until `check` holds (each turn of the event loop), at most a few hundred turns. @param {() => boolean} check */
async function until(check) {
  for (let turn = 0; turn < 500 && !check(); turn++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(check(), "the condition never held");
}

/**
 * A host wired to a fake kernel and card, and the transport an App connects with.
 * @param {{ kernel?: (method: string, params: any) => any, limits?: object, now?: () => number,
 *   displayMode?: (mode: "inline" | "fullscreen") => Promise<"inline" | "fullscreen"> }} [options]
 */
function setup(options = {}) {
  const seen = {
    /** @type {Array<{ dir: string, message: any }>} */ traffic: [],
    /** @type {Array<{ code: string, message: string, path?: string }>} */ refused: [],
    /** @type {Array<{ kernelId: string, method: string, params: any }>} */ requests: [],
    /** @type {number[]} */ sizes: [],
    /** @type {any[]} */ logs: [],
    teardowns: 0,
    initialized: 0,
    /** @type {any[]} */ toApp: [],
  };
  const context = {
    theme: "light",
    displayMode: "inline",
    availableDisplayModes: ["inline", "fullscreen"],
    containerDimensions: { width: 640, maxHeight: 800 },
    locale: "en-GB",
    platform: "web",
  };
  /** @type {any} */
  const transport = {
    async start() {},
    async send(/** @type {any} */ message) {
      host.receive(await across(message));
    },
    async close() {
      transport.onclose?.();
    },
  };
  const controller = new AbortController();
  const host = new McpHost(
    {
      toApp: (message) => {
        seen.toApp.push(message);
        across(message).then((copy) => transport.onmessage?.(copy));
      },
      request: (kernelId, method, params) => {
        seen.requests.push({ kernelId, method, params });
        if (options.kernel) {
          const answer = options.kernel(method, params);
          if (answer) setImmediate(() => host.respond(kernelId, answer));
        }
      },
      traffic: (dir, message) => seen.traffic.push({ dir, message }),
      refused: (code, message, path) => seen.refused.push({ code, message, path }),
      context: () => structuredClone(context),
      size: (height) => seen.sizes.push(height),
      displayMode:
        options.displayMode ??
        ((mode) => {
          context.displayMode = mode;
          return mode;
        }),
      initialized: () => {
        seen.initialized += 1;
      },
      teardownRequested: () => {
        seen.teardowns += 1;
      },
      log: (params) => seen.logs.push(params),
    },
    {
      idPrefix: "view1:",
      capabilities: { openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, message: { text: {} } },
      signal: controller.signal,
      limits: options.limits,
      now: options.now,
    },
  );
  return { host, transport, seen, context, controller };
}

/**
 * The SDK Apps a test connected. Each is closed after its test: an App keeps a 60 s timer for
 * every request still unanswered (a test whose host was closed mid-request leaves one), and a
 * live timer keeps `node --test` running long after the last test passed.
 * @type {App[]}
 */
const apps = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** An App of the official SDK, connected to a fresh host. @param {Parameters<typeof setup>[0]} [options] */
async function connected(options) {
  const wired = setup(options);
  const app = new App({ name: "test-app", version: "1.0.0" }, {}, { autoResize: false });
  apps.push(app);
  await app.connect(wired.transport);
  await until(() => wired.host.initialized);
  return { app, ...wired };
}

test("ui/initialize -> initialized: the official App connects and reads the host's answer", async () => {
  const { app, host, seen } = await connected();
  assert.equal(host.phase, "initialized");
  assert.equal(seen.initialized, 1);
  assert.deepEqual(app.getHostVersion(), { name: "lineup-jupyter", version: "0.1.0" });
  const context = /** @type {any} */ (app.getHostContext());
  assert.equal(context.theme, "light");
  assert.equal(context.displayMode, "inline");
  assert.deepEqual(context.availableDisplayModes, ["inline", "fullscreen"]);
  assert.deepEqual(context.containerDimensions, { width: 640, maxHeight: 800 });
  assert.equal(context.locale, "en-GB");
  assert.ok(app.getHostCapabilities()?.openLinks);
  // The answer as the SDK's own schema reads it, and the first two messages in the traffic.
  const answer = seen.toApp.find((message) => message.result?.protocolVersion);
  assert.ok(McpUiInitializeResultSchema.safeParse(answer.result).success);
  assert.deepEqual(
    seen.traffic.slice(0, 3).map(({ dir, message }) => [dir, message.method ?? "result"]),
    [
      ["from_app", "ui/initialize"],
      ["to_app", "result"],
      ["from_app", "ui/notifications/initialized"],
    ],
  );
  assert.deepEqual(seen.refused, []);
});

test("tool-input, tool-input-partial, tool-result, tool-cancelled: kept until initialized, then in order", async () => {
  const wired = setup();
  const { host, transport, seen } = wired;
  host.notify("ui/notifications/tool-input-partial", { arguments: { city: "Par" } });
  host.notify("ui/notifications/tool-input", { arguments: { city: "Paris" } });
  host.notify("ui/notifications/tool-result", { content: [{ type: "text", text: "18 C" }] });
  assert.equal(seen.toApp.length, 0, "nothing reaches an app before it is initialized");
  const app = new App({ name: "test-app", version: "1.0.0" }, {}, { autoResize: false });
  apps.push(app);
  /** @type {Array<[string, any]>} */
  const got = [];
  app.ontoolinputpartial = (params) => got.push(["partial", params]);
  app.ontoolinput = (params) => got.push(["input", params]);
  app.ontoolresult = (params) => got.push(["result", params]);
  app.ontoolcancelled = (params) => got.push(["cancelled", params]);
  await app.connect(transport);
  await until(() => got.length === 3);
  host.notify("ui/notifications/tool-cancelled", { reason: "the user closed it" });
  await until(() => got.length === 4);
  assert.deepEqual(got, [
    ["partial", { arguments: { city: "Par" } }],
    ["input", { arguments: { city: "Paris" } }],
    ["result", { content: [{ type: "text", text: "18 C" }] }],
    ["cancelled", { reason: "the user closed it" }],
  ]);
  for (const message of seen.toApp.filter((m) => SCHEMAS[m.method])) {
    assert.ok(SCHEMAS[message.method].safeParse(message).success, message.method);
  }
});

test("host-context-changed: the app hears what changed, and only that", async () => {
  const { app, host, context, seen } = await connected();
  /** @type {any[]} */
  const heard = [];
  app.onhostcontextchanged = (params) => heard.push(params);
  host.contextChanged(); // nothing changed: nothing sent
  context.theme = "dark";
  context.containerDimensions = { width: 500, maxHeight: 800 };
  host.contextChanged();
  await until(() => heard.length === 1);
  assert.deepEqual(heard[0], { theme: "dark", containerDimensions: { width: 500, maxHeight: 800 } });
  assert.equal(/** @type {any} */ (app.getHostContext()).theme, "dark");
  const sent = seen.toApp.filter((m) => m.method === "ui/notifications/host-context-changed");
  assert.equal(sent.length, 1);
  assert.ok(McpUiHostContextChangedNotificationSchema.safeParse(sent[0]).success);
});

test("size-changed: the app's height reaches the card", async () => {
  const { app, seen } = await connected();
  await app.sendSizeChanged({ width: 640, height: 321 });
  await until(() => seen.sizes.length === 1);
  assert.deepEqual(seen.sizes, [321]);
});

test("tools/call, resources/read, ui/open-link, ui/message, ui/update-model-context go to the kernel and back", async () => {
  const kernel = (/** @type {string} */ method, /** @type {any} */ params) => {
    if (method === "tools/call") return { result: { content: [{ type: "text", text: `called ${params.name}` }] } };
    if (method === "resources/read") return { result: { contents: [{ uri: params.uri, text: "data" }] } };
    if (method === "ui/open-link")
      return { error: { code: -32000, message: "the user denied it", data: { rule: "C10" } } };
    return { result: {} };
  };
  const { app, seen } = await connected({ kernel });
  const called = await app.callServerTool({ name: "refresh", arguments: { city: "Paris" } });
  assert.deepEqual(called.content, [{ type: "text", text: "called refresh" }]);
  const read = await app.readServerResource({ uri: "ui://weather/data" });
  assert.equal(/** @type {any} */ (read.contents[0]).text, "data");
  await assert.rejects(app.openLink({ url: "https://example.org/" }), /the user denied it/);
  await app.sendMessage({ role: "user", content: [{ type: "text", text: "hello" }] });
  await app.updateModelContext({ content: [{ type: "text", text: "Paris selected" }] });
  assert.deepEqual(
    seen.requests.map((r) => r.method),
    ["tools/call", "resources/read", "ui/open-link", "ui/message", "ui/update-model-context"],
  );
  // The kernel sees this view's own ids, never the app's (two views would share those).
  assert.ok(seen.requests.every((r) => r.kernelId.startsWith("view1:")));
  assert.equal(seen.requests[0].params.name, "refresh");
  assert.deepEqual(seen.requests[0].params.arguments, { city: "Paris" });
  assert.equal(seen.requests[2].params.url, "https://example.org/");
  assert.deepEqual(seen.refused, []);
});

test("ui/request-display-mode: inline and fullscreen are set and answered; pip gets the mode in force", async () => {
  const { app, context } = await connected();
  /** @type {any[]} */
  const heard = [];
  app.onhostcontextchanged = (params) => heard.push(params);
  assert.deepEqual(await app.requestDisplayMode({ mode: "fullscreen" }), { mode: "fullscreen" });
  assert.equal(context.displayMode, "fullscreen");
  await until(() => heard.length === 1);
  assert.deepEqual(heard[0], { displayMode: "fullscreen" });
  assert.deepEqual(await app.requestDisplayMode({ mode: "pip" }), { mode: "fullscreen" });
  assert.deepEqual(await app.requestDisplayMode({ mode: "inline" }), { mode: "inline" });
});

test("ui/request-display-mode: the card may decide later (it asks the shell for the user's click) and may say no", async () => {
  /** @type {Array<(mode: "inline" | "fullscreen") => void>} */
  const asked = [];
  const { app, host } = await connected({
    displayMode: () => new Promise((resolve) => asked.push(resolve)),
  });
  /** @type {any[]} */
  const heard = [];
  app.onhostcontextchanged = (params) => heard.push(params);
  const answer = app.requestDisplayMode({ mode: "fullscreen" });
  await until(() => asked.length === 1);
  asked[0]("inline"); // no click in the app: the mode in force
  assert.deepEqual(await answer, { mode: "inline" });
  assert.deepEqual(heard, []); // nothing changed, nothing to hear
  // Closed while the card decides: no answer is sent to a frame that is going.
  const late = app.requestDisplayMode({ mode: "fullscreen" });
  await until(() => asked.length === 2);
  host.close();
  asked[1]("fullscreen");
  const outcome = await Promise.race([
    late.then(
      () => "answered",
      () => "rejected",
    ),
    new Promise((resolve) => setTimeout(() => resolve("none"), 50)),
  ]);
  assert.notEqual(outcome, "answered");
});

test("ui/resource-teardown: the app's onteardown runs before the host closes", async () => {
  const { app, host } = await connected();
  let tornDown = false;
  app.onteardown = async () => {
    tornDown = true;
    return {};
  };
  await host.teardown(5000);
  assert.ok(tornDown);
  assert.equal(host.phase, "closed");
});

test("ui/resource-teardown is bounded: an app that never answers is closed after the wait", async () => {
  const { host, seen } = setup();
  host.receive({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
  host.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  await host.teardown(20);
  assert.equal(host.phase, "closed");
  assert.ok(seen.toApp.some((m) => m.method === "ui/resource-teardown"));
});

test("ping: the watchdog's JSON-RPC ping is answered by the App; the app's ping by the host", async () => {
  const { host, transport, seen } = await connected();
  assert.equal(await host.ping(5000), true);
  host.receive({ jsonrpc: "2.0", id: "p1", method: "ping" });
  assert.deepEqual(seen.toApp.at(-1), { jsonrpc: "2.0", id: "p1", result: {} });
  await transport.close();
});

test("request-teardown and notifications/message from the app reach the card", async () => {
  const { app, seen } = await connected();
  await app.requestTeardown();
  await app.sendLog({ level: "info", data: "loaded" });
  await until(() => seen.teardowns === 1 && seen.logs.length === 1);
  assert.deepEqual(seen.logs[0], { level: "info", data: "loaded" });
});

test("the view's AbortSignal closes the host: nothing reaches the app after", async () => {
  const { host, controller, seen } = await connected();
  controller.abort();
  const before = seen.toApp.length;
  host.notify("ui/notifications/tool-result", { content: [] });
  host.receive({ jsonrpc: "2.0", id: 9, method: "ping" });
  assert.equal(seen.toApp.length, before);
});

// ---- a hostile app: raw JSON-RPC -------------------------------------------------------

/** A host and the raw messages a hostile app posts. @param {Parameters<typeof setup>[0]} [options] */
function raw(options) {
  const wired = setup(options);
  const post = (/** @type {unknown} */ message) => wired.host.receive(message);
  const initialize = () => {
    post({ jsonrpc: "2.0", id: 0, method: "ui/initialize", params: {} });
    post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  };
  return { ...wired, post, initialize };
}

test("requests and notifications before initialized are refused and answered with an error", () => {
  const { post, seen } = raw();
  post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x" } });
  post({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 5000 } });
  post({ jsonrpc: "2.0", method: "ui/notifications/initialized" }); // before the answer
  assert.deepEqual(seen.requests, [], "nothing reached the kernel");
  assert.deepEqual(seen.sizes, []);
  assert.equal(seen.toApp[0].id, 1);
  assert.equal(seen.toApp[0].error.code, -32600);
  assert.deepEqual(
    seen.refused.map((r) => r.code),
    ["not_initialized"],
    "one report a second per code: the three refusals are one line",
  );
  // ping and ui/initialize may come first.
  post({ jsonrpc: "2.0", id: 2, method: "ping" });
  assert.deepEqual(seen.toApp.at(-1), { jsonrpc: "2.0", id: 2, result: {} });
});

test("between the initialize answer and initialized: held in order, handled once initialized", () => {
  // customer-segmentation calls its tool on a 100 ms timer without awaiting its handshake:
  // on a loaded machine the call came before its initialized and was refused.
  const { post, seen } = raw({ limits: { maxQueued: 3 } });
  post({ jsonrpc: "2.0", id: 0, method: "ui/initialize", params: {} });
  post({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 300 } });
  post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "a" } });
  post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "b" } });
  post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "c" } }); // over the bound
  assert.equal(seen.requests.length, 0, "nothing reached the kernel before initialized");
  assert.equal(seen.sizes.length, 0);
  assert.deepEqual(
    seen.refused.map((r) => r.code),
    ["not_initialized"],
  );
  assert.deepEqual(seen.toApp.at(-1), {
    jsonrpc: "2.0",
    id: 3,
    error: { code: -32600, message: seen.toApp.at(-1).error.message },
  });
  post({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  assert.deepEqual(seen.sizes, [300]);
  assert.deepEqual(
    seen.requests.map((r) => r.params.name),
    ["a", "b"],
    "in the order the app sent them",
  );
  post({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "d" } });
  assert.deepEqual(seen.requests.at(-1)?.params.name, "d");
});

test("a response to an id the host never sent (forged) is refused; a real one resolves once", async () => {
  const { post, host, seen, initialize } = raw();
  initialize();
  post({ jsonrpc: "2.0", id: "host-1", result: {} }); // nothing asked yet
  assert.equal(seen.refused.at(-1)?.code, "forged_id");
  const answered = host.ping(5000);
  const ping = seen.toApp.at(-1);
  post({ jsonrpc: "2.0", id: ping.id, result: {} });
  assert.equal(await answered, true);
  post({ jsonrpc: "2.0", id: ping.id, result: {} }); // the same answer again
  assert.equal(seen.refused.filter((r) => r.code === "forged_id").length, 1, "reported once a second");
});

test("malformed messages are refused with the place that is wrong", () => {
  const { post, seen, initialize } = raw({
    now: (() => {
      let t = 0;
      return () => (t += 2000);
    })(),
  });
  initialize();
  for (const message of [
    "a string",
    [1, 2],
    { jsonrpc: "1.0", id: 1, method: "ping" },
    { jsonrpc: "2.0", id: 1, method: 7 },
    { jsonrpc: "2.0", id: 3, method: "tools/call", params: [1, 2] },
    { jsonrpc: "2.0", id: null, method: "tools/call" },
    { jsonrpc: "2.0", id: 4, result: {}, error: { code: 1, message: "x" } },
  ]) {
    post(message);
  }
  assert.deepEqual(
    seen.refused.map((r) => [r.code, r.path]),
    [
      ["malformed", "$.jsonrpc"],
      ["malformed", "$.jsonrpc"],
      ["malformed", "$.jsonrpc"],
      ["malformed", "$.method"],
      ["malformed", "$.params"],
      ["malformed", "$.id"],
      ["malformed", "$"],
    ],
  );
  assert.deepEqual(seen.requests, []);
  assert.equal(seen.toApp.at(-1).id, 3, "a request with an id is answered");
  assert.equal(seen.toApp.at(-1).error.code, -32600);
});

test("methods this host does not answer: -32601, reported; the same id twice while waiting: refused", () => {
  const { post, seen, initialize } = raw({
    now: (() => {
      let t = 0;
      return () => (t += 2000);
    })(),
  });
  initialize();
  post({ jsonrpc: "2.0", id: 5, method: "sampling/createMessage", params: {} });
  assert.equal(seen.toApp.at(-1).error.code, METHOD_NOT_FOUND);
  assert.equal(seen.refused.at(-1)?.code, "method_not_found");
  post({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "a" } });
  post({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "b" } });
  assert.equal(seen.requests.length, 1);
  assert.equal(seen.refused.at(-1)?.code, "duplicate_id");
  post({ jsonrpc: "2.0", id: 7, method: "ui/initialize", params: {} });
  assert.equal(seen.refused.at(-1)?.code, "duplicate");
});

test("too large: a message over the limit is refused whole and recorded as a preview", () => {
  const { post, seen, initialize } = raw();
  initialize();
  post({
    jsonrpc: "2.0",
    id: 8,
    method: "tools/call",
    params: { name: "x", arguments: { s: "x".repeat(LIMITS.maxChars) } },
  });
  assert.deepEqual(seen.requests, []);
  assert.equal(seen.refused.at(-1)?.code, "too_large");
});

test("a flood: past the rate the excess is dropped before it costs anything, and said once a second", () => {
  let now = 0;
  const { post, seen, initialize } = raw({ now: () => now });
  initialize();
  for (let i = 0; i < 10_000; i++)
    post({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: i } });
  assert.equal(seen.sizes.length, 2 * LIMITS.perSecond - 2, "a burst of twice the rate, less initialize's two");
  assert.deepEqual(
    seen.refused.map((r) => r.code),
    ["flood"],
  );
  now = 1500;
  post({ jsonrpc: "2.0", id: 1, method: "ping" });
  assert.deepEqual(seen.toApp.at(-1), { jsonrpc: "2.0", id: 1, result: {} }, "the app is heard again");
});

test("requests waiting for the kernel are bounded", () => {
  const { post, seen, initialize } = raw();
  initialize();
  for (let i = 0; i < LIMITS.maxPending + 5; i++)
    post({ jsonrpc: "2.0", id: i + 100, method: "tools/call", params: { name: "t" } });
  assert.equal(seen.requests.length, LIMITS.maxPending);
  assert.equal(seen.refused.at(-1)?.code, "flood");
});

test("an answer of the kernel for another view, or one already given, is not this host's", () => {
  const { post, host, seen, initialize } = raw();
  initialize();
  post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "t" } });
  const { kernelId } = seen.requests[0];
  const sent = seen.toApp.length;
  assert.equal(host.respond("view2:1", { result: {} }), false);
  assert.equal(host.respond(kernelId, { result: { content: [] } }), true);
  assert.equal(host.respond(kernelId, { result: { content: [] } }), false);
  assert.equal(seen.toApp.length, sent + 1);
  assert.deepEqual(seen.toApp.at(-1), { jsonrpc: "2.0", id: 1, result: { content: [] } });
});

// ---- the inspector's traffic ---------------------------------------------------------------

test("traffic: batched, previews over 4 KiB, at most 50 items a second with the rest counted", () => {
  const now = 0;
  /** @type {Array<() => void>} */
  const timers = [];
  /** @type {any[][]} */
  const batches = [];
  const log = new TrafficLog((items) => batches.push(items), {
    now: () => now,
    later: (run) => timers.push(run),
  });
  log.push("from_app", { jsonrpc: "2.0", method: "ping", id: 1 });
  log.push("to_app", { jsonrpc: "2.0", id: 1, result: { s: "y".repeat(5000) } });
  assert.equal(timers.length, 1, "one flush scheduled for the window");
  /** @type {() => void} */ (timers.shift())();
  assert.equal(batches.length, 1);
  assert.deepEqual(batches[0][0], { dir: "from_app", message: { jsonrpc: "2.0", method: "ping", id: 1 } });
  assert.equal(batches[0][1].dir, "to_app");
  assert.equal(batches[0][1].message, undefined);
  assert.equal(batches[0][1].preview.length, 1000);
  assert.ok(batches[0][1].size > 5000);
  for (let i = 0; i < 200; i++) log.push("from_app", { i });
  /** @type {() => void} */ (timers.shift())();
  const last = batches[1];
  assert.equal(last.length, 48 + 1, "the 48 tokens left, then the count of the rest");
  assert.match(last.at(-1).preview, /^\(152 messages not recorded: over 50 a second\)$/);
});

test("ui/request-display-mode: never a mode the app did not declare in appCapabilities (SEP-1865 Display Modes)", async () => {
  const wired = setup();
  const app = new App(
    { name: "inline-only", version: "1.0.0" },
    { availableDisplayModes: ["inline"] },
    { autoResize: false },
  );
  await app.connect(wired.transport);
  await until(() => wired.host.initialized);
  assert.deepEqual(await app.requestDisplayMode({ mode: "fullscreen" }), { mode: "inline" });
  assert.equal(wired.context.displayMode, "inline");
});
