// What a cell that awaits the user shows (lineup_jupyter/widgets/_widget.py WaitingWidget): a live
// line in that cell's output pointing to the consent card or the question, which the host
// draws in its own output, maybe far above. "Show" scrolls it into view; once it is decided or
// answered, the line says how. Strings go in as text (dom.js).

import { button, element, STYLED } from "./dom.js";

/**
 * @typedef {import("./view_protocol.js").Model} Model
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

/** The line's text. @param {string} status @param {string} kind @param {string} label */
export function waitingText(status, kind, label) {
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
  const style = element("style", "");
  style.textContent = STYLE;
  const line = element("div", "lineup-waiting");
  const text = element("span", "lineup-waiting-text");
  const show = button(`lineup-waiting-show ${STYLED}`, "Show");
  const note = element("span", "lineup-waiting-note");
  line.append(text, show, note);
  el.append(style, line);
  const draw = () => {
    const status = String(model.get("status"));
    const kind = String(model.get("kind"));
    line.dataset.status = status === "waiting" ? "waiting" : "done";
    text.textContent = waitingText(status, kind, String(model.get("label")));
    show.hidden = status !== "waiting";
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
  model.on("change:status", draw);
  draw();
  const cleanup = () => {
    model.off("change:status", draw);
    style.remove();
    line.remove();
  };
  signal?.addEventListener("abort", cleanup);
  return cleanup;
}

export default { render };
