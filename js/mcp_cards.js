// The host view's MCP app cards (docs/mcp-apps.md), beside the surface cards: one card per
// open app (its heading: the app's title, server and tool; the grant card of the domains its
// resource declared; its notes), and in it one frame per generation (a grant rebuilds the
// frame with the new policy; the app initializes again and hears its tool's input and result
// again). Each frame is a shell frame holding the app's frame (mcp_frames.js) and spoken to
// by its own McpHost (mcp_host.js). The kernel holds the truth: a snapshot (a reload, a
// second view, a lost feed message) redraws the cards from it. Everything stops with the
// view's AbortSignal.

import { guardArea } from "./decision_input.js";
import { button, element, STYLED } from "./dom.js";
import { PROBE_TIMEOUT_MS, probeShell } from "./focus_guard.js";
import { SANDBOX, shellKey } from "./frames.js";
import { clip, visible } from "./honest_text.js";
import { appHeading, grantCard, NOTE_CHARS, NOTES_SHOWN, noteLine } from "./mcp_card_parts.js";
import { mcpAppDocument, mcpShellDocument } from "./mcp_frames.js";
import { DISPLAY_MODES, McpHost, TrafficLog } from "./mcp_host.js";
import { SURFACE_NAMESPACE } from "./protocol.generated.js";
import { SizeGuard } from "./state_queue.js";
import { pageMcpTheme } from "./theme.js";

/**
 * @typedef {import("./view_protocol.js").McpAppSpec} McpAppSpec
 * @typedef {import("./view_protocol.js").HostViewMessage} HostViewMessage
 * @typedef {import("./view_protocol.js").McpOpenOp | import("./view_protocol.js").McpCloseOp |
 *   import("./view_protocol.js").McpNotifyOp | import("./view_protocol.js").McpResponseOp |
 *   import("./view_protocol.js").McpNoteOp} McpOp
 * @typedef {{ min_height: number, max_height: number, events_per_second: number,
 *   stall_ms: number, shell_marks?: boolean }} McpCardsConfig
 * @typedef {{ app: AppCard, generation: number, shell: HTMLIFrameElement,
 *   source: Window | null, host: McpHost, traffic: TrafficLog, size: SizeGuard,
 *   stop: AbortController, ready: boolean, pingSent: number, pongSeen: number,
 *   stalled: boolean, inputSent: string, resultSent: boolean, cancelledSent: boolean,
 *   lastCsp: Map<string, number>, area: { meant(now: number): boolean },
 *   shellKey: string | null }} Frame
 * @typedef {{ spec: McpAppSpec, card: HTMLElement, header: HTMLElement, exit: HTMLElement,
 *   grants: HTMLElement, notes: HTMLElement, lines: HTMLElement, frame: Frame | null,
 *   mode: "inline" | "fullscreen", denied: Set<string>, closing: boolean }} AppCard
 */

/**
 * The height an app's frame starts at, until the app says its size (size-changed). An app
 * sized to its content shrinks or grows to it at once; an app sized to the viewport (`height:
 * 100vh`, a map, a graph) measures the frame it is in and keeps it: started at the least
 * height it stayed there (measured: 40 px for wiki-explorer and map).
 */
export const START_HEIGHT = 480;

/** @param {{ min_height: number, max_height: number }} config */
export function startHeight(config) {
  return Math.min(config.max_height, Math.max(config.min_height, START_HEIGHT));
}

/** How long a card waits for the app's answer to ui/resource-teardown before it goes. */
export const TEARDOWN_MS = 1000;

/** What the guard keeps an app from doing itself (bridge.js realmGuard's `blocked` kinds). */
export const APP_BLOCKED = /** @type {Record<string, string>} */ ({
  copy: "You copied in this app: what you copied is what it shows; its own copy handler was not run.",
  file: "This app tried to read a file itself; blocked.",
});
export const APP_SILENT =
  "This app did not start: none of its scripts ran (a syntax error? a script this host does not run: see docs/mcp-apps.md).";

export class McpCards {
  /**
   * @param {{ root: HTMLElement, config: McpCardsConfig, idPrefix: string,
   *   sendInOrder: (content: HostViewMessage) => void, signal: AbortSignal }} options
   */
  constructor({ root, config, idPrefix, sendInOrder, signal }) {
    this.root = root;
    this.config = config;
    this.idPrefix = idPrefix;
    this.sendInOrder = sendInOrder;
    this.signal = signal;
    /** @type {Map<string, AppCard>} */
    this.cards = new Map();
    /** @type {Map<string, { frame: Frame, resolve: (user: boolean) => void }>} by nonce */
    this.probes = new Map();
    /** @type {Map<Window, Frame>} the shell window -> its frame (S4: the sender decides) */
    this.bySource = new Map();
    /** @type {Set<Frame>} every frame alive, the closing ones too (their answers still route) */
    this.frames = new Set();
    signal.addEventListener("abort", () => {
      for (const app of [...this.cards.values()]) this.removeCard(app);
    });
    // A card's width, and the page's theme, are the app's host context.
    this.resizes = new ResizeObserver((entries) => {
      for (const entry of entries) {
        const app = [...this.cards.values()].find((card) => card.card === entry.target);
        app?.frame?.host.contextChanged();
      }
    });
    signal.addEventListener("abort", () => this.resizes.disconnect());
    const onKey = (/** @type {KeyboardEvent} */ event) => {
      if (event.key !== "Escape") return;
      for (const app of this.cards.values()) if (app.mode === "fullscreen") this.setMode(app, "inline");
    };
    document.addEventListener("keydown", onKey, { signal });
  }

  // ---- the kernel's picture ---------------------------------------------------------

  /** A snapshot: the cards become the kernel's list. @param {McpAppSpec[]} specs */
  reconcile(specs) {
    const wanted = new Map(specs.map((spec) => [spec.app_id, spec]));
    for (const app of [...this.cards.values()]) if (!wanted.has(app.spec.app_id)) this.removeCard(app);
    for (const spec of specs) this.open(spec);
  }

  /** One feed op. @param {McpOp} op */
  apply(op) {
    switch (op.op) {
      case "mcp_open":
        this.open(op.spec);
        return;
      case "mcp_close": {
        const app = this.cards.get(op.app_id);
        if (app) this.closeCard(app, false);
        return;
      }
      case "mcp_notify":
        this.notify(op.app_id, op.method, op.params);
        return;
      case "mcp_response":
        for (const frame of this.frames) {
          if (frame.app.spec.app_id === op.app_id && frame.host.respond(op.id, op)) return;
        }
        return;
      case "mcp_note": {
        const app = this.cards.get(op.app_id);
        if (app) this.kernelNote(app, op.text);
      }
    }
  }

  /** @param {McpAppSpec} spec */
  open(spec) {
    let app = this.cards.get(spec.app_id);
    if (!app) {
      app = this.mountCard(spec);
    } else {
      app.spec = spec;
      this.drawNotes(app);
    }
    if (spec.refused != null) {
      // Its resource was refused (too large, not an app): the card says why, where the user
      // looks for the app; there is no frame to build and nothing to grant.
      this.line(app, "refused", `Not shown: ${spec.refused}`);
      return;
    }
    this.drawGrants(app);
    if (app.frame?.generation !== spec.generation) {
      if (app.frame) this.retire(app.frame);
      app.frame = this.mountFrame(app);
    }
    this.replay(app.frame);
  }

  /** The tool's input and result as the kernel has them, each once per frame. @param {Frame} frame */
  replay(frame) {
    const { spec } = frame.app;
    const input = JSON.stringify(spec.arguments ?? {});
    if (frame.inputSent !== input) {
      frame.inputSent = input;
      frame.host.notify("ui/notifications/tool-input", { arguments: spec.arguments ?? {} });
    }
    if (spec.result && !frame.resultSent) {
      frame.resultSent = true;
      frame.host.notify("ui/notifications/tool-result", spec.result);
    }
    if (spec.cancelled != null && !frame.cancelledSent) {
      frame.cancelledSent = true;
      frame.host.notify("ui/notifications/tool-cancelled", { reason: spec.cancelled });
    }
  }

  /** @param {string} appId @param {string} method @param {Record<string, any>} params */
  notify(appId, method, params) {
    const app = this.cards.get(appId);
    if (!app?.frame) return;
    if (method === "ui/notifications/tool-input") app.spec.arguments = params.arguments ?? {};
    else if (method === "ui/notifications/tool-result") app.spec.result = params;
    else if (method === "ui/notifications/tool-cancelled") app.spec.cancelled = String(params.reason ?? "");
    else {
      app.frame.host.notify(method, params); // tool-input-partial: as it comes
      return;
    }
    this.replay(app.frame);
  }

  // ---- cards --------------------------------------------------------------------------

  /** @param {McpAppSpec} spec @returns {AppCard} */
  mountCard(spec) {
    const card = element("div", "lineup-surface lineup-mcp");
    card.dataset.appId = spec.app_id;
    if (spec.prefers_border === false) card.classList.add("lineup-mcp-borderless"); // _meta.ui.prefersBorder
    const header = element("div", "lineup-header");
    const heading = appHeading(spec);
    const title = element("span", "lineup-title", heading.title);
    title.append(element("span", "lineup-title-detail", ` · ${heading.detail}`));
    title.title = heading.tooltip;
    const exit = button(`lineup-mcp-exit ${STYLED}`, "Exit full screen (Esc)");
    exit.hidden = true;
    const close = button("lineup-close", "×");
    close.title = "Close this app";
    close.setAttribute("aria-label", `Close ${heading.title}`);
    header.append(title, exit, close);
    const grants = element("div", "lineup-mcp-grants");
    const notes = element("div", "lineup-mcp-notes");
    const lines = element("div", "lineup-mcp-lines");
    notes.setAttribute("role", "status");
    card.append(header, grants, notes, lines);
    this.root.append(card);
    /** @type {AppCard} */
    const app = {
      spec,
      card,
      header,
      exit,
      grants,
      notes,
      lines,
      frame: null,
      mode: "inline",
      denied: new Set(),
      closing: false,
    };
    exit.addEventListener("click", () => this.setMode(app, "inline"));
    close.addEventListener("click", () => this.closeCard(app, true));
    this.cards.set(spec.app_id, app);
    this.resizes.observe(card);
    this.drawNotes(app);
    return app;
  }

  /**
   * The user's close (told to the kernel) or the kernel's: the app hears
   * ui/resource-teardown first, for at most TEARDOWN_MS.
   * @param {AppCard} app @param {boolean} byUser
   */
  async closeCard(app, byUser) {
    if (app.closing) return;
    app.closing = true;
    this.cards.delete(app.spec.app_id);
    app.card.querySelector(".lineup-close")?.setAttribute("disabled", "");
    if (app.frame) {
      await app.frame.host.teardown(TEARDOWN_MS);
      app.frame.traffic.flush(); // the teardown's traffic, while the kernel still has the app
    }
    if (byUser) this.sendInOrder({ kind: "mcp_close", app_id: app.spec.app_id });
    this.removeCard(app);
  }

  /** At once (the view goes, or the kernel's list no longer has it). @param {AppCard} app */
  removeCard(app) {
    this.cards.delete(app.spec.app_id);
    if (app.frame) this.unmountFrame(app.frame);
    app.frame = null;
    this.resizes.unobserve(app.card);
    app.card.remove();
  }

  /** The grant card: each declared domain not yet answered, with Allow and Deny. @param {AppCard} app */
  drawGrants(app) {
    const nodes = grantCard(app.spec, app.denied, (directive, domain, allow) => {
      if (!allow) app.denied.add(`${directive} ${domain}`);
      this.sendInOrder({ kind: "mcp_grant", app_id: app.spec.app_id, directive, domain, allow });
      if (!allow) this.drawGrants(app);
    });
    app.grants.replaceChildren(...nodes);
    app.grants.hidden = nodes.length === 0;
  }

  /** The kernel's notes (ui/message, model context, refusals) as the spec keeps them. @param {AppCard} app */
  drawNotes(app) {
    app.notes.replaceChildren(...(app.spec.notes ?? []).slice(-NOTES_SHOWN).map(noteLine));
  }

  /** @param {AppCard} app @param {string} text */
  kernelNote(app, text) {
    app.spec.notes = [...(app.spec.notes ?? []), text].slice(-NOTES_SHOWN);
    app.notes.append(noteLine(text));
    while (app.notes.childElementCount > NOTES_SHOWN) app.notes.firstElementChild?.remove();
  }

  /** A line of the page's own (a refusal, a block), once per kind, the newest text. @param {AppCard} app @param {string} kind @param {string} text */
  line(app, kind, text) {
    let node = /** @type {HTMLElement | null} */ (app.lines.querySelector(`[data-kind="${kind}"]`));
    if (!node) {
      node = element("div", "lineup-blocked");
      node.dataset.kind = kind;
      node.setAttribute("role", "status");
      app.lines.append(node);
    }
    node.textContent = clip(visible(text, { multiline: true }), NOTE_CHARS).shown;
  }

  /**
   * An app's ui/request-display-mode. Full screen covers the notebook, so it is the user's:
   * granted only when the user has just clicked in the app (its shell, asked with a nonce,
   * has the user activation a click in the app gives its ancestors, and the pointer is over
   * the app; an app's script can give neither). Asked without, the app stays as it is and
   * the card says why (docs/mcp-apps.md).
   * @param {AppCard} app @param {Frame} frame @param {"inline" | "fullscreen"} mode
   * @returns {Promise<"inline" | "fullscreen">}
   */
  async requestMode(app, frame, mode) {
    if (mode !== "fullscreen" || app.mode === "fullscreen") return this.setMode(app, mode);
    // The click must be one the user meant for this app (js/decision_input.js): its frame stood
    // still and the pointer came onto it since, not an app that appeared under a click.
    if ((await this.userClicked(frame)) && frame.area.meant(performance.now())) return this.setMode(app, "fullscreen");
    this.sendInOrder({
      kind: "mcp_refused",
      app_id: app.spec.app_id,
      code: "no_user_gesture",
      message:
        "full screen asked for without a click in the app (the pointer must come onto the app after it stood still): it stays inline (a button in the app can ask)",
    });
    return app.mode;
  }

  /** Whether the user has just clicked in the frame's app (its shell answers). @param {Frame} frame */
  userClicked(frame) {
    return new Promise((resolve) => {
      const nonce = probeShell(frame.shell);
      const settle = (/** @type {boolean} */ user) => {
        clearTimeout(timer);
        this.probes.delete(nonce);
        resolve(user);
      };
      const timer = setTimeout(() => settle(false), PROBE_TIMEOUT_MS);
      frame.stop.signal.addEventListener("abort", () => settle(false), { once: true });
      this.probes.set(nonce, { frame, resolve: settle });
    });
  }

  /**
   * The shell's answer to `userClicked`; false when it is not one (then it is the focus
   * guard's, or a forgery the app made without the nonce).
   * @param {Frame} frame @param {unknown} nonce @param {boolean} user
   */
  probeAnswer(frame, nonce, user) {
    const probe = typeof nonce === "string" ? this.probes.get(nonce) : undefined;
    if (!probe || probe.frame !== frame) return false;
    probe.resolve(user);
    return true;
  }

  /**
   * A consent card or a question arrived: a full-screen app would hide it (only the top layer
   * is drawn), so every one returns inline, and its card says why.
   * @param {string} why
   */
  leaveFullscreen(why) {
    for (const app of this.cards.values()) {
      if (app.mode !== "fullscreen") continue;
      this.setMode(app, "inline");
      this.line(app, "fullscreen", `Full screen ended: ${why}`);
    }
  }

  /** @param {AppCard} app @param {"inline" | "fullscreen"} mode @returns {"inline" | "fullscreen"} */
  setMode(app, mode) {
    if (app.mode === mode) return mode;
    app.mode = mode;
    app.card.dataset.mode = mode;
    // Full screen is the top layer (a manual popover): position: fixed alone is relative to
    // JupyterLab's contained panels, and moving the card elsewhere would reload its frames.
    if (mode === "fullscreen") {
      app.card.setAttribute("popover", "manual");
      app.card.showPopover();
    } else if (app.card.hasAttribute("popover")) {
      app.card.hidePopover();
      app.card.removeAttribute("popover");
    }
    app.exit.hidden = mode !== "fullscreen";
    const frame = app.frame;
    if (frame) {
      frame.shell.style.height = mode === "fullscreen" ? "" : `${frame.size.current}px`;
      if (mode === "inline") frame.host.contextChanged(); // the app asked for fullscreen: it hears from its answer
    }
    return mode;
  }

  // ---- frames -----------------------------------------------------------------------

  /** @param {AppCard} app @returns {Frame} */
  mountFrame(app) {
    const { spec } = app;
    const { config } = this;
    const document_ = mcpAppDocument(spec.html, spec.granted);
    const shell = /** @type {HTMLIFrameElement} */ (element("iframe", "lineup-shell"));
    shell.setAttribute("sandbox", SANDBOX);
    shell.setAttribute("referrerpolicy", "no-referrer");
    shell.setAttribute("title", `MCP app ${spec.title || spec.tool}`);
    const height = startHeight(config);
    shell.style.height = `${height}px`;
    const key = shellKey(); // marks the shell's own reports (handle); `shell_marks: false`: the tests' control
    shell.srcdoc = mcpShellDocument(document_, 2 * config.events_per_second + 20, key);
    app.card.append(shell);
    const stop = new AbortController();
    this.signal.addEventListener("abort", () => stop.abort(), { signal: stop.signal });
    const appId = spec.app_id;
    const traffic = new TrafficLog((items) =>
      this.sendInOrder({ kind: "mcp_traffic", app_id: appId, items: /** @type {any} */ (items) }),
    );
    stop.signal.addEventListener("abort", () => traffic.flush());
    /** @type {Frame} */
    const frame = {
      app,
      generation: spec.generation,
      shell,
      source: shell.contentWindow,
      host: /** @type {any} */ (null),
      traffic,
      size: new SizeGuard(config.min_height, config.max_height, height),
      stop,
      ready: false,
      pingSent: 0,
      pongSeen: 0,
      stalled: false,
      inputSent: "",
      resultSent: false,
      cancelledSent: false,
      lastCsp: new Map(),
      area: guardArea(shell),
      shellKey: config.shell_marks === false ? null : key,
    };
    frame.host = new McpHost(
      {
        toApp: (message) => frame.source?.postMessage(message, "*"),
        request: (kernelId, method, params) =>
          this.sendInOrder({ kind: "mcp_request", app_id: appId, id: kernelId, method, params }),
        traffic: (dir, message) => traffic.push(dir, message),
        // The kernel records it and notes it on the card (mcp_note): one line, one home.
        refused: (code, message, path) =>
          this.sendInOrder({ kind: "mcp_refused", app_id: appId, code, message, ...(path ? { path } : {}) }),
        context: () => this.context(app),
        size: (height) => {
          const next = frame.size.next(height);
          if (next !== null && app.mode === "inline") shell.style.height = `${next}px`;
        },
        displayMode: (mode) => this.requestMode(app, frame, mode),
        initialized: () => {
          frame.ready = true;
        },
        teardownRequested: () => this.closeCard(app, true),
        log: (params) => this.line(app, "log", `Log (${String(params.level ?? "info")}): ${asText(params.data)}`),
      },
      {
        idPrefix: `${this.idPrefix}${spec.generation}:`,
        capabilities: {
          openLinks: {},
          serverTools: {},
          serverResources: {},
          logging: {},
          message: { text: {} },
          updateModelContext: { text: {}, structuredContent: {} },
          sandbox: { permissions: {}, csp: document_.sources },
        },
        signal: stop.signal,
      },
    );
    this.frames.add(frame);
    if (frame.source) this.bySource.set(frame.source, frame);
    for (const { directive, domain } of document_.invalid) {
      this.line(app, `invalid-${directive}`, `Not written into the policy: ${directive} ${domain}`);
    }
    if (document_.scripts === 0) this.line(app, "scripts", "This app's HTML has no inline script this host runs.");
    return frame;
  }

  /** A frame of an older generation: the app hears teardown, then it goes. @param {Frame} frame */
  retire(frame) {
    frame.shell.hidden = true;
    frame.host.teardown(TEARDOWN_MS).then(() => this.unmountFrame(frame));
  }

  /** @param {Frame} frame */
  unmountFrame(frame) {
    frame.host.close();
    frame.stop.abort();
    frame.shell.remove();
    this.frames.delete(frame);
    if (frame.source) this.bySource.delete(frame.source);
    if (frame.app.frame === frame) frame.app.frame = null;
  }

  /** The host context an app gets now. @param {AppCard} app */
  context(app) {
    const width = Math.round(app.card.clientWidth);
    const fullscreen = app.mode === "fullscreen";
    return {
      ...pageMcpTheme(),
      displayMode: app.mode,
      availableDisplayModes: [...DISPLAY_MODES],
      containerDimensions: fullscreen
        ? { width: window.innerWidth, height: Math.max(0, window.innerHeight - app.header.offsetHeight) }
        : { width, maxHeight: this.config.max_height },
      locale: navigator.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      platform: "web",
    };
  }

  /** The theme changed: every app hears it. */
  themeChanged() {
    for (const app of this.cards.values()) app.frame?.host.contextChanged();
  }

  /** Every frame the watchdog and the focus guard look after. @returns {Iterable<Frame>} */
  values() {
    return [...this.frames].filter((frame) => frame.app.frame === frame);
  }

  /**
   * The frame whose shell window sent a message (S4). A frame has a window only once it is
   * in the page, which may be after it was made.
   * @param {MessageEventSource | null} source
   */
  frameOf(source) {
    if (!source) return undefined;
    const known = this.bySource.get(/** @type {Window} */ (source));
    if (known) return known;
    for (const frame of this.frames) {
      if (frame.shell.contentWindow === source) {
        frame.source = frame.shell.contentWindow;
        this.bySource.set(frame.source, frame);
        return frame;
      }
    }
    return undefined;
  }

  /** @param {HTMLIFrameElement} shell */
  byShell(shell) {
    return [...this.frames].find((frame) => frame.shell === shell);
  }

  /**
   * What the frame's shell sent: the shell's own reports (the same as a surface's shell), or
   * the app's JSON-RPC, checked by its host.
   * @param {Frame} frame @param {any} message
   */
  handle(frame, message) {
    const { app } = frame;
    const report = message?.namespace === SURFACE_NAMESPACE ? message.type : null;
    // Only the shell's key makes a report the shell's (relay.js says why): without it, a
    // shell-only report is the app's message, checked and counted by its host; what the app
    // may report itself (csp, blocked) takes from its rate.
    const shells = frame.shellKey === null || message?.shell === frame.shellKey;
    if (!shells && (report === "too_large" || report === "dropped" || report === "silent")) {
      frame.host.receive(message);
      return;
    }
    if (!shells && (report === "csp" || report === "blocked") && !frame.host.take()) {
      frame.host.refuse("flood", `more than ${frame.host.limits.perSecond} messages a second: the excess is dropped`);
      return;
    }
    const refuse = (/** @type {string} */ code, /** @type {string} */ text) =>
      this.sendInOrder({ kind: "mcp_refused", app_id: app.spec.app_id, code, message: text });
    switch (report) {
      case "too_large":
        frame.host.refuse(
          "too_large",
          `a message over ${asText(message.limit)} characters as JSON: the shell refused it`,
        );
        return;
      case "dropped":
        refuse(
          "flood",
          `the app sent too many messages: ${asText(message.count)} dropped by its shell in the last second`,
        );
        return;
      case "silent":
        if (!frame.ready) refuse("silent", APP_SILENT);
        return;
      case "blocked": {
        const kind = asText(message.what);
        if (Object.hasOwn(APP_BLOCKED, kind)) refuse("blocked", APP_BLOCKED[kind]);
        return;
      }
      case "csp": {
        const directive = asText(message.directive);
        const now = performance.now();
        if (now - (frame.lastCsp.get(directive) ?? -Infinity) < 1000) return; // a loop is one story
        frame.lastCsp.set(directive, now);
        const blocked = asText(message.blocked);
        refuse("csp_violation", `Blocked by ${directive}: ${blocked}${cspHint(directive, blocked)}`);
        return;
      }
      default:
        frame.host.receive(message);
    }
  }

  /** The watchdog found a frame silent: offer to stop it. @param {Frame} frame */
  stalled(frame) {
    const seconds = Math.round(this.config.stall_ms / 1000);
    const app = frame.app;
    this.line(app, "stalled", `This app has not answered for ${seconds} s.`);
    const line = /** @type {HTMLElement} */ (app.lines.querySelector('[data-kind="stalled"]'));
    const stop = button("lineup-stop", "Stop it");
    stop.addEventListener("click", () => {
      this.sendInOrder({
        kind: "mcp_refused",
        app_id: app.spec.app_id,
        code: "unresponsive",
        message: `no answer to ping for ${seconds} s: the user stopped the app`,
      });
      this.removeCard(app); // a stuck app cannot hear teardown
      this.sendInOrder({ kind: "mcp_close", app_id: app.spec.app_id });
    });
    line.append(" ", stop);
  }

  /** It answers again. @param {Frame} frame */
  recovered(frame) {
    frame.app.lines.querySelector('[data-kind="stalled"]')?.remove();
  }

  /** The app took the keyboard without the user: it goes. @param {Frame} frame */
  stopStolen(frame) {
    const app = frame.app;
    this.sendInOrder({
      kind: "mcp_refused",
      app_id: app.spec.app_id,
      code: "focus_stolen",
      message: "the app moved the keyboard focus into its frame without the user's click or Tab; the host stopped it",
    });
    this.removeCard(app);
    this.sendInOrder({ kind: "mcp_close", app_id: app.spec.app_id });
  }
}

/**
 * What a CSP block means for an app, in the card's words.
 * @param {string} directive @param {string} blocked the URL, or "inline"
 */
export function cspHint(directive, blocked) {
  if (blocked === "inline") return " (only the app's own inline scripts run: no inline handler, no javascript: URL)";
  if (/^(connect|img|script|style|font|media)-src/.test(directive)) return " (not a domain you allowed)";
  return "";
}

/** @param {unknown} value */
function asText(value) {
  try {
    return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    return "(not text)";
  }
}
