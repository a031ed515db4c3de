// The host side of the MCP Apps `ui/*` JSON-RPC (MCP-DESIGN.md decision 2, docs/mcp-apps.md),
// for one app's frame, written by hand: the official `app-bridge` bundled came to 648 KB
// (zod and the client SDK), five times our whole host bundle, saved in every notebook. It is
// tested against the official App class instead (js/tests/mcp_host.test.js).
//
// Transport-agnostic: what the app sent comes in through `receive`, what goes to it leaves
// through the `toApp` port (in the host view: the shell frame's postMessage). What it cannot
// answer itself goes to the kernel (`request`: tools/call, ui/open-link, ui/message,
// ui/update-model-context, resources/read, answered by `respond`). Every message both ways is
// reported (`traffic`), and everything refused with a code and a reason (`refused`): messages
// that are not JSON-RPC, too large, a flood, requests before `initialized`, responses to ids
// this host never sent. Stops with its AbortSignal.

/** The protocol version this host speaks (the App SDK 2.0.4's LATEST_PROTOCOL_VERSION). */
export const PROTOCOL_VERSION = "2026-01-26";
export const HOST_INFO = Object.freeze({ name: "lineup-jupyter", version: "0.1.0" });
/** The app's requests the kernel answers (MCP-DESIGN.md, `mcp_request`). */
export const KERNEL_METHODS = new Set([
  "tools/call",
  "ui/open-link",
  "ui/message",
  "ui/update-model-context",
  "resources/read",
  "resources/list",
]);
export const DISPLAY_MODES = /** @type {const} */ (["inline", "fullscreen"]);

/** JSON-RPC error codes (and -32000: refused by the user or not allowed, the kernel's). */
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

/** Limits of one app, before anything it sends costs the kernel. */
export const LIMITS = Object.freeze({
  /** Characters of a message's JSON text: the shell's own limit (frames.js MAX_MESSAGE_CHARS). */
  maxChars: 64 * 1024,
  /** Messages a second from the app (a burst of twice that), past which they are dropped. */
  perSecond: 100,
  /** The app's requests waiting for the kernel at once. */
  maxPending: 32,
  /** Notifications kept for the app until it is initialized; and the app's own messages held
   * between the answer to its ui/initialize and its initialized. */
  maxQueued: 64,
});

/**
 * @typedef {string | number} RpcId
 * @typedef {{ code: number, message: string, data?: unknown }} RpcError
 * @typedef {"inline" | "fullscreen"} DisplayMode
 * @typedef {{
 *   toApp(message: object): void,
 *   request(kernelId: string, method: string, params: Record<string, unknown>): void,
 *   traffic(dir: "to_app" | "from_app", message: unknown): void,
 *   refused(code: string, message: string, path?: string): void,
 *   context(): Record<string, unknown>,
 *   size?(height: number, width: number | undefined): void,
 *   displayMode?(mode: DisplayMode): DisplayMode | Promise<DisplayMode>,
 *   initialized?(): void,
 *   teardownRequested?(): void,
 *   log?(params: Record<string, unknown>): void,
 * }} McpHostPorts
 * @typedef {{ idPrefix: string, capabilities: Record<string, unknown>, signal?: AbortSignal,
 *   now?: () => number, limits?: Partial<typeof LIMITS> }} McpHostOptions
 */

/** @param {unknown} value @returns {value is Record<string, unknown>} */
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** @param {unknown} id @returns {id is RpcId} */
function isId(id) {
  return (typeof id === "string" && id.length <= 256) || (typeof id === "number" && Number.isFinite(id));
}

/** A key for an id: 1 and "1" are two ids. @param {RpcId} id */
const keyOf = (id) => `${typeof id}:${id}`;

export class McpHost {
  /** @param {McpHostPorts} ports @param {McpHostOptions} options */
  constructor(ports, options) {
    this.ports = ports;
    this.options = options;
    this.limits = { ...LIMITS, ...options.limits };
    this.now = options.now ?? (() => performance.now());
    /** @type {"new" | "answered" | "initialized" | "closed"} */
    this.phase = "new";
    /** @type {string[] | null} the display modes the app declared (appCapabilities), if it did */
    this.appModes = null;
    /** @type {Map<string, RpcId>} the kernel's id of each waiting request -> the app's id */
    this.waiting = new Map();
    /** @type {Set<string>} the app's ids waiting (keyOf), so one id is never waited on twice */
    this.waitingIds = new Set();
    this.kernelCount = 0;
    /** @type {Map<string, { resolve: (message: any) => void, timer: unknown }>} our requests */
    this.ours = new Map();
    this.ourCount = 0;
    /** @type {Array<{ method: string, params: object }>} notifications before `initialized` */
    this.queue = [];
    /** @type {Array<() => void>} the app's messages between our initialize answer and its initialized */
    this.held = [];
    /** @type {Record<string, unknown>} the context as the app last heard it */
    this.sentContext = {};
    this.tokens = 2 * this.limits.perSecond;
    this.last = this.now();
    /** @type {Map<string, { at: number, more: number }>} refusals reported, per code */
    this.reports = new Map();
    options.signal?.addEventListener("abort", () => this.close());
  }

  get initialized() {
    return this.phase === "initialized";
  }

  // ---- the app -> the host ------------------------------------------------------

  /** What the app sent (anything: it is checked here). @param {unknown} message */
  receive(message) {
    if (this.phase === "closed") return;
    if (!this.take()) {
      this.refuse("flood", `more than ${this.limits.perSecond} messages a second: the excess is dropped`);
      return;
    }
    /** @type {string | undefined} */
    let text;
    try {
      text = JSON.stringify(message);
    } catch {
      text = undefined;
    }
    if (text === undefined) {
      this.refuse("malformed", "not JSON: a JSON-RPC message is a JSON object");
      return;
    }
    if (text.length > this.limits.maxChars) {
      this.ports.traffic("from_app", message);
      this.refuse("too_large", `a message of ${text.length} characters as JSON; the limit is ${this.limits.maxChars}`);
      return;
    }
    this.ports.traffic("from_app", message);
    if (!isObject(message) || message.jsonrpc !== "2.0") {
      this.refuse("malformed", 'not a JSON-RPC 2.0 message (an object with jsonrpc "2.0")', "$.jsonrpc");
      return;
    }
    if ("method" in message) {
      if (typeof message.method !== "string") {
        this.refuse("malformed", "method is not a string", "$.method");
        return;
      }
      if ("params" in message && message.params !== undefined && !isObject(message.params)) {
        this.invalid(message, "params is not an object", "$.params");
        return;
      }
      const params = isObject(message.params) ? message.params : {};
      if (!("id" in message)) this.notification(message.method, params);
      else if (!isId(message.id)) this.refuse("malformed", "id is not a string or a number", "$.id");
      else this.request(message.id, message.method, params);
      return;
    }
    this.response(message);
  }

  /** A flood is cut here: a token bucket of `perSecond`, bursts of twice that. */
  take() {
    const now = this.now();
    const rate = this.limits.perSecond;
    this.tokens = Math.min(2 * rate, this.tokens + ((now - this.last) / 1000) * rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** A request with a bad shape: refused, and answered when it has an id to answer. @param {Record<string, unknown>} message @param {string} reason @param {string} path */
  invalid(message, reason, path) {
    this.refuse("malformed", reason, path);
    if (isId(message.id)) this.error(message.id, INVALID_REQUEST, reason);
  }

  /** @param {RpcId} id @param {string} method @param {Record<string, unknown>} params */
  request(id, method, params) {
    if (method === "ping") {
      this.answer(id, {});
      return;
    }
    if (method === "ui/initialize") {
      if (this.phase !== "new") {
        this.refuse("duplicate", "ui/initialize again: an app initializes once per frame", "$.method");
        this.error(id, INVALID_REQUEST, "already initialized");
        return;
      }
      this.phase = "answered";
      // SEP-1865 Display Modes: never switch an app to a mode it did not declare, if it declared any.
      const declared = /** @type {any} */ (params.appCapabilities)?.availableDisplayModes;
      if (Array.isArray(declared)) this.appModes = declared.filter((mode) => typeof mode === "string");
      this.sentContext = this.ports.context();
      this.answer(id, {
        protocolVersion: PROTOCOL_VERSION,
        hostInfo: HOST_INFO,
        hostCapabilities: this.options.capabilities,
        hostContext: this.sentContext,
      });
      return;
    }
    if (this.phase === "answered") {
      this.hold(method, () => this.request(id, method, params), id);
      return;
    }
    if (this.phase !== "initialized") {
      const reason = `${method} before ui/notifications/initialized: only ui/initialize and ping may come first`;
      this.refuse("not_initialized", reason, "$.method");
      this.error(id, INVALID_REQUEST, reason);
      return;
    }
    if (method === "ui/request-display-mode") {
      void this.displayMode(params.mode).then((mode) => {
        if (this.phase === "closed") return;
        this.answer(id, { mode });
        this.contextChanged(); // after the answer
      });
      return;
    }
    if (!KERNEL_METHODS.has(method)) {
      this.refuse("method_not_found", `${method} is not a method this host answers`, "$.method");
      this.error(id, METHOD_NOT_FOUND, `${method} is not supported by this host`);
      return;
    }
    if (this.waitingIds.has(keyOf(id))) {
      this.refuse("duplicate_id", `id ${JSON.stringify(id)} is already waiting for an answer`, "$.id");
      this.error(id, INVALID_REQUEST, "this id is already waiting for an answer");
      return;
    }
    if (this.waiting.size >= this.limits.maxPending) {
      this.refuse("flood", `more than ${this.limits.maxPending} requests waiting at once`, "$");
      this.error(id, INVALID_REQUEST, "too many requests waiting");
      return;
    }
    // The kernel's id is this view's own (two views of one host each hold an app whose ids
    // start at 0, and both hear every answer); the app's id is put back in `respond`.
    this.kernelCount += 1;
    const kernelId = `${this.options.idPrefix}${this.kernelCount}`;
    this.waiting.set(kernelId, id);
    this.waitingIds.add(keyOf(id));
    this.ports.request(kernelId, method, params);
  }

  /** @param {string} method @param {Record<string, unknown>} params */
  notification(method, params) {
    if (method === "ui/notifications/initialized") {
      if (this.phase === "initialized") return; // said twice: nothing changes
      if (this.phase !== "answered") {
        this.refuse("not_initialized", "initialized before the answer to ui/initialize", "$.method");
        return;
      }
      this.phase = "initialized";
      for (const { method: queued, params: body } of this.queue.splice(0)) this.send({ method: queued, params: body });
      this.ports.initialized?.();
      for (const run of this.held.splice(0)) run(); // in the order the app sent them
      return;
    }
    if (this.phase === "answered") {
      this.hold(method, () => this.notification(method, params));
      return;
    }
    if (this.phase !== "initialized") {
      this.refuse("not_initialized", `${method} before ui/notifications/initialized`, "$.method");
      return;
    }
    switch (method) {
      case "ui/notifications/size-changed": {
        const height = Number(params.height);
        const width = params.width === undefined ? undefined : Number(params.width);
        if (Number.isFinite(height)) this.ports.size?.(height, width);
        return;
      }
      case "ui/notifications/request-teardown":
        this.ports.teardownRequested?.();
        return;
      case "notifications/message":
        this.ports.log?.(params);
        return;
      case "notifications/cancelled":
      case "notifications/tools/list_changed":
        return; // the kernel still answers a cancelled request; the answer is then dropped
      default:
        this.refuse("method_not_found", `${method} is not a notification this host takes`, "$.method");
    }
  }

  /** An answer from the app: only to a request of ours that waits. @param {Record<string, unknown>} message */
  response(message) {
    const hasResult = "result" in message;
    const hasError = "error" in message;
    if (!isId(message.id) || hasResult === hasError) {
      this.refuse("malformed", "neither a request, a notification nor a response", "$");
      return;
    }
    const waiting = this.ours.get(keyOf(message.id));
    if (!waiting) {
      this.refuse("forged_id", `a response to id ${JSON.stringify(message.id)}, which this host never sent`, "$.id");
      return;
    }
    this.ours.delete(keyOf(message.id));
    clearTimeout(/** @type {any} */ (waiting.timer));
    waiting.resolve(message);
  }

  // ---- the kernel and the card -> the app ---------------------------------------

  /**
   * A notification for the app (tool-input, tool-result, ...): kept until it is initialized.
   * @param {string} method @param {object} params
   */
  notify(method, params) {
    if (this.phase === "closed") return;
    if (this.phase === "initialized") this.send({ method, params });
    else if (this.queue.length < this.limits.maxQueued) this.queue.push({ method, params });
  }

  /**
   * The kernel's answer to one of the app's requests; one for another view, or for a request
   * already answered, is not ours.
   * @param {unknown} kernelId @param {{ result?: unknown, error?: RpcError }} answer
   * @returns {boolean} whether it was ours
   */
  respond(kernelId, answer) {
    const id = typeof kernelId === "string" ? this.waiting.get(kernelId) : undefined;
    if (id === undefined) return false;
    this.waiting.delete(/** @type {string} */ (kernelId));
    this.waitingIds.delete(keyOf(id));
    if (this.phase === "closed") return true;
    if (answer.error) this.error(id, answer.error.code, answer.error.message, answer.error.data);
    else this.answer(id, isObject(answer.result) ? answer.result : {});
    return true;
  }

  /** The host context changed (theme, size, display mode): the app hears what is new. */
  contextChanged() {
    if (this.phase !== "initialized") return;
    const now = this.ports.context();
    /** @type {Record<string, unknown>} */
    const changed = {};
    for (const [key, value] of Object.entries(now)) {
      if (JSON.stringify(value) !== JSON.stringify(this.sentContext[key])) changed[key] = value;
    }
    this.sentContext = now;
    if (Object.keys(changed).length) this.send({ method: "ui/notifications/host-context-changed", params: changed });
  }

  /**
   * A request of ours to the app; resolves with its response, or null after `ms`.
   * @param {string} method @param {object} params @param {number} ms
   * @returns {Promise<Record<string, unknown> | null>}
   */
  ask(method, params, ms) {
    if (this.phase === "closed") return Promise.resolve(null);
    this.ourCount += 1;
    const id = `host-${this.ourCount}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.ours.delete(keyOf(id));
        resolve(null);
      }, ms);
      this.ours.set(keyOf(id), { resolve, timer });
      this.send({ id, method, params });
    });
  }

  /** The watchdog's JSON-RPC ping: whether the app answered within `ms`. @param {number} ms */
  async ping(ms) {
    return (await this.ask("ping", {}, ms)) !== null;
  }

  /**
   * Before the card goes: ui/resource-teardown, waiting at most `ms` for the app's answer;
   * then this host is closed.
   * @param {number} ms
   */
  async teardown(ms) {
    if (this.phase === "initialized") await this.ask("ui/resource-teardown", {}, ms);
    this.close();
  }

  close() {
    if (this.phase === "closed") return;
    this.phase = "closed";
    for (const { resolve, timer } of this.ours.values()) {
      clearTimeout(/** @type {any} */ (timer));
      resolve(null);
    }
    this.ours.clear();
    this.queue = [];
    this.held = [];
  }

  /**
   * What the app sent after our answer to its ui/initialize and before its initialized: held,
   * in order, and handled once it says initialized, as if sent then. The App SDK sends
   * initialized only when the answer is back, a round trip through the shell and the page, and
   * an app that does not await that handshake (customer-segmentation calls its tool on a
   * 100 ms timer) would otherwise be refused whenever the round trip took longer. Before our
   * answer, and past `maxQueued` held, it is refused as before.
   * @param {string} method @param {() => void} run @param {RpcId} [id] a request's
   */
  hold(method, run, id) {
    if (this.held.length < this.limits.maxQueued) {
      this.held.push(run);
      return;
    }
    const reason = `${method} before ui/notifications/initialized: over ${this.limits.maxQueued} messages held until then`;
    this.refuse("not_initialized", reason, "$.method");
    if (id !== undefined) this.error(id, INVALID_REQUEST, reason);
  }

  // ---- helpers --------------------------------------------------------------------

  /** The mode the host sets (it may ask the user's side first). @param {unknown} mode @returns {Promise<DisplayMode>} */
  async displayMode(mode) {
    const current = /** @type {DisplayMode} */ (this.ports.context().displayMode ?? "inline");
    if (!DISPLAY_MODES.includes(/** @type {any} */ (mode)) || !this.ports.displayMode) return current;
    if (this.appModes && !this.appModes.includes(/** @type {string} */ (mode))) return current;
    return this.ports.displayMode(/** @type {DisplayMode} */ (mode));
  }

  /** @param {object} message */
  send(message) {
    const full = { jsonrpc: "2.0", ...message };
    this.ports.traffic("to_app", full);
    this.ports.toApp(full);
  }

  /** @param {RpcId} id @param {unknown} result */
  answer(id, result) {
    this.send({ id, result });
  }

  /** @param {RpcId} id @param {number} code @param {string} message @param {unknown} [data] */
  error(id, code, message, data) {
    this.send({ id, error: data === undefined ? { code, message } : { code, message, data } });
  }

  /**
   * Report a refusal: at most one a second for each code, the next one saying how many were
   * not reported meanwhile (a flood of refusals must not become a flood of comm messages).
   * @param {string} code @param {string} message @param {string} [path]
   */
  refuse(code, message, path) {
    const now = this.now();
    const seen = this.reports.get(code);
    if (seen && now - seen.at < 1000) {
      seen.more += 1;
      return;
    }
    const more = seen?.more ?? 0;
    this.reports.set(code, { at: now, more: 0 });
    this.ports.refused(code, more ? `${message} (and ${more} more refused before)` : message, path);
  }
}

/**
 * The traffic of one app for the inspector (`mcp_traffic`): batched, at most `perSecond`
 * items a second; a message over `maxChars` as JSON goes as its start and its size; what is
 * over the rate is counted and said.
 */
export class TrafficLog {
  /**
   * @param {(items: Array<Record<string, unknown>>) => void} send
   * @param {{ perSecond?: number, windowMs?: number, maxChars?: number, previewChars?: number,
   *   now?: () => number, later?: (run: () => void, ms: number) => unknown }} [options]
   */
  constructor(send, options = {}) {
    this.sendItems = send;
    this.perSecond = options.perSecond ?? 50;
    this.windowMs = options.windowMs ?? 250;
    this.maxChars = options.maxChars ?? 4096;
    this.previewChars = options.previewChars ?? 1000;
    this.now = options.now ?? (() => performance.now());
    this.later = options.later ?? ((run, ms) => setTimeout(run, ms));
    this.tokens = this.perSecond;
    this.last = this.now();
    /** @type {Array<Record<string, unknown>>} */
    this.items = [];
    /** @type {Record<string, number>} */
    this.dropped = {};
    this.scheduled = false;
  }

  /** @param {"to_app" | "from_app"} dir @param {unknown} message */
  push(dir, message) {
    const now = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    if (this.tokens < 1) {
      this.dropped[dir] = (this.dropped[dir] ?? 0) + 1;
    } else {
      this.tokens -= 1;
      this.items.push(this.item(dir, message));
    }
    if (!this.scheduled) {
      this.scheduled = true;
      this.later(() => this.flush(), this.windowMs);
    }
  }

  /** @param {"to_app" | "from_app"} dir @param {unknown} message */
  item(dir, message) {
    /** @type {string} */
    let text;
    try {
      text = JSON.stringify(message) ?? "undefined";
    } catch {
      text = "(not JSON)";
    }
    if (text.length <= this.maxChars) return { dir, message };
    return { dir, preview: text.slice(0, this.previewChars), size: text.length };
  }

  flush() {
    this.scheduled = false;
    for (const [dir, count] of Object.entries(this.dropped)) {
      this.items.push({ dir, preview: `(${count} messages not recorded: over ${this.perSecond} a second)`, size: 0 });
    }
    this.dropped = {};
    if (this.items.length) this.sendItems(this.items.splice(0));
  }
}
