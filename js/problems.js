// What the user's own handlers raised (lineup_jupyter/runtime/_problems.py), in the host's view: a
// handler that fails on a click is seen where the click was made, with its traceback, not only
// in a log nobody reads. A problem that belongs to a surface is drawn in that surface's card;
// the others under the agents' lines. Strings go in as text (dom.js).

import { button, element, STYLED } from "./dom.js";

/**
 * @typedef {{ seq: number, source: string, where: string, message: string, traceback: string,
 *   agent_id: string | null, instance_id: string | null, at: string, count?: number }} ProblemView
 * @typedef {import("./view_protocol.js").Model<import("./view_protocol.js").HostViewMessage>} Model
 */

/** The one line a problem reads as. @param {ProblemView} problem */
export function problemTitle(problem) {
  const again = (problem.count ?? 1) > 1 ? ` (${problem.count} times)` : "";
  const verb = problem.source === "handler" ? " raised" : ":"; // a surface's script, an MCP server
  return `${problem.where}${verb} ${problem.message}${again}`;
}

/** @param {ProblemView} problem @returns {HTMLElement} */
export function problemBox(problem) {
  const box = element("details", "lineup-handler-problem");
  box.dataset.seq = String(problem.seq);
  if (problem.instance_id) box.dataset.instance = problem.instance_id;
  box.append(
    element("summary", "lineup-handler-problem-title", problemTitle(problem)),
    element("pre", "lineup-handler-problem-traceback", problem.traceback),
  );
  return box;
}

/**
 * Draw the `problems` trait: each one in its surface's slot when `slotFor` finds one, else in
 * `container`. Redrawn when the problems or the surfaces change (a card made later).
 * @param {{ model: Model, container: HTMLElement,
 *   slotFor: (instanceId: string) => HTMLElement | null }} context
 */
export function mountProblems({ model, container, slotFor }) {
  /** @type {HTMLElement[]} */
  let drawn = [];
  const draw = () => {
    for (const node of drawn) node.remove();
    drawn = [];
    const problems = /** @type {ProblemView[]} */ (model.get("problems") ?? []);
    const loose = [];
    for (const problem of problems) {
      const box = problemBox(problem);
      const slot = problem.instance_id ? slotFor(problem.instance_id) : null;
      if (slot) {
        slot.append(box);
        drawn.push(box);
      } else loose.push(box);
    }
    const clear = button(`lineup-handler-problems-clear ${STYLED}`, "Dismiss");
    clear.title = "Forget these problems (host.problems.clear()); the inspector keeps them";
    clear.addEventListener("click", () => model.send({ kind: "clear_problems" }));
    const count = `${problems.length} ${problems.length === 1 ? "problem" : "problems"}`;
    const heading = element("div", "lineup-handler-problems-heading", `${count} (host.problems)`);
    heading.append(clear);
    container.replaceChildren(heading, ...loose);
    container.hidden = problems.length === 0;
  };
  // After the view's own listeners have made or removed the cards this task.
  let queued = false;
  const later = () => {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      draw();
    });
  };
  model.on("change:problems", later);
  model.on("change:surfaces", later);
  later();
  return () => {
    model.off("change:problems", later);
    model.off("change:surfaces", later);
    for (const node of drawn) node.remove();
  };
}

export const PROBLEMS_STYLE = `
.lineup-handler-problems { display: flex; flex-direction: column; gap: 4px; }
.lineup-handler-problems[hidden] { display: none; }
.lineup-handler-problems-heading { display: flex; align-items: center; gap: 8px; font-size: 12px; color: var(--jp-error-color1, #c62828); }
.lineup-handler-problem { border-left: 3px solid var(--jp-error-color1, #c62828); background: var(--jp-error-color3, #fdecea); color: var(--jp-ui-font-color1, #222); padding: 2px 6px; font-size: 12px; }
.lineup-handler-problem-title { cursor: pointer; white-space: pre-wrap; }
.lineup-handler-problem-traceback { margin: 4px 0; max-height: 240px; overflow: auto; font-family: var(--jp-code-font-family, monospace); font-size: 11px; white-space: pre-wrap; }
`;
