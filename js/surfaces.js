// The host view's surface cards: one per open surface, each a header and a shell frame holding
// the surface frame (frames.js). A new generation (a new bundle) is a new frame, never a
// patched one (U1, U5); states go to a frame once it is ready, coalesced (U4, StateQueue).
// What the cards show and do lives here; what a frame's messages mean lives in relay.js.

import { patchesSince } from "./deltas.js";
import { button, element } from "./dom.js";
import { SANDBOX, shellDocument, shellKey, surfaceDocument } from "./frames.js";
import { SURFACE_NAMESPACE } from "./protocol.generated.js";
import { RateLimit, SizeGuard, StateQueue } from "./state_queue.js";
import { surfaceHeading } from "./surface_heading.js";

/**
 * @typedef {import("./view_protocol.js").SurfaceSpec} SurfaceSpec
 * @typedef {import("./relay.js").Report} Report
 * @typedef {{ min_height: number, max_height: number, events_per_second: number,
 *   event_burst: number, stall_ms: number, restart_ms: number, shell_marks?: boolean }} SurfacesConfig
 * @typedef {{ spec: SurfaceSpec, card: HTMLElement, shell: HTMLIFrameElement,
 *   source: Window | null, ready: boolean, size: SizeGuard, rate: RateLimit,
 *   lastDropReport: number, lastCspReport: number, pingSent: number, pongSeen: number,
 *   stalled: boolean, picture?: SurfaceSpec, shellKey: string | null }} Entry
 */

/**
 * What to do to the cards so they match the kernel's list: the instances whose frame goes
 * (closed, or of another generation), and the specs that need a new frame, in order.
 * @param {Map<string, { spec: { generation: number } }>} entries
 * @param {Array<{ instance_id: string, generation: number }>} surfaces
 * @returns {{ remove: string[], mount: string[] }}
 */
export function reconcilePlan(entries, surfaces) {
  const wanted = new Map(surfaces.map((spec) => [spec.instance_id, spec.generation]));
  const remove = [];
  for (const [instanceId, entry] of entries) {
    const generation = wanted.get(instanceId);
    if (generation !== entry.spec.generation) remove.push(instanceId);
  }
  const mount = surfaces
    .filter((spec) => entries.get(spec.instance_id)?.spec.generation !== spec.generation)
    .map((spec) => spec.instance_id);
  return { remove, mount };
}

export class Surfaces {
  /**
   * @param {{ root: HTMLElement, config: SurfacesConfig,
   *   sendInOrder: (content: import("./view_protocol.js").HostViewMessage) => void,
   *   refuse: (entry: Entry, report: Report) => void, signal: AbortSignal }} options
   */
  constructor({ root, config, sendInOrder, refuse, signal }) {
    this.root = root;
    this.config = config;
    this.sendInOrder = sendInOrder;
    this.refuse = refuse;
    /** @type {Map<string, Entry>} */
    this.entries = new Map();
    /** @type {Map<Window, Entry>} shell window -> entry: S4, the sender decides the instance */
    this.bySource = new Map();
    this.queue = new StateQueue((instanceId, item, from) => {
      const entry = this.entries.get(instanceId);
      // A frame that holds revision `from` gets the patches since (its bridge applies them,
      // U4: the bundle still gets the whole state); any other gets the state whole.
      const picture = entry?.picture;
      const patches =
        picture && from !== undefined && picture.revision === item.revision ? patchesSince(picture, from) : undefined;
      if (patches) this.post(entry, { type: "patch", base: from, revision: item.revision, patches });
      else this.post(entry, { type: "state", revision: item.revision, state: item.state });
    });
    this.frame = 0;
    this.lastFlush = -Infinity;
    signal.addEventListener("abort", () => {
      if (this.frame > 0) cancelAnimationFrame(this.frame);
      for (const entry of [...this.entries.values()]) this.unmount(entry);
    });
  }

  /** To the surface's shell. @param {Entry | undefined} entry @param {object} message */
  post(entry, message) {
    entry?.source?.postMessage({ namespace: SURFACE_NAMESPACE, ...message }, "*");
  }

  /** @returns {Iterable<Entry>} */
  values() {
    return this.entries.values();
  }

  /**
   * A state goes out at once when the surface has had none for a frame (no added latency),
   * and otherwise waits for the next animation frame, taking only the newest (coalescing).
   */
  schedule() {
    if (this.frame) return;
    const flush = () => {
      this.frame = 0;
      this.lastFlush = performance.now();
      this.queue.flush((id) => this.entries.get(id)?.ready ?? false);
    };
    if (performance.now() - this.lastFlush > 16) {
      this.frame = -1; // a microtask is pending: later calls in this task join it
      queueMicrotask(flush);
    } else {
      this.frame = requestAnimationFrame(flush);
    }
  }

  /** @param {SurfaceSpec} spec @returns {Entry} */
  mount(spec) {
    const { config } = this;
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
    close.addEventListener("click", () => this.sendInOrder({ kind: "close", instance_id: spec.instance_id }));
    header.append(title, close);
    const shell = /** @type {HTMLIFrameElement} */ (element("iframe", "lineup-shell"));
    shell.setAttribute("sandbox", SANDBOX);
    shell.setAttribute("referrerpolicy", "no-referrer");
    shell.setAttribute("title", `surface ${spec.instance_id}`);
    shell.style.height = `${config.min_height}px`;
    // The shell's secret marks its own reports (relay.js). `shell_marks: false` in the view's
    // config takes any report as the shell's: only the tests' control, which proves their
    // detector sees a surface forging them, does that.
    const key = shellKey();
    shell.srcdoc = shellDocument(surfaceDocument(spec), 2 * config.events_per_second + 20, key);
    card.append(header, shell);
    this.root.append(card);
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
      shellKey: config.shell_marks === false ? null : key,
    };
    this.entries.set(spec.instance_id, entry);
    if (entry.source) this.bySource.set(entry.source, entry);
    return entry;
  }

  /** @param {Entry} entry */
  unmount(entry) {
    entry.card.remove();
    this.entries.delete(entry.spec.instance_id);
    if (entry.source) this.bySource.delete(entry.source);
    this.queue.reset(entry.spec.instance_id);
  }

  /**
   * Queue a surface's state, keeping it as the newest known (a re-made frame needs it).
   * @param {Entry} entry @param {SurfaceSpec} spec the model's own (deltas.js keeps its patches)
   */
  remember(entry, spec) {
    const { revision, state } = spec;
    if (!this.queue.push(entry.spec.instance_id, { revision, state })) return false;
    entry.picture = spec;
    entry.spec = { ...entry.spec, revision, state };
    return true;
  }

  /** Make the cards match the kernel's list. @param {SurfaceSpec[]} surfaces */
  reconcile(surfaces) {
    const plan = reconcilePlan(this.entries, surfaces);
    for (const instanceId of plan.remove) this.unmount(/** @type {Entry} */ (this.entries.get(instanceId)));
    for (const spec of surfaces) {
      const entry = this.entries.get(spec.instance_id) ?? this.mount(spec);
      this.remember(entry, spec);
    }
    this.schedule();
  }

  /**
   * Make this view's card of one surface match the kernel's list (after a feed op).
   * @param {string} instanceId @param {SurfaceSpec[]} surfaces
   */
  redraw(instanceId, surfaces) {
    const spec = surfaces.find((item) => item.instance_id === instanceId);
    let entry = this.entries.get(instanceId);
    if (entry && entry.spec.generation !== spec?.generation) {
      this.unmount(entry); // closed, or U1, U5: a new bundle is a new frame, never a patched one
      entry = undefined;
    }
    if (!spec) return;
    entry ??= this.mount(spec);
    this.remember(entry, spec);
    this.schedule();
  }

  /**
   * The entry whose shell window sent a message (S4: the sender decides the instance). A
   * frame has a window only once the view is in the page, which may be after render.
   * @param {MessageEventSource | null} source
   */
  entryOf(source) {
    if (!source) return undefined;
    const known = this.bySource.get(/** @type {Window} */ (source));
    if (known) return known;
    for (const entry of this.entries.values()) {
      if (entry.shell.contentWindow === source) {
        entry.source = entry.shell.contentWindow;
        this.bySource.set(entry.source, entry);
        return entry;
      }
    }
    return undefined;
  }

  /** @param {HTMLIFrameElement} shell */
  byShell(shell) {
    return [...this.entries.values()].find((entry) => entry.shell === shell);
  }

  /** @param {Entry} entry @param {number} height */
  resize(entry, height) {
    entry.shell.style.height = `${height}px`;
  }

  /**
   * A line in the surface's card, once per kind; returns whether it is new.
   * @param {Entry} entry @param {string} kind @param {string} text
   */
  notice(entry, kind, text) {
    if (entry.card.querySelector(`.lineup-blocked[data-what="${kind}"]`)) return false;
    const line = element("div", "lineup-blocked", text);
    line.dataset.what = kind;
    line.setAttribute("role", "status");
    entry.card.insertBefore(line, entry.shell);
    return true;
  }

  /** The watchdog found it silent: offer to stop it. @param {Entry} entry */
  stalled(entry) {
    const { config } = this;
    const seconds = Math.round(config.stall_ms / 1000);
    const notice = element("div", "lineup-stalled");
    notice.setAttribute("role", "alert");
    notice.append(`This surface has not answered for ${seconds} s. `);
    const stop = button("lineup-stop", "Stop it");
    stop.addEventListener("click", () => {
      // Frames that share a stuck renderer process stay stuck until every one of them is
      // gone (measured). So all silent frames go; the others come back as fresh frames with
      // their latest state, and this one is closed.
      const survivors = [...this.entries.values()].filter((other) => other.stalled && other !== entry);
      for (const other of survivors) this.unmount(other);
      entry.shell.remove();
      // Give the browser a moment to drop the stuck process, or new frames join it.
      setTimeout(() => {
        for (const other of survivors) {
          if (!this.entries.has(other.spec.instance_id)) {
            this.remember(this.mount(other.spec), other.picture ?? other.spec);
          }
        }
        this.schedule();
      }, config.restart_ms);
      notice.textContent = "Stopped.";
      this.refuse(entry, {
        code: "unresponsive",
        rule: "S4",
        path: "$",
        message: `no answer for ${seconds} s: the user stopped the surface`,
      });
      this.sendInOrder({ kind: "close", instance_id: entry.spec.instance_id });
    });
    notice.append(stop);
    entry.card.insertBefore(notice, entry.shell);
  }

  /** It answers again. @param {Entry} entry */
  recovered(entry) {
    entry.card.querySelector(".lineup-stalled")?.remove();
  }

  /**
   * A surface took the keyboard without the user: it goes, with what it got.
   * @param {Entry} entry @param {HTMLElement} before where the notice goes in the view
   */
  stopStolen(entry, before) {
    const name = entry.spec.app.name || entry.spec.app.id;
    const notice = element(
      "div",
      "lineup-stalled",
      `Stopped ${name} (${entry.spec.instance_id}): it took the keyboard without your click or Tab. ` +
        "Your typing went back to the notebook; what the surface received meanwhile was discarded.",
    );
    notice.setAttribute("role", "alert");
    before.before(notice);
    this.unmount(entry);
    this.refuse(entry, {
      code: "focus_stolen",
      rule: "S2",
      path: "$",
      message:
        "the surface moved the keyboard focus into its frame without the user's click or Tab; the host stopped it",
    });
    this.sendInOrder({ kind: "close", instance_id: entry.spec.instance_id });
  }
}
