// Whether a view still reaches its kernel, and what the user sees when it does not (issue 24,
// "Kernel gone"; docs/architecture.md "When the kernel is gone").
//
// A widget model lives in one kernel. When that kernel restarts, shuts down or is replaced,
// or the page loses the server, the view stays on the page as it was drawn, and what the user
// clicks goes nowhere: a dead comm drops it, a restarted kernel ignores a comm it never
// opened. So each view watches the kernel and, when it is gone, says so at its top, shows its
// controls disabled, and answers a click on one with "Not connected" instead of silence.
//
// anywidget gives a view a proxy of its model with `widget_manager`: in JupyterLab and
// Notebook 7 that manager holds the notebook's session (`context.sessionContext`), in Voilà
// its kernel (`kernel`); both report status and connection changes as Lumino signals. The
// model itself says when its comm went down (`comm_live_update`: the manager sets `comm_live`
// false when the kernel restarts, and never back).

import { element } from "./dom.js";

/**
 * Why a view is not connected. Each but `disconnected` (the server comes back, with the same
 * kernel) is for good: the model went with its kernel. `unsynced` is the view's own finding
 * (no kernel answered it: a reopened notebook's saved picture), never the watcher's.
 * @typedef {"disconnected" | "restarted" | "shutdown" | "dead" | "replaced" | "unsynced"} Gone
 */

/** @type {Record<Gone, string>} */
export const GONE_TEXT = {
  disconnected:
    "the connection to the Jupyter server dropped. This view comes back by itself when the server answers again.",
  restarted: "the kernel restarted, and this view's widget went with it. Run the cell again to draw it live.",
  shutdown: "the kernel was shut down. Start a kernel and run the cell again to draw it live.",
  dead: "the kernel died. Restart it, then run the cell again to draw it live.",
  replaced: "the notebook's kernel was changed. Run the cell again to draw this view live.",
  // Also what a view mounted while its kernel is busy with a long cell says until the kernel
  // answers (the snapshot clears it): the notebook's saved picture is the likely case.
  unsynced:
    "no kernel has answered this view (a notebook reopened with a new kernel, or a kernel busy with a long cell): it shows what the notebook saved, read-only. Run the cell again to draw it live.",
};

/** How long a view waits for its kernel's first answer before it calls itself a saved picture. */
export const SYNC_TIMEOUT_MS = 5000;

/** What a click on a control of a view without a kernel is answered. */
export const REFUSED_TEXT = "Not connected: that did not reach the kernel, and nothing happened.";

// Controls that act through the kernel; a click on a surface's or an MCP app's card (both
// `.lineup-surface`) lands on the card itself while its frame takes no pointer (KERNEL_LINK_STYLE).
const CONTROLS = "button, input, select, textarea, label, .lineup-surface";

export const KERNEL_LINK_STYLE = `
.lineup-kernel-gone { font-size: 12px; padding: 4px 8px; border-left: 3px solid var(--jp-error-color1, #d32f2f); background: var(--jp-error-color3, #fdecea); color: var(--jp-ui-font-color1, #222); }
.lineup-kernel-gone[hidden] { display: none; }
.lineup-kernel-refused { display: block; font-weight: 600; }
.lineup-kernel-refused:empty { display: none; }
[data-kernel="gone"] :is(button, input, select, textarea, label):not([data-offline-ok]) { opacity: 0.5; cursor: not-allowed; }
[data-kernel="gone"] iframe { pointer-events: none; opacity: 0.6; }
[data-kernel="gone"] .lineup-surface { cursor: not-allowed; }
`;

/**
 * @typedef {{ connect: (slot: (sender: unknown, args: any) => void) => unknown,
 *   disconnect: (slot: (sender: unknown, args: any) => void) => unknown }} LuminoSignal
 * @typedef {{ statusChanged?: LuminoSignal, connectionStatusChanged?: LuminoSignal,
 *   kernelChanged?: LuminoSignal, disposed?: LuminoSignal }} KernelSource
 */

/**
 * Connect `slot` to a Lumino signal while `signal` lives (nothing when the signal is missing).
 * @param {LuminoSignal | undefined} source @param {(args: any) => void} slot @param {AbortSignal} signal
 */
function listen(source, slot, signal) {
  if (!source || typeof source.connect !== "function") return;
  const bound = (/** @type {unknown} */ _sender, /** @type {any} */ args) => slot(args);
  source.connect(bound);
  signal.addEventListener("abort", () => source.disconnect(bound));
}

/**
 * The kernel a session status names as gone, or null for one that runs.
 * @param {unknown} status @returns {Gone | null}
 */
export function goneByStatus(status) {
  if (status === "restarting" || status === "autorestarting") return "restarted";
  if (status === "dead") return "dead";
  if (status === "terminating") return "shutdown";
  return null;
}

/**
 * Watch the kernel behind `model` until `signal` aborts: `changed(gone)` with why it is gone,
 * or null when the connection came back. Where the manager exposes neither a session nor a
 * kernel (another host of anywidget), only the model's own comm is watched.
 * @param {{ on: (name: string, callback: (...args: any[]) => void) => void,
 *   off: (name: string, callback: (...args: any[]) => void) => void, widget_manager?: any }} model
 * @param {(gone: Gone | null) => void} changed
 * @param {AbortSignal} signal
 */
export function watchKernel(model, changed, signal) {
  /** @type {Gone | null} */
  let gone = null;
  /** @param {Gone | null} next */
  const set = (next) => {
    if (gone !== null && gone !== "disconnected") return; // for good
    if (next === gone) return;
    gone = next;
    changed(next);
  };
  const commDown = () => set("restarted");
  model.on("comm_live_update", commDown);
  signal.addEventListener("abort", () => model.off("comm_live_update", commDown));

  const manager = model.widget_manager;
  /** @type {KernelSource | undefined} */
  const source = manager?.context?.sessionContext ?? manager?.kernel ?? undefined;
  if (!source) return;
  listen(
    source.statusChanged,
    (status) => {
      const next = goneByStatus(status);
      if (next) set(next);
    },
    signal,
  );
  listen(source.connectionStatusChanged, (status) => set(status === "connected" ? null : "disconnected"), signal);
  // A session's kernel changed: none (shut down) or another one, which knows no model of ours.
  listen(source.kernelChanged, (change) => set(change?.newValue ? "replaced" : "shutdown"), signal);
  listen(source.disposed, () => set("shutdown"), signal); // Voilà's kernel itself
}

/**
 * A view's line about its kernel: hidden while connected; when not, a banner at the top of
 * `root`, its controls drawn disabled, and a click on one answered (REFUSED_TEXT) and stopped
 * before it reaches the control. Controls marked `data-offline-ok` only act on the page.
 */
export class KernelLine {
  /** @param {HTMLElement} root @param {AbortSignal} signal */
  constructor(root, signal) {
    this.root = root;
    /** @type {Gone | null} */
    this.gone = null;
    this.banner = element("div", "lineup-kernel-gone");
    this.banner.setAttribute("role", "alert");
    this.banner.hidden = true;
    this.text = element("span", "lineup-kernel-text");
    this.refused = element("span", "lineup-kernel-refused");
    this.banner.append(this.text, this.refused);
    root.prepend(this.banner);
    /** @param {Event} event */
    const stop = (event) => {
      if (this.gone === null || !(event.target instanceof Element)) return;
      const control = event.target.closest(CONTROLS);
      if (!control || !root.contains(control) || control.closest("[data-offline-ok]")) return;
      if (event instanceof KeyboardEvent && event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      event.stopImmediatePropagation();
      this.refuse();
    };
    // Captured at the root, before the control's own listeners (and js/decision_input.js).
    for (const type of ["click", "keydown", "submit"]) root.addEventListener(type, stop, { capture: true, signal });
  }

  /** @param {Gone | null} gone */
  set(gone) {
    this.gone = gone;
    this.banner.hidden = gone === null;
    this.text.textContent = gone === null ? "" : `Not connected to a kernel: ${GONE_TEXT[gone]}`;
    this.refused.textContent = "";
    if (gone === null) delete this.root.dataset.kernel;
    else this.root.dataset.kernel = "gone";
  }

  /** Something the user did could not reach the kernel: say so where they look. */
  refuse() {
    this.refused.textContent = REFUSED_TEXT;
  }
}

/**
 * A view's `signal` (anywidget's, when it passes one) and the cleanup that aborts it: what
 * kernel_link.js listens to ends with the view either way.
 * @param {AbortSignal | undefined} signal
 */
export function viewSignal(signal) {
  const stop = new AbortController();
  signal?.addEventListener("abort", () => stop.abort());
  return stop;
}
