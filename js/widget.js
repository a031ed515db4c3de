// The anywidget view of a Host: the standard components, then one card per open surface, each
// a shell frame holding the surface frame. The kernel holds the truth; a view can always be
// rebuilt from it (a page reload, an unmounted cell, a second view of the same output).
//
// The messages both ways are js/view_protocol.js (generated from _view_protocol.py). This
// module wires the pieces: connection.js (the line to the kernel), surfaces.js (the cards),
// relay.js (what a surface's frame sends), mcp_cards.js (MCP apps), watchdog.js, theme.js,
// focus_guard.js, and the components, consent cards, agents and problems. Everything stops when the view goes: one
// AbortSignal, anywidget's or ours.

import { AGENTS_STYLE, mountAgents } from "./agents.js";
import { COMPONENT_STYLE, mountComponents } from "./components.js";
import { Connection } from "./connection.js";
import { applyOp, FeedSequence, replaceAll } from "./deltas.js";
import { element } from "./dom.js";
import { guardFocus, probeShell } from "./focus_guard.js";
import { surfaceScript } from "./frames.js";
import { KERNEL_LINK_STYLE, KernelLine, SYNC_TIMEOUT_MS, viewSignal, watchKernel } from "./kernel_link.js";
import { MCP_STYLE } from "./mcp_card_parts.js";
import { McpCards } from "./mcp_cards.js";
import { keepInNotebook } from "./notebook_state.js";
import { mountProblems, PROBLEMS_STYLE } from "./problems.js";
import { mountPrompts } from "./prompts.js";
import { Relay, silentAt } from "./relay.js";
import { Surfaces } from "./surfaces.js";
import { findSyntaxError } from "./syntax_check.js";
import { pageTheme, watchTheme } from "./theme.js";
import { trustText } from "./trust.js";
import { pong, watchSurfaces } from "./watchdog.js";

/**
 * @typedef {import("./view_protocol.js").HostViewMessage} HostViewMessage
 * @typedef {import("./view_protocol.js").HostKernelMessage} HostKernelMessage
 * @typedef {import("./view_protocol.js").Model<HostViewMessage>} HostModel
 * @typedef {import("./surfaces.js").Entry} Entry
 * @typedef {{ min_height: number, max_height: number, events_per_second: number,
 *   event_burst: number, sync_timeout_ms: number, ping_ms: number, stall_ms: number,
 *   restart_ms: number, focus_guard?: boolean, shell_marks?: boolean,
 *   trust?: import("./trust.js").TrustSummary }} ViewConfig
 */

/** @param {HostModel} model @returns {ViewConfig} */
export function configOf(model) {
  return {
    min_height: 40,
    max_height: 800,
    events_per_second: 50,
    event_burst: 100,
    sync_timeout_ms: SYNC_TIMEOUT_MS,
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
.lineup-surface-list { display: flex; flex-direction: column; gap: 8px; }
.lineup-surface-list:empty { display: none; }
.lineup-surface { border: 1px solid var(--jp-border-color2, #ddd); border-radius: 6px; overflow: hidden; background: var(--jp-layout-color0, #fff); }
.lineup-header { display: flex; align-items: center; justify-content: space-between; padding: 2px 4px 2px 8px; font-size: 12px; color: var(--jp-ui-font-color2, #666); background: var(--jp-layout-color2, #f3f3f3); }
.lineup-title-detail { opacity: 0.8; }
.lineup-close { border: 0; background: transparent; font-size: 16px; line-height: 1; cursor: pointer; color: inherit; padding: 2px 6px; }
.lineup-close:focus-visible { outline: 2px solid var(--jp-brand-color1, #1976d2); }
.lineup-shell { display: block; width: 100%; border: 0; }
.lineup-stalled, .lineup-blocked { font-size: 12px; padding: 4px 8px; color: var(--jp-warn-color0, #a66); }
.lineup-stop { margin-left: 8px; }
.lineup-trust { font-size: 11px; color: var(--jp-ui-font-color2, #666); }
.lineup-trust[data-mode="strict"] { color: var(--jp-success-color1, #2e7d32); }
`;

// The host views on this page that show the dev mode line, shared by every copy of this
// module (anywidget may load one per widget model): a view claims it while it lives.
const DEV_LINES = Symbol.for("lineup.devModeLines");

/**
 * Whether another live host view already shows the dev mode line; if none does, this view
 * claims it until `signal` aborts.
 * @param {AbortSignal} signal
 */
function devModeShown(signal) {
  const g = /** @type {any} */ (globalThis);
  /** @type {Set<AbortSignal>} */
  if (!(g[DEV_LINES] instanceof Set)) g[DEV_LINES] = new Set();
  const lines = g[DEV_LINES];
  for (const other of lines) if (other.aborted) lines.delete(other);
  if (lines.size > 0) return true;
  lines.add(signal);
  signal.addEventListener("abort", () => lines.delete(signal));
  return false;
}

/** @param {{ model: HostModel, el: HTMLElement, signal?: AbortSignal }} context */
function render({ model, el, signal }) {
  const stop = viewSignal(signal);
  const config = configOf(model);
  const style = document.createElement("style");
  style.textContent = STYLE + COMPONENT_STYLE + AGENTS_STYLE + PROBLEMS_STYLE + MCP_STYLE + KERNEL_LINK_STYLE;
  el.append(style);
  const root = element("div", "lineup-host");
  // What arrives goes below what the user is working with, never above it (docs/security.md,
  // "Decisions"): the surfaces and MCP apps, then the standard components (markdown,
  // questions...), then the consent cards (prompts.js), each region growing at its end.
  const surfaceList = element("div", "lineup-surface-list");
  const componentList = element("div", "lineup-components");
  // Which inline bundles may open here (H37): the user should never have to guess.
  const trust = element("div", "lineup-trust", trustText(config.trust));
  trust.dataset.mode = config.trust?.mode ?? "dev";
  // Dev mode is the default and says the same everywhere: once a page, in the first host view
  // that shows it (strict mode's sentence, which counts what is trusted, stays on each view).
  if (trust.dataset.mode !== "strict" && devModeShown(stop.signal)) trust.hidden = true;
  const agentList = element("div", "lineup-agents");
  agentList.setAttribute("role", "status");
  // What the user's handlers raised: in the surface's card when it has one, else here.
  const problemList = element("div", "lineup-handler-problems");
  root.append(trust, agentList, problemList, surfaceList, componentList);
  el.append(root);

  const connection = new Connection(model);
  // Whether a kernel hears this view (kernel_link.js): gone with it, or never answered (a
  // reopened notebook's saved picture); either way, read-only and said so at the top.
  const line = new KernelLine(root, stop.signal);
  /** @type {import("./kernel_link.js").Gone | null} */
  let kernelGone = null;
  let unsynced = false;
  const showLink = () => {
    const gone = kernelGone ?? (unsynced ? "unsynced" : null);
    line.set(gone);
    connection.refuse = gone === null ? null : () => line.refuse();
  };
  watchKernel(
    model,
    (gone) => {
      kernelGone = gone;
      showLink();
    },
    stop.signal,
  );
  keepInNotebook(model, stop.signal);
  const sendInOrder = (/** @type {HostViewMessage} */ content) => connection.sendInOrder(content);
  const surfaces = new Surfaces({
    root: surfaceList,
    config,
    sendInOrder,
    refuse: (entry, report) => relay.refuse(entry, report),
    signal: stop.signal,
  });
  /** @type {Relay<Entry>} */
  const relay = new Relay(
    {
      sendInOrder,
      event: (item) => connection.event(item),
      ready: (entry) => {
        surfaces.post(entry, pageTheme());
        surfaces.schedule();
      },
      pong: (entry) => {
        if (pong(entry, performance.now())) surfaces.recovered(entry);
      },
      resize: (entry, height) => surfaces.resize(entry, height),
      notice: (entry, kind, text) => surfaces.notice(entry, kind, text),
      whySilent: async (entry) => {
        const { script, jsLine } = surfaceScript(entry.spec);
        const found = await findSyntaxError(script, jsLine);
        return found ? silentAt(found) : null;
      },
    },
    config,
  );
  // MCP apps: their cards after the surfaces'; the kernel's ids of their requests are this
  // view's own (mcp_host.js), as two views of one host both hear every answer.
  const mcp = new McpCards({
    root: surfaceList,
    config,
    idPrefix: `v${Math.random().toString(36).slice(2, 10)}:`,
    sendInOrder,
    signal: stop.signal,
  });
  watchTheme(() => {
    for (const entry of surfaces.values()) if (entry.ready) surfaces.post(entry, pageTheme());
    mcp.themeChanged();
  }, stop.signal);
  watchSurfaces({
    entries: () => surfaces.values(),
    ping: (entry, now) => surfaces.post(entry, { type: "ping", n: now }),
    stalled: (entry) => surfaces.stalled(entry),
    stallMs: config.stall_ms,
    pingMs: config.ping_ms,
    signal: stop.signal,
  });
  // An MCP app is pinged with JSON-RPC ping (its App answers it), once it is initialized.
  watchSurfaces({
    entries: () => mcp.values(),
    ping: (frame) => {
      frame.host.ping(4 * config.stall_ms).then((answered) => {
        if (answered && pong(frame, performance.now())) mcp.recovered(frame);
      });
    },
    stalled: (frame) => mcp.stalled(frame),
    stallMs: config.stall_ms,
    pingMs: config.ping_ms,
    signal: stop.signal,
  });

  // components.js sends answers ({kind: "answer", ...}); it types them as any object.
  // A question or a consent card must reach the user: a full-screen app covers the page (only
  // the full-screen element is drawn), so it returns inline when one arrives.
  const arrived = () => mcp.leaveFullscreen("A request is waiting for you below this app.");
  const components = mountComponents({
    model,
    container: componentList,
    send: (content) => sendInOrder(/** @type {HostViewMessage} */ (content)),
    arrived,
  });
  // Consent cards of waiting app.calls, last (outside every surface).
  mountPrompts({ model, root, send: (content) => connection.send(content), signal: stop.signal, arrived });
  const stopAgents = mountAgents({ model, container: agentList });
  const stopProblems = mountProblems({
    model,
    container: problemList,
    slotFor: (instanceId) => surfaces.entries.get(instanceId)?.card ?? null,
  });

  // Focus belongs to the page (js/focus_guard.js). `focus_guard: false` in the view's config
  // turns it off: only the tests' control, which proves their detector sees a theft, does.
  const focus =
    config.focus_guard === false
      ? null
      : guardFocus({
          shells: () => [
            ...Array.from(surfaces.values(), (entry) => entry.shell),
            ...Array.from(mcp.values(), (frame) => frame.shell),
          ],
          // To the shell's window itself: a frame that has not spoken yet has no entry.source.
          probe: probeShell,
          stolen: (shell) => {
            const entry = surfaces.byShell(shell);
            if (entry) surfaces.stopStolen(entry, componentList);
            const frame = mcp.byShell(shell);
            if (frame) mcp.stopStolen(frame);
          },
          signal: stop.signal,
        });

  /** @param {MessageEvent} event */
  function onMessage(event) {
    const entry = surfaces.entryOf(event.source);
    if (!entry) {
      onMcpMessage(event);
      return;
    }
    const message = event.data;
    // The shell's answer (js/focus_guard.js); one without the probe's nonce is the surface's
    // and is refused like any other message it may not send.
    if (message?.type === "focus_answer" && focus?.answer(entry.shell, message.nonce, message.user === true)) return;
    // Nothing a surface sends reaches the kernel while focus is in it without the user
    // having put it there (the keys it got would go with it): it waits for the page to know.
    if (focus) focus.gate(entry.shell, () => relay.handle(entry, message));
    else relay.handle(entry, message);
  }

  /** An MCP app's frame (by its shell window, S4), through the same focus gate. @param {MessageEvent} event */
  function onMcpMessage(event) {
    const frame = mcp.frameOf(event.source);
    if (!frame) return; // not one of our frames: not ours to read
    const message = event.data;
    if (message?.type === "focus_answer") {
      // The focus guard's probe, or the card's (full screen needs the user's click).
      if (focus?.answer(frame.shell, message.nonce, message.user === true)) return;
      if (mcp.probeAnswer(frame, message.nonce, message.user === true)) return;
    }
    if (focus) focus.gate(frame.shell, () => mcp.handle(frame, message));
    else mcp.handle(frame, message);
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
    connection.send({ kind: "sync" });
  };

  /** What the kernel sent (view_protocol.js HostKernelMessage; consent is prompts.js's). @param {any} content */
  function onCustom(content) {
    const message = /** @type {HostKernelMessage} */ (content);
    if (message?.kind === "snapshot") {
      connection.connect();
      unsynced = false;
      showLink();
      const lists = picture();
      replaceAll(lists.surfaces, message.surfaces ?? []);
      replaceAll(lists.components, message.components ?? []);
      feed.snapshot(Number(message.seq));
      surfaces.reconcile(lists.surfaces);
      mcp.reconcile(message.mcp_apps ?? []);
      components.reconcile();
    } else if (message?.kind === "feed") {
      const verdict = feed.next(Number(message.seq));
      if (verdict === "gap") resync();
      if (verdict !== "take") return;
      const lists = picture();
      for (const op of message.ops ?? []) {
        if (op.op.startsWith("mcp_")) {
          mcp.apply(/** @type {import("./mcp_cards.js").McpOp} */ (op)); // MCP apps are the view's, not the model's
          continue;
        }
        const applied = applyOp(lists, op);
        if (applied === null) continue;
        if ("gap" in applied) {
          resync();
          return;
        }
        if ("surface" in applied) surfaces.redraw(applied.surface, lists.surfaces);
        else components.redraw(applied.component);
      }
    } else if (message?.kind === "answer_refused") {
      components.refused(String(message.component_id), String(message.message));
    }
  }

  const onSurfaces = () => surfaces.reconcile(model.get("surfaces"));
  model.on("msg:custom", onCustom);
  model.on("change:surfaces", onSurfaces);
  window.addEventListener("message", onMessage, { signal: stop.signal });
  surfaces.reconcile(model.get("surfaces"));
  connection.send({ kind: "sync" });
  const timer = setTimeout(() => {
    if (connection.connected) return;
    unsynced = true;
    showLink();
  }, config.sync_timeout_ms);

  stop.signal.addEventListener("abort", () => {
    connection.close(); // what the user did last still reaches the kernel
    clearTimeout(timer);
    model.off("msg:custom", onCustom);
    model.off("change:surfaces", onSurfaces);
    stopAgents();
    stopProblems();
    components.destroy();
    style.remove();
    root.remove();
  });
  return () => stop.abort();
}

export default { render };
