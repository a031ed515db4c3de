// The anywidget view of a Host: one card per open surface, each a shell frame holding the
// surface frame. The kernel holds the truth; a view can always be rebuilt from it (a page
// reload, an unmounted cell, a second view of the same output).
//
// Kernel -> view, custom messages:  {kind: "snapshot", seq, surfaces, components} (to "sync")
//                                   {kind: "feed", seq, ops}: each change alone (deltas.js)
//                                   {kind: "answer_refused", component_id, message}
// View -> kernel:                   {kind: "sync"} | {kind: "event", instance_id, message}
//                                   {kind: "events", items: [{kind: "event", ...}, ...]}
//                                   {kind: "close", instance_id} | {kind: "refused", ...}
//                                   {kind: "answer", component_id, status, value?}
// The standard components are drawn by components.js from the `components` list.

import { AGENTS_STYLE, mountAgents } from "./agents.js";
import { COMPONENT_STYLE, mountComponents } from "./components.js";
import { FeedSequence, applyOp, replaceAll } from "./deltas.js";
import { button, element } from "./dom.js";
import { guardFocus } from "./focus_guard.js";
import { SANDBOX, shellDocument, surfaceDocument } from "./frames.js";
import { PROBLEMS_STYLE, mountProblems } from "./problems.js";
import { mountPrompts } from "./prompts.js";
import { SURFACE_NAMESPACE } from "./protocol.generated.js";
import { surfaceHeading } from "./surface_heading.js";
import { EventBatcher, RateLimit, SizeGuard, StateQueue } from "./state_queue.js";
import { validateSurfaceMessage } from "./surface_message.js";
import { trustText } from "./trust.js";

/**
 * @typedef {{ id: string, version?: string, name?: string | null }} AppInfo
 * @typedef {{ instance_id: string, generation: number, revision: number, app: AppInfo,
 *   html: string, css: string, js: string, state: object, owner?: string }} SurfaceSpec
 * @typedef {{ min_height: number, max_height: number, events_per_second: number,
 *   event_burst: number, sync_timeout_ms: number, ping_ms: number, stall_ms: number,
 *   restart_ms: number, focus_guard?: boolean,
 *   trust?: import("./trust.js").TrustSummary }} ViewConfig
 * @typedef {{ spec: SurfaceSpec, card: HTMLElement, shell: HTMLIFrameElement,
 *   source: Window | null, ready: boolean, size: SizeGuard, rate: RateLimit,
 *   lastDropReport: number, lastCspReport: number, pingSent: number, pongSeen: number,
 *   stalled: boolean }} Entry
 * @typedef {{ get(name: string): any, set(name: string, value: any): void, send(content: object): void,
 *   on(name: string, callback: (...args: any[]) => void): void,
 *   off(name: string, callback: (...args: any[]) => void): void }} Model
 */

// Events travel one comm message each while the view sends fewer than this many a second, then
// together, one message per window (see EventBatcher).
const EVENTS_ALONE_PER_SECOND = 20;
const EVENT_WINDOW_MS = 100;

/** What the bridge keeps a surface from doing itself, and what to use instead (C8, H21). */
const BLOCKED = /** @type {Record<string, string>} */ ({
  copy: "This surface tried to change what you copy; blocked. An app writes the clipboard with clipboard.write, after you allow it.",
  file: "This surface tried to read a file itself; blocked. An app reads a file you pick with device.pick_file, after you allow it.",
});
/** Said when a surface never spoke: its one script (bridge + js) did not run. */
const SILENT =
  "This surface did not start: its script did not run (a syntax error in its js? the browser console says).";
/** Said with a blocked script: only the bundle's js runs in a surface (docs/security.md). */
const SCRIPT_HINT =
  " (a surface runs only its bundle's js: no <script> in its html, no inline on* handler, no eval)";

/** Variables a surface gets (as --lineup-NAME) from JupyterLab's theme. */
const THEME_VARIABLES = [
  ["--lineup-background", "--jp-layout-color0"],
  ["--lineup-surface", "--jp-layout-color1"],
  ["--lineup-text", "--jp-ui-font-color1"],
  ["--lineup-muted", "--jp-ui-font-color2"],
  ["--lineup-border", "--jp-border-color2"],
  ["--lineup-accent", "--jp-brand-color1"],
  ["--lineup-error", "--jp-error-color1"],
  ["--lineup-font", "--jp-ui-font-family"],
  ["--lineup-code-font", "--jp-code-font-family"],
];

/** @param {Model} model @returns {ViewConfig} */
function configOf(model) {
  return {
    min_height: 40,
    max_height: 800,
    events_per_second: 50,
    event_burst: 100,
    sync_timeout_ms: 5000,
    ping_ms: 2000,
    stall_ms: 5000,
    restart_ms: 1500,
    ...model.get("config"),
  };
}

// Host chrome only; what a surface shows is its own business inside its frame. Colours come
// from JupyterLab's theme variables so light and dark both read well.
const STYLE = `
.lineup-host { display: flex; flex-direction: column; gap: 8px; font-family: var(--jp-ui-font-family, sans-serif); }
.lineup-surface { border: 1px solid var(--jp-border-color2, #ddd); border-radius: 6px; overflow: hidden; background: var(--jp-layout-color0, #fff); }
.lineup-header { display: flex; align-items: center; justify-content: space-between; padding: 2px 4px 2px 8px; font-size: 12px; color: var(--jp-ui-font-color2, #666); background: var(--jp-layout-color2, #f3f3f3); }
.lineup-title-detail { opacity: 0.8; }
.lineup-close { border: 0; background: transparent; font-size: 16px; line-height: 1; cursor: pointer; color: inherit; padding: 2px 6px; }
.lineup-close:focus-visible { outline: 2px solid var(--jp-brand-color1, #1976d2); }
.lineup-shell { display: block; width: 100%; border: 0; }
.lineup-status, .lineup-stalled, .lineup-blocked { font-size: 12px; padding: 4px 8px; color: var(--jp-warn-color0, #a66); }
.lineup-stop { margin-left: 8px; }
.lineup-trust { font-size: 11px; color: var(--jp-ui-font-color2, #666); }
.lineup-trust[data-mode="strict"] { color: var(--jp-success-color1, #2e7d32); }
`;

/** @param {{ model: Model, el: HTMLElement, signal?: AbortSignal }} context */
function render({ model, el, signal }) {
  const config = configOf(model);
  const style = document.createElement("style");
  style.textContent = STYLE + COMPONENT_STYLE + AGENTS_STYLE + PROBLEMS_STYLE;
  el.append(style);
  const root = element("div", "lineup-host");
  const status = element("div", "lineup-status");
  status.hidden = true;
  // The standard components (markdown, questions...) come first, then the surfaces.
  const componentList = element("div", "lineup-components");
  // Which inline bundles may open here (H37): the user should never have to guess.
  const trust = element("div", "lineup-trust", trustText(config.trust));
  trust.dataset.mode = config.trust?.mode ?? "dev";
  const agentList = element("div", "lineup-agents");
  agentList.setAttribute("role", "status");
  // What the user's handlers raised: in the surface's card when it has one, else here.
  const problemList = element("div", "lineup-handler-problems");
  root.append(trust, agentList, problemList, status, componentList);
  const stopAgents = mountAgents({ model, container: agentList });
  el.append(root);

  // Without a kernel (a notebook reopened, a kernel that died) sending throws: the view then
  // stays as it is, read-only, instead of breaking.
  const send = (/** @type {object} */ content) => {
    try {
      model.send(content);
    } catch (error) {
      console.warn("[lineup] the kernel is not reachable:", error);
    }
  };

  // What the user did before the kernel answered the first sync (a click on a surface that
  // just appeared) waits, in order, instead of being lost; a view that never connects keeps
  // only the first few and stays read-only.
  /** @type {object[]} */
  const early = [];
  const sendNow = (/** @type {object} */ content) => {
    if (connected) send(content);
    else if (early.length < 100) early.push(content);
  };
  // Surface events to the kernel, batched when they come thick; any other message first lets
  // the waiting events go, so the kernel hears everything in the order it happened.
  const events = new EventBatcher(sendNow, (items) => sendNow({ kind: "events", items }), {
    windowMs: EVENT_WINDOW_MS,
    batchAbove: EVENTS_ALONE_PER_SECOND,
  });
  const sendWhenConnected = (/** @type {object} */ content) => {
    events.flush();
    sendNow(content);
  };

  const components = mountComponents({ model, container: componentList, send: sendWhenConnected });

  // Consent cards of waiting app.calls, above everything else and outside every surface.
  const stopPrompts = mountPrompts({ model, root, send });
  /** @type {Map<string, Entry>} */
  const entries = new Map();
  const stopProblems = mountProblems({
    model,
    container: problemList,
    slotFor: (instanceId) => entries.get(instanceId)?.card ?? null,
  });
  /** @type {Map<Window, Entry>} shell window -> entry: S4, the sender decides the instance */
  const bySource = new Map();
  let connected = false;
  let frame = 0;

  const queue = new StateQueue((instanceId, item) => {
    const entry = entries.get(instanceId);
    entry?.source?.postMessage(
      { namespace: SURFACE_NAMESPACE, type: "state", revision: item.revision, state: item.state },
      "*",
    );
  });
  // A state goes out at once when the surface has had none for a frame (no added latency),
  // and otherwise waits for the next animation frame, taking only the newest (coalescing).
  let lastFlush = -Infinity;
  const flush = () => {
    frame = 0;
    lastFlush = performance.now();
    queue.flush((id) => entries.get(id)?.ready ?? false);
  };
  const schedule = () => {
    if (frame) return;
    if (performance.now() - lastFlush > 16) {
      frame = -1; // a microtask is pending: later calls in this task join it
      queueMicrotask(flush);
    } else {
      frame = requestAnimationFrame(flush);
    }
  };

  /** @param {SurfaceSpec} spec */
  function mount(spec) {
    const card = element("div", "lineup-surface");
    card.dataset.instanceId = spec.instance_id;
    const header = element("div", "lineup-header");
    const heading = surfaceHeading(spec);
    const title = element("span", "lineup-title", heading.title);
    if (heading.detail) title.append(element("span", "lineup-title-detail", ` · ${heading.detail}`));
    title.title = heading.tooltip;
    const close = button("lineup-close", "×");
    close.title = "Close this surface";
    close.setAttribute("aria-label", `Close ${spec.app.name || spec.app.id}`);
    close.addEventListener("click", () => {
      sendWhenConnected({ kind: "close", instance_id: spec.instance_id });
    });
    header.append(title, close);
    const shell = /** @type {HTMLIFrameElement} */ (element("iframe", "lineup-shell"));
    shell.setAttribute("sandbox", SANDBOX);
    shell.setAttribute("referrerpolicy", "no-referrer");
    shell.setAttribute("title", `surface ${spec.instance_id}`);
    shell.style.height = `${config.min_height}px`;
    shell.srcdoc = shellDocument(surfaceDocument(spec), 2 * config.events_per_second + 20);
    card.append(header, shell);
    root.append(card);
    /** @type {Entry} */
    const entry = {
      spec,
      card,
      shell,
      source: shell.contentWindow,
      ready: false,
      size: new SizeGuard(config.min_height, config.max_height),
      rate: new RateLimit(config.events_per_second, config.event_burst),
      lastDropReport: 0,
      lastCspReport: 0,
      pingSent: 0,
      pongSeen: 0,
      stalled: false,
    };
    entries.set(spec.instance_id, entry);
    if (entry.source) bySource.set(entry.source, entry);
    return entry;
  }

  /** @param {Entry} entry */
  function unmount(entry) {
    entry.card.remove();
    entries.delete(entry.spec.instance_id);
    if (entry.source) bySource.delete(entry.source);
    queue.reset(entry.spec.instance_id);
  }

  /**
   * Queue a state for a surface, keeping it as the newest known (a re-made frame needs it).
   * @param {Entry} entry @param {number} revision @param {object} state
   */
  function remember(entry, revision, state) {
    if (!queue.push(entry.spec.instance_id, { revision, state })) return false;
    entry.spec = { ...entry.spec, revision, state };
    return true;
  }

  /** Make the cards match the kernel's list. @param {SurfaceSpec[]} surfaces */
  function reconcile(surfaces) {
    const wanted = new Set();
    for (const spec of surfaces) {
      wanted.add(spec.instance_id);
      let entry = entries.get(spec.instance_id);
      if (entry && entry.spec.generation !== spec.generation) {
        unmount(entry); // U1, U5: a new bundle is a new frame, never a patched one
        entry = undefined;
      }
      entry ??= mount(spec);
      remember(entry, spec.revision, spec.state);
    }
    for (const entry of [...entries.values()]) {
      if (!wanted.has(entry.spec.instance_id)) unmount(entry);
    }
    schedule();
  }

  /** The notebook's theme, for surfaces to follow: light or dark, and a few colours. */
  const theme = () => {
    const styles = getComputedStyle(document.body);
    /** @type {Record<string, string>} */
    const vars = {};
    for (const [name, source] of THEME_VARIABLES) vars[name] = styles.getPropertyValue(source).trim();
    const light = document.body.dataset.jpThemeLight;
    const mode = light === "false" ? "dark" : "light";
    return { namespace: SURFACE_NAMESPACE, type: "theme", mode, vars };
  };
  const sendTheme = (/** @type {Entry} */ entry) => entry.source?.postMessage(theme(), "*");
  const themeWatch = new MutationObserver(() => {
    for (const entry of entries.values()) if (entry.ready) sendTheme(entry);
  });
  themeWatch.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"] });

  // A surface stuck in an endless loop freezes every surface that shares its process
  // (measured); the page itself stays responsive, so the host notices the silence and offers
  // to stop it. Removing the frame is what frees the others.
  const pinger = setInterval(() => {
    const now = performance.now();
    for (const entry of entries.values()) {
      if (!entry.ready) continue;
      if (!entry.stalled && entry.pingSent > entry.pongSeen && now - entry.pingSent > config.stall_ms) {
        stall(entry);
      }
      if (entry.pongSeen >= entry.pingSent || entry.stalled) {
        entry.pingSent = now;
        entry.source?.postMessage({ namespace: SURFACE_NAMESPACE, type: "ping", n: now }, "*");
      }
    }
  }, config.ping_ms);

  /** @param {Entry} entry */
  function stall(entry) {
    entry.stalled = true;
    const notice = element("div", "lineup-stalled");
    notice.setAttribute("role", "alert");
    notice.append(`This surface has not answered for ${Math.round(config.stall_ms / 1000)} s. `);
    const stop = button("lineup-stop", "Stop it");
    stop.addEventListener("click", () => {
      // Frames that share a stuck renderer process stay stuck until every one of them is
      // gone (measured). So all silent frames go; the others come back as fresh frames with
      // their latest state, and this one is closed.
      const survivors = [...entries.values()].filter((other) => other.stalled && other !== entry);
      for (const other of survivors) unmount(other);
      entry.shell.remove();
      // Give the browser a moment to drop the stuck process, or new frames join it.
      setTimeout(() => {
        for (const other of survivors) {
          if (!entries.has(other.spec.instance_id)) remember(mount(other.spec), other.spec.revision, other.spec.state);
        }
        schedule();
      }, config.restart_ms);
      notice.textContent = "Stopped.";
      refuse(entry, {
        code: "unresponsive",
        rule: "S4",
        path: "$",
        message: `no answer for ${Math.round(config.stall_ms / 1000)} s: the user stopped the surface`,
      });
      sendWhenConnected({ kind: "close", instance_id: entry.spec.instance_id });
    });
    notice.append(stop);
    entry.card.insertBefore(notice, entry.shell);
  }

  /** @param {Entry} entry */
  function recover(entry) {
    entry.stalled = false;
    entry.card.querySelector(".lineup-stalled")?.remove();
  }

  /** @param {Entry} entry @param {object} report */
  const refuse = (entry, report) => {
    sendWhenConnected({ kind: "refused", instance_id: entry.spec.instance_id, ...report });
  };

  /**
   * The entry whose shell window sent a message (S4: the sender decides the instance). A
   * frame has a window only once the view is in the page, which may be after render.
   * @param {MessageEventSource | null} source
   */
  function entryOf(source) {
    if (!source) return undefined;
    const known = bySource.get(/** @type {Window} */ (source));
    if (known) return known;
    for (const entry of entries.values()) {
      if (entry.shell.contentWindow === source) {
        entry.source = entry.shell.contentWindow;
        bySource.set(entry.source, entry);
        return entry;
      }
    }
    return undefined;
  }

  /**
   * A refusal counts against the surface's event rate limit like an event (a flood of refused
   * messages is still a flood), and travels batched with the events: the kernel sees at most
   * the limit, and one rate_limited report a second for the rest.
   * @param {Entry} entry @param {{ code: string, rule: string, path: string, message: string }} report
   */
  function refuseCounted(entry, report) {
    if (!entry.rate.take()) {
      tooMany(entry);
      return;
    }
    events.push({ kind: "refused", instance_id: entry.spec.instance_id, ...report });
  }

  /** @param {Entry} entry */
  function tooMany(entry) {
    const now = performance.now();
    if (now - entry.lastDropReport > 1000) {
      entry.lastDropReport = now;
      refuse(entry, {
        code: "rate_limited",
        rule: "S4",
        path: "$",
        message: `more than ${config.events_per_second} messages per second: the excess is dropped`,
      });
    }
  }

  /**
   * Said once per kind in the surface's card, where the user looks, and to its agent.
   * @param {Entry} entry @param {string} kind @param {{ code: string, rule: string, message: string }} report
   */
  function notice(entry, kind, report) {
    if (entry.card.querySelector(`.lineup-blocked[data-what="${kind}"]`)) return;
    const line = element("div", "lineup-blocked", report.message);
    line.dataset.what = kind;
    line.setAttribute("role", "status");
    entry.card.insertBefore(line, entry.shell);
    refuse(entry, { ...report, path: "$" });
  }

  /**
   * What the bridge kept a surface from doing itself, with the capability that does it with
   * consent.
   * @param {Entry} entry @param {unknown} what
   */
  function blocked(entry, what) {
    const kind = String(what);
    if (!Object.hasOwn(BLOCKED, kind)) return; // the surface names it: only ours are shown
    notice(entry, kind, { code: "unsupported", rule: "H21", message: BLOCKED[kind] });
  }

  /**
   * A surface's script problem, to the kernel (host.problems), as text and bounded.
   * @param {Entry} entry @param {{ level?: unknown, text?: unknown, stack?: unknown }} report
   */
  function surfaceProblem(entry, report) {
    sendWhenConnected({
      kind: "surface_problem",
      instance_id: entry.spec.instance_id,
      level: String(report.level).slice(0, 32),
      text: String(report.text).slice(0, 500),
      stack: typeof report.stack === "string" ? report.stack.slice(0, 4000) : "",
    });
  }

  /** @param {MessageEvent} event */
  function onMessage(event) {
    const entry = entryOf(event.source);
    if (!entry) return; // not one of our frames: not ours to read
    const message = event.data;
    // The shell's answer (js/focus_guard.js); one without the probe's nonce is the surface's
    // and is refused like any other message it may not send.
    if (message?.type === "focus_answer" && focus?.answer(entry.shell, message.nonce, message.user === true)) return;
    // Nothing a surface sends reaches the kernel while focus is in it without the user
    // having put it there (the keys it got would go with it): it waits for the page to know.
    if (focus) focus.gate(entry.shell, () => handle(entry, message));
    else handle(entry, message);
  }

  /** @param {Entry} entry @param {any} message */
  function handle(entry, message) {
    if (message?.namespace !== SURFACE_NAMESPACE) {
      refuseCounted(entry, { code: "invalid", rule: "U7", path: "$.namespace", message: "not a surface message" });
      return;
    }
    if (message.type === "ready") {
      if (entry.ready) return; // once a frame: repeating it costs the page nothing more
      entry.ready = true;
      sendTheme(entry);
      schedule();
    } else if (message.type === "pong") {
      entry.pongSeen = performance.now();
      if (entry.stalled) recover(entry);
    } else if (message.type === "dropped") {
      refuse(entry, {
        code: "rate_limited",
        rule: "S4",
        path: "$",
        message: `the surface sent too many messages: ${Number(message.count)} dropped in the last second`,
      });
    } else if (message.type === "too_large") {
      refuseCounted(entry, {
        code: "too_large",
        rule: "U9",
        path: "$",
        message: `the message is over ${Number(message.limit)} characters as JSON: the shell refused it`,
      });
    } else if (message.type === "blocked") {
      blocked(entry, message.what);
    } else if (message.type === "silent") {
      if (entry.ready) return;
      notice(entry, "silent", { code: "invalid", rule: "U4", message: SILENT });
      surfaceProblem(entry, { level: "silent", text: SILENT });
    } else if (message.type === "problem") {
      // The bridge's report of the bundle's own error (issue 15): shown in the host view
      // and host.problems, within the surface's rate like an event.
      if (!entry.rate.take()) tooMany(entry);
      else surfaceProblem(entry, message);
    } else if (message.type === "csp") {
      const now = performance.now();
      if (now - entry.lastCspReport > 1000) {
        entry.lastCspReport = now; // at most one report a second: a loop of violations is one story
        const directive = String(message.directive);
        refuse(entry, {
          code: "csp_violation",
          rule: "S3",
          path: "$",
          message:
            `blocked by ${directive}: ${String(message.blocked)}` +
            (directive.startsWith("script-src") ? SCRIPT_HINT : ""),
        });
      }
    } else if (message.type === "resize") {
      const height = entry.size.next(Number(message.height));
      if (height !== null) entry.shell.style.height = `${height}px`;
    } else if (!entry.rate.take()) {
      tooMany(entry);
    } else {
      const verdict = validateSurfaceMessage(message);
      if (!verdict.ok) {
        const { code, rule, path, message: text } = verdict;
        events.push({ kind: "refused", instance_id: entry.spec.instance_id, code, rule, path, message: text });
      } else {
        events.push({
          kind: "event",
          instance_id: entry.spec.instance_id,
          message: { namespace: SURFACE_NAMESPACE, type: "event", event: verdict.event, data: verdict.data },
        });
      }
    }
  }

  /** The model's own lists: edited in place, they are what a saved notebook keeps. */
  const picture = () => ({ surfaces: listOf("surfaces"), components: listOf("components") });
  /** @param {string} name @returns {any[]} */
  const listOf = (name) => {
    const list = model.get(name);
    if (Array.isArray(list)) return list;
    const made = /** @type {any[]} */ ([]);
    model.set(name, made);
    return made;
  };
  const feed = new FeedSequence();
  const resync = () => {
    feed.lost();
    send({ kind: "sync" });
  };

  /** Make this view's card of one surface match the picture. @param {string} instanceId */
  function redrawSurface(instanceId) {
    const spec = picture().surfaces.find((item) => item.instance_id === instanceId);
    let entry = entries.get(instanceId);
    if (!spec) {
      if (entry) unmount(entry);
      return;
    }
    if (entry && entry.spec.generation !== spec.generation) {
      unmount(entry); // U1, U5: a new bundle is a new frame, never a patched one
      entry = undefined;
    }
    entry ??= mount(spec);
    remember(entry, spec.revision, spec.state);
    schedule();
  }

  /** @param {any} content */
  function onCustom(content) {
    if (content?.kind === "snapshot") {
      connected = true;
      for (const content of early.splice(0)) send(content);
      status.hidden = true;
      const lists = picture();
      replaceAll(lists.surfaces, content.surfaces ?? []);
      replaceAll(lists.components, content.components ?? []);
      feed.snapshot(Number(content.seq));
      reconcile(lists.surfaces);
      components.reconcile();
    } else if (content?.kind === "feed") {
      const verdict = feed.next(Number(content.seq));
      if (verdict === "gap") resync();
      if (verdict !== "take") return;
      const lists = picture();
      for (const op of content.ops ?? []) {
        const applied = applyOp(lists, op);
        if (applied === null) continue;
        if ("gap" in applied) {
          resync();
          return;
        }
        if ("surface" in applied) redrawSurface(applied.surface);
        else components.redraw(applied.component);
      }
    } else if (content?.kind === "answer_refused") {
      components.refused(String(content.component_id), String(content.message));
    }
  }

  // Focus belongs to the page (js/focus_guard.js). `focus_guard: false` in the view's config
  // turns it off: only the tests' control, which proves their detector sees a theft, does.
  const guard = new AbortController();
  const focus =
    config.focus_guard === false
      ? null
      : guardFocus({
          shells: () => Array.from(entries.values(), (entry) => entry.shell),
          probe: (shell, nonce) => shell.contentWindow?.postMessage({ namespace: SURFACE_NAMESPACE, type: "focus_probe", nonce }, "*"),
          stolen: (shell) => {
            const entry = [...entries.values()].find((candidate) => candidate.shell === shell);
            if (entry) stopStolen(entry);
          },
          signal: guard.signal,
        });

  /** A surface took the keyboard without the user: it goes, with what it got. @param {Entry} entry */
  function stopStolen(entry) {
    const name = entry.spec.app.name || entry.spec.app.id;
    const notice = element(
      "div",
      "lineup-stalled",
      `Stopped ${name} (${entry.spec.instance_id}): it took the keyboard without your click or Tab. ` +
        "Your typing went back to the notebook; what the surface received meanwhile was discarded.",
    );
    notice.setAttribute("role", "alert");
    root.insertBefore(notice, componentList);
    unmount(entry);
    refuse(entry, {
      code: "focus_stolen",
      rule: "S2",
      path: "$",
      message: "the surface moved the keyboard focus into its frame without the user's click or Tab; the host stopped it",
    });
    sendWhenConnected({ kind: "close", instance_id: entry.spec.instance_id });
  }

  const onSurfaces = () => reconcile(model.get("surfaces"));
  model.on("msg:custom", onCustom);
  model.on("change:surfaces", onSurfaces);
  window.addEventListener("message", onMessage);
  reconcile(model.get("surfaces"));
  send({ kind: "sync" });
  const timer = setTimeout(() => {
    if (connected) return;
    status.textContent = "Disconnected: showing the last saved state, read-only. Run the cell again to reconnect.";
    status.hidden = false;
  }, config.sync_timeout_ms);

  const cleanup = () => {
    events.flush(); // what the user did last still reaches the kernel
    clearTimeout(timer);
    clearInterval(pinger);
    guard.abort();
    themeWatch.disconnect();
    if (frame > 0) cancelAnimationFrame(frame);
    model.off("msg:custom", onCustom);
    model.off("change:surfaces", onSurfaces);
    stopPrompts();
    stopAgents();
    stopProblems();
    window.removeEventListener("message", onMessage);
    for (const entry of [...entries.values()]) unmount(entry);
    components.destroy();
    style.remove();
    root.remove();
  };
  signal?.addEventListener("abort", cleanup);
  return cleanup;
}

export default { render };
