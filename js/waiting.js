// What a cell that awaits the user shows (lineup_jupyter/widgets/_widget.py WaitingWidget): a live
// line in that cell's output pointing to the consent card or the question, which the host
// draws in its own output, maybe far above. "Show" scrolls it into view; once it is decided or
// answered, the line says how. Strings go in as text (dom.js).
//
// A line still "waiting" without a kernel would lie: the wait ended with it. So the line asks
// the kernel once (`sync`, answered `live`); a line restored from a saved notebook gets no
// answer, and a kernel that goes (kernel_link.js) takes the wait with it: either way the line
// says so.

import { button, element, STYLED } from "./dom.js";
import { KERNEL_LINK_STYLE, KernelLine, SYNC_TIMEOUT_MS, viewSignal, watchKernel } from "./kernel_link.js";
import { keepInNotebook } from "./notebook_state.js";

/**
 * @typedef {import("./view_protocol.js").Model<import("./view_protocol.js").WaitingViewMessage>} Model
 */

/** The host's element for a call or a question, if a view of the host is on this page.
 * @param {Document} doc @param {string} kind @param {string} target */
export function findTarget(doc, kind, target) {
  const selector =
    kind === "call"
      ? `.lineup-host .lineup-prompt[data-call-id="${CSS.escape(target)}"]`
      : `.lineup-host .lineup-component[data-component-id="${CSS.escape(target)}"]`;
  return /** @type {HTMLElement | null} */ (doc.querySelector(selector));
}

/** The line's text. @param {string} status @param {string} kind @param {string} label @param {boolean} [connected] */
export function waitingText(status, kind, label, connected = true) {
  if (status === "waiting" && !connected) return `${label}: no longer waiting (no kernel holds this wait)`;
  if (status === "waiting") {
    return kind === "call" ? `Waiting for your decision: ${label}` : `Waiting for your answer: ${label}`;
  }
  return `${label}: ${status}`;
}

const STYLE = `
.lineup-waiting { display: flex; align-items: center; gap: 8px; font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px; color: var(--jp-ui-font-color1, #222); border-left: 3px solid var(--jp-brand-color1, #1976d2); padding: 2px 8px; }
.lineup-waiting[data-status="waiting"] { border-left-color: var(--jp-warn-color0, #c77700); }
.lineup-waiting-show[hidden] { display: none; }
.lineup-waiting-note { color: var(--jp-ui-font-color2, #666); font-size: 12px; }
.lineup-flash { outline: 3px solid var(--jp-brand-color1, #1976d2); outline-offset: 2px; }
`;

/** @param {{ model: Model, el: HTMLElement, signal?: AbortSignal }} context */
function render({ model, el, signal }) {
  const stop = viewSignal(signal);
  const style = element("style", "");
  style.textContent = STYLE + KERNEL_LINK_STYLE;
  const box = element("div", "lineup-waiting-box");
  const line = element("div", "lineup-waiting");
  const text = element("span", "lineup-waiting-text");
  const show = button(`lineup-waiting-show ${STYLED}`, "Show");
  const note = element("span", "lineup-waiting-note");
  show.dataset.offlineOk = ""; // it only scrolls the page
  line.append(text, show, note);
  box.append(line);
  el.append(style, box);
  const kernel = new KernelLine(box, stop.signal);
  /** @type {import("./kernel_link.js").Gone | null} */
  let gone = null;
  let live = false;
  const draw = () => {
    const status = String(model.get("status"));
    const kind = String(model.get("kind"));
    const connected = gone === null;
    kernel.set(gone);
    line.dataset.status = status === "waiting" && connected ? "waiting" : "done";
    text.textContent = waitingText(status, kind, String(model.get("label")), connected);
    show.hidden = status !== "waiting" || !connected;
    if (status !== "waiting") note.textContent = "";
  };
  show.addEventListener("click", () => {
    const found = findTarget(document, String(model.get("kind")), String(model.get("target")));
    if (!found) {
      note.textContent = "The card is in the host's output: display `host` in a cell to see it.";
      return;
    }
    note.textContent = "";
    found.scrollIntoView({ block: "center" });
    found.classList.add("lineup-flash");
    setTimeout(() => found.classList.remove("lineup-flash"), 1500);
  });
  /** @param {any} content */
  const onCustom = (content) => {
    if (content?.kind !== "live") return;
    live = true;
    if (gone === "unsynced") gone = null;
    draw();
  };
  watchKernel(
    model,
    (next) => {
      gone = next;
      draw();
    },
    stop.signal,
  );
  keepInNotebook(model, stop.signal);
  model.on("change:status", draw);
  model.on("msg:custom", onCustom);
  draw();
  try {
    model.send({ kind: "sync" });
  } catch (error) {
    console.warn("[lineup] the kernel is not reachable:", error);
  }
  const timer = setTimeout(() => {
    if (live || gone !== null) return;
    gone = "unsynced";
    draw();
  }, SYNC_TIMEOUT_MS);
  const cleanup = () => {
    stop.abort();
    clearTimeout(timer);
    model.off("change:status", draw);
    model.off("msg:custom", onCustom);
    style.remove();
    box.remove();
  };
  signal?.addEventListener("abort", cleanup);
  return cleanup;
}

export default { render };
