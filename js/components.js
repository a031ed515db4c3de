// The standard components (L2, H12-H15), drawn by the host itself in the notebook page: no
// frame, so nothing an agent sent may become markup here except Markdown the kernel already
// rendered and sanitized (nh3), which this module checks again against the same allowlist
// before inserting it (S6). Every other string goes in as text.
//
// Kernel -> view: the `components` list (each {component_id, kind, ...fields, html?, answer?,
// order, rev}), kept by widget.js from the kernel's snapshot and feed (deltas.js), and
// {kind: "answer_refused", component_id, message} when an answer was refused.
// View -> kernel: {kind: "answer", component_id, status: "answered" | "cancelled", value?}.

import { BLOCKS_STYLE, Blocks } from "./blocks.js";
import { guardDecision, guardField, keyboardRefusal, REFUSED } from "./decision_input.js";
import { ACCEPT, button, element, STYLED } from "./dom.js";
import { DrawQueue, lastIndexOf, paced } from "./paced.js";
import {
  COMPONENT_RENDERERS,
  MARKDOWN_ATTRIBUTES,
  MARKDOWN_IMAGE_PATTERN,
  MARKDOWN_LINK_REL,
  MARKDOWN_LINK_SCHEMES,
  MARKDOWN_TAGS,
} from "./protocol.generated.js";

/**
 * @typedef {{ component_id: string, kind: string, [field: string]: any }} ComponentView
 * @typedef {import("./view_protocol.js").Model<import("./view_protocol.js").HostViewMessage>} ComponentModel
 * @typedef {{ key: string, node: HTMLElement }} Drawn
 */

export const COMPONENT_STYLE = `${BLOCKS_STYLE}
.lineup-components { display: flex; flex-direction: column; gap: 6px; }
.lineup-component { border: 1px solid var(--jp-border-color2, #ddd); border-radius: 6px; padding: 6px 10px; color: var(--jp-content-font-color1, #222); background: var(--jp-layout-color0, #fff); font-size: var(--jp-content-font-size1, 14px); overflow-wrap: anywhere; }
.lineup-markdown, .lineup-text { max-height: 480px; overflow: auto; }
.lineup-markdown pre { overflow-x: auto; background: var(--jp-layout-color2, #f3f3f3); padding: 6px; }
.lineup-markdown table { border-collapse: collapse; display: block; overflow-x: auto; }
.lineup-markdown th, .lineup-markdown td { border: 1px solid var(--jp-border-color2, #ddd); padding: 2px 6px; }
.lineup-markdown img { max-width: 100%; }
.lineup-markdown a { color: var(--jp-content-link-color, #1976d2); }
.lineup-text { white-space: pre-wrap; margin: 0; font-family: inherit; }
.lineup-state { display: inline-block; width: 8px; height: 8px; border-radius: 50%; margin-right: 8px; background: var(--jp-ui-font-color2, #888); }
.lineup-kind-status[data-state="working"] .lineup-state { background: var(--jp-brand-color1, #1976d2); }
.lineup-kind-status[data-state="done"] .lineup-state { background: var(--jp-success-color1, #388e3c); }
.lineup-kind-status[data-state="failed"] .lineup-state { background: var(--jp-error-color1, #d32f2f); }
.lineup-kind-status[data-state="warning"] .lineup-state { background: var(--jp-warn-color1, #f57c00); }
.lineup-progress-bar { width: 100%; }
.lineup-kind-error { border-color: var(--jp-error-color1, #d32f2f); color: var(--jp-error-color1, #d32f2f); }
.lineup-question fieldset { border: 0; margin: 0; padding: 0; min-width: 0; }
.lineup-question legend, .lineup-question-prompt { padding: 0; margin-bottom: 4px; white-space: pre-wrap; }
.lineup-option { display: block; margin: 2px 0; }
.lineup-actions { display: flex; gap: 8px; margin-top: 6px; }
.lineup-actions button { cursor: pointer; }
.lineup-question fieldset[disabled] .lineup-actions button { cursor: default; opacity: 0.45; }
.lineup-question fieldset[disabled] .lineup-actions button[aria-pressed="true"] { opacity: 1; box-shadow: 0 0 0 2px var(--jp-brand-color1, #1976d2); }
.lineup-question fieldset[disabled] .lineup-actions button[aria-pressed="true"]::before { content: "✓ "; }
.lineup-question fieldset:not([disabled]) .lineup-actions button:not([data-armed]), .lineup-question fieldset:not([disabled]) .lineup-option:not([data-armed]) { opacity: 0.6; }
.lineup-question input[type="text"], .lineup-question input[type="number"] { width: 100%; max-width: 480px; box-sizing: border-box; }
.lineup-problem { color: var(--jp-error-color1, #d32f2f); font-size: 12px; min-height: 1em; }
.lineup-outcome { font-size: 12px; color: var(--jp-ui-font-color2, #666); }
.lineup-component[data-owner]::after { content: attr(data-owner); display: block; text-align: right; font-size: 11px; color: var(--jp-ui-font-color2, #666); }
`;

/** The kinds that wait for the user's answer. */
const QUESTIONS = new Set(["choice", "confirm", "input"]);

/** @type {Set<string>} */
const TAGS = new Set(MARKDOWN_TAGS);
/** @type {Record<string, ReadonlyArray<string>>} */
const ATTRIBUTES = MARKDOWN_ATTRIBUTES;
const LINK_SCHEMES = new Set(MARKDOWN_LINK_SCHEMES.map((scheme) => `${scheme}:`));

/**
 * Sanitized HTML from the kernel as nodes, checked again against the allowlist (H15): any
 * element outside it is dropped with its content, any attribute outside it removed, any link
 * or image URL outside its schemes removed. The HTML is parsed in an inert <template>, so
 * nothing in it loads or runs before it has passed.
 * @param {string} html
 * @returns {DocumentFragment}
 */
export function checkedFragment(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  const content = template.content;
  for (const node of [...content.querySelectorAll("*")]) {
    const tag = node.localName;
    if (!TAGS.has(tag) || node.namespaceURI !== "http://www.w3.org/1999/xhtml") {
      node.remove();
      continue;
    }
    const allowed = ATTRIBUTES[tag] ?? [];
    for (const name of node.getAttributeNames()) {
      if (!allowed.includes(name)) node.removeAttribute(name);
    }
    if (tag === "a") {
      const href = node.getAttribute("href");
      if (href !== null && !safeLink(href)) node.removeAttribute("href");
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", MARKDOWN_LINK_REL);
    } else if (tag === "img" && !MARKDOWN_IMAGE_PATTERN.test(node.getAttribute("src") ?? "")) {
      node.remove();
    }
  }
  // Comments and processing instructions carry nothing a reader needs.
  const walker = document.createTreeWalker(content, NodeFilter.SHOW_COMMENT);
  const comments = [];
  while (walker.nextNode()) comments.push(walker.currentNode);
  for (const comment of comments) comment.parentNode?.removeChild(comment);
  return document.importNode(content, true);
}

/** @param {string} href */
function safeLink(href) {
  try {
    // No base: a relative URL throws, and is refused like any other scheme.
    return LINK_SCHEMES.has(new URL(href).protocol);
  } catch {
    return false;
  }
}

/**
 * A question's Cancel (or No): a plain button that calls `onClick`.
 * @param {string} text
 * @param {() => void} onClick
 */
function cancel(text, onClick) {
  const node = button(STYLED, text);
  node.addEventListener("click", onClick);
  return node;
}

/**
 * Draw the components of `model` into `container`, redrawing only those that changed (a
 * progress update does not disturb a half-typed answer in another component). A whole list
 * (a view that mounts, a snapshot) is drawn in slices that leave the page its turn between
 * them (paced.js): each component appears whole, in the list's order.
 * @param {{ model: ComponentModel, container: HTMLElement,
 *   send: (content: object) => void, arrived?: () => void }} context
 * @returns {{ refused(component_id: string, message: string): void, reconcile(): void,
 *   redraw(component_id: string): void, destroy(): void }}
 */
export function mountComponents({ model, container, send, arrived = () => {} }) {
  /** @type {Map<string, Drawn>} */
  const drawn = new Map();
  const blocks = new Blocks(container);
  const queue = new DrawQueue();
  const stop = new AbortController();

  /** @param {ComponentView} view @param {"answered" | "cancelled"} status @param {any} [value] */
  const answer = (view, status, value) => {
    /** @type {Record<string, any>} */
    const content = { kind: "answer", component_id: view.component_id, status };
    if (status === "answered") content.value = value;
    send(content);
  };

  /** The node showing `view`, drawn again only if the view changed. @param {ComponentView} view */
  const drawnNode = (view) => {
    const key = JSON.stringify(view);
    const item = drawn.get(view.component_id);
    if (item && item.key === key) return item.node;
    const node = draw(view, answer);
    if (QUESTIONS.has(view.kind) && !view.answer) arrived(); // a question waits for the user
    if (item) item.node.replaceWith(node);
    drawn.set(view.component_id, { key, node });
    return node;
  };

  /** @param {ComponentView[]} views @param {string} componentId */
  const redrawOne = (views, componentId) => {
    const at = lastIndexOf(views, componentId);
    if (at < 0) {
      const item = drawn.get(componentId);
      if (item) blocks.remove(item.node);
      drawn.delete(componentId);
      return;
    }
    // After the previous component that is drawn (a new one nearly always goes last).
    /** @type {HTMLElement | null} */
    let previous = null;
    for (let i = at - 1; i >= 0 && !previous; i--) previous = drawn.get(views[i].component_id)?.node ?? null;
    blocks.place(drawnNode(views[at]), previous);
  };

  /** One job of the queue; false when there was none. */
  const step = () => {
    /** @type {ComponentView[]} */
    const views = model.get("components") ?? [];
    const job = queue.next(views);
    if (job === null) return false;
    if ("place" in job) {
      // Keep the page order the kernel's order, moving only what is out of place.
      const previous = job.previous ? (drawn.get(job.previous.component_id)?.node ?? null) : null;
      blocks.place(drawnNode(/** @type {ComponentView} */ (job.place)), previous);
    } else if ("prune" in job) {
      const listed = new Set(views.map((view) => view.component_id));
      for (const [id, item] of drawn) {
        if (listed.has(id)) continue;
        blocks.remove(item.node);
        drawn.delete(id);
      }
    } else {
      redrawOne(views, job.one);
    }
    return true;
  };
  const work = paced({ step, signal: stop.signal });

  /** Make the page match the whole list (a snapshot, the model's list replaced). */
  const reconcile = () => {
    queue.all();
    work.wake();
  };

  model.on("change:components", reconcile);
  reconcile();
  return {
    reconcile,
    /** Redraw one component after a change of the feed: the others stay as they are. */
    redraw(componentId) {
      queue.one(componentId);
      work.wake();
    },
    refused(componentId, message) {
      const node = drawn.get(componentId)?.node;
      if (!node) return;
      const problem = node.querySelector(".lineup-problem");
      if (problem) problem.textContent = message;
      const fieldset = node.querySelector("fieldset");
      if (fieldset) fieldset.disabled = false; // the question is still open: try again
    },
    destroy() {
      stop.abort();
      model.off("change:components", reconcile);
      blocks.clear();
      drawn.clear();
    },
  };
}

/**
 * @param {ComponentView} view
 * @param {(view: ComponentView, status: "answered" | "cancelled", value?: any) => void} answer
 * @returns {HTMLElement}
 */
function draw(view, answer) {
  const card = element("div", `lineup-component lineup-kind-${view.kind}`);
  card.dataset.componentId = view.component_id;
  // Which agent said it, drawn by CSS from the attribute (text, never markup).
  if (typeof view.owner === "string") card.dataset.owner = `agent ${view.owner}`;
  const render = rendererOf(view.kind);
  // A kind this view does not know (a newer kernel): say so, as text.
  if (render === undefined)
    card.append(element("span", "lineup-outcome", `[lineup] cannot draw a ${String(view.kind)}`));
  else render(card, view, answer);
  return card;
}

/**
 * The renderer of a kind, own names only (a kind is never "toString"). @param {string} kind
 * @returns {Renderer | undefined}
 */
export function rendererOf(kind) {
  /** @type {Readonly<Record<string, string>>} */
  const names = COMPONENT_RENDERERS;
  const name = Object.hasOwn(names, kind) ? names[kind] : undefined;
  return name !== undefined && Object.hasOwn(RENDERERS, name) ? RENDERERS[name] : undefined;
}

/**
 * @typedef {(card: HTMLElement, view: ComponentView,
 *   answer: (view: ComponentView, status: "answered" | "cancelled", value?: any) => void) => void} Renderer
 */

/**
 * Each component kind's renderer, under the name its declaration gives it (protocol/_models.py
 * COMPONENT_KINDS, here as COMPONENT_RENDERERS); widgets/_static.py registers the saved view's
 * under the same names, and js/tests/components.test.js finds a declared name missing here.
 * @type {Readonly<Record<string, Renderer>>}
 */
export const RENDERERS = Object.freeze({
  markdown(card, view) {
    const body = element("div", "lineup-markdown");
    body.append(checkedFragment(String(view.html ?? "")));
    card.append(body);
  },
  text(card, view) {
    card.append(element("pre", "lineup-text", String(view.text)));
  },
  status(card, view) {
    card.setAttribute("role", "status");
    card.dataset.state = String(view.state);
    const dot = element("span", "lineup-state");
    dot.setAttribute("aria-hidden", "true");
    card.append(dot, element("span", "lineup-label", String(view.label)));
  },
  progress: drawProgress,
  error(card, view) {
    card.setAttribute("role", "alert");
    card.append(element("strong", "lineup-code", String(view.code)), ` ${String(view.message)}`);
  },
  question: drawQuestion,
});

/** @param {HTMLElement} card @param {ComponentView} view */
function drawProgress(card, view) {
  const label = view.label === undefined ? "" : String(view.label);
  const bar = /** @type {HTMLProgressElement} */ (element("progress", "lineup-progress-bar"));
  bar.max = Number(view.total);
  const determinate = typeof view.value === "number";
  if (determinate) bar.value = view.value; // no value attribute: indeterminate
  const percent = determinate ? Math.round((100 * view.value) / Number(view.total)) : null;
  bar.setAttribute("aria-label", label || "Progress");
  if (percent !== null) bar.setAttribute("aria-valuetext", `${percent}%`);
  const caption = element("div", "lineup-label", percent === null ? label : `${label} ${percent}%`.trim());
  card.append(caption, bar);
}

/**
 * @param {HTMLElement} card
 * @param {ComponentView} view
 * @param {(view: ComponentView, status: "answered" | "cancelled", value?: any) => void} answer
 */
function drawQuestion(card, view, answer) {
  const form = /** @type {HTMLFormElement} */ (element("form", "lineup-question"));
  form.noValidate = true; // our messages, in the card, not the browser's bubbles
  const fieldset = /** @type {HTMLFieldSetElement} */ (element("fieldset", ""));
  const problem = element("div", "lineup-problem");
  problem.setAttribute("aria-live", "polite");
  const actions = element("div", "lineup-actions");
  /** @type {() => { value?: any, problem?: string }} */
  let collect = () => ({});
  /** Every control that decides (js/decision_input.js): the buttons, each option. @type {HTMLElement[]} */
  const guarded = [];
  /** @type {import("./decision_input.js").Intent | null} the text field whose Enter submits */
  let field = null;

  if (view.kind === "choice") {
    fieldset.append(element("legend", "", String(view.prompt)));
    const type = view.multiple ? "checkbox" : "radio";
    const name = `lineup-${view.component_id}`;
    /** @type {HTMLInputElement[]} */
    const inputs = [];
    const chosen = new Set(view.answer?.value ?? []);
    for (const option of view.options) {
      const row = /** @type {HTMLLabelElement} */ (element("label", "lineup-option"));
      const input = /** @type {HTMLInputElement} */ (element("input", ""));
      input.type = type;
      input.name = name;
      input.value = String(option.id);
      input.checked = chosen.has(option.id);
      inputs.push(input);
      row.append(input, ` ${String(option.label)}`);
      fieldset.append(row);
      guarded.push(row);
    }
    const [low, high] = view.multiple ? [view.min_selected ?? 0, view.max_selected ?? view.options.length] : [1, 1];
    collect = () => {
      const value = inputs.filter((input) => input.checked).map((input) => input.value);
      if (value.length >= low && value.length <= high) return { value };
      const wanted = low === high ? `${low}` : `between ${low} and ${high}`;
      return { problem: `Choose ${wanted} option${high === 1 ? "" : "s"}.` };
    };
    actions.append(button(ACCEPT, String(view.submit_label), "submit"));
    actions.append(cancel(String(view.cancel_label), () => finish("cancelled")));
  } else if (view.kind === "confirm") {
    fieldset.append(element("p", "lineup-question-prompt", String(view.prompt)));
    collect = () => ({ value: true });
    actions.append(button(ACCEPT, String(view.confirm_label), "submit"));
    actions.append(cancel(String(view.cancel_label), () => finish("answered", false)));
  } else {
    const label = /** @type {HTMLLabelElement} */ (element("label", ""));
    label.append(element("div", "lineup-question-prompt", String(view.prompt)));
    const input = /** @type {HTMLInputElement} */ (element("input", STYLED));
    const number = view.input_type === "number";
    input.type = number ? "number" : "text";
    if (view.placeholder !== undefined) input.placeholder = String(view.placeholder);
    if (view.default !== undefined) input.value = String(view.default);
    if (view.answer?.value !== undefined) input.value = String(view.answer.value);
    input.required = number || Boolean(view.required); // a number input answers a number
    if (view.min_length !== undefined) input.minLength = view.min_length;
    if (view.max_length !== undefined) input.maxLength = view.max_length;
    if (view.pattern !== undefined) input.pattern = String(view.pattern);
    if (view.min !== undefined) input.min = String(view.min);
    if (view.max !== undefined) input.max = String(view.max);
    if (number) input.step = "any";
    label.append(input);
    fieldset.append(label);
    field = guardField(input);
    collect = () => {
      if (!input.checkValidity()) return { problem: input.validationMessage };
      return { value: number ? Number(input.value) : input.value };
    };
    actions.append(button(ACCEPT, String(view.submit_label), "submit"));
    actions.append(cancel(String(view.cancel_label), () => finish("cancelled")));
  }

  /** @param {"answered" | "cancelled"} status @param {any} [value] */
  function finish(status, value) {
    fieldset.disabled = true; // until the kernel's list says answered (or refuses it)
    problem.textContent = "";
    answer(view, status, value);
  }
  // Enter in a field submits, as in any form; JupyterLab's own Enter shortcut would otherwise
  // take the key first and cancel the form's implicit submission (measured).
  // That Enter decides only when the user came to the field after it stood still (a key typed
  // as the question appeared does not answer it).
  form.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || !(event.target instanceof HTMLInputElement)) return;
    event.preventDefault();
    event.stopPropagation();
    const why = field ? keyboardRefusal(field, event) : "keyboard";
    if (why === null) form.requestSubmit();
    else problem.textContent = REFUSED[why];
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault(); // never a real form submission: it would navigate the page
    const result = collect();
    if (result.problem !== undefined) problem.textContent = result.problem;
    else finish("answered", result.value);
  });
  fieldset.append(actions, problem);
  form.append(fieldset);
  card.append(form);
  if (!view.answer) {
    const say = (/** @type {string} */ text) => {
      problem.textContent = text;
    };
    for (const control of [...guarded, ...actions.querySelectorAll("button")]) {
      guardDecision(/** @type {HTMLElement} */ (control), { say });
    }
  }
  if (view.answer) {
    // Answered: inert (the fieldset disables every control), the button that answered marked.
    fieldset.disabled = true;
    const outcome = view.answer.status === "cancelled" ? "Cancelled." : `Answered: ${describe(view)}`;
    fieldset.append(element("div", "lineup-outcome", outcome));
    const [accept, refuse] = actions.querySelectorAll("button");
    const refused = view.answer.status === "cancelled" || (view.kind === "confirm" && view.answer.value === false);
    const chosen = refused ? refuse : accept;
    chosen?.setAttribute("aria-pressed", "true");
  }
}

/** @param {ComponentView} view */
function describe(view) {
  const value = view.answer.value;
  if (view.kind === "choice") {
    /** @type {Map<string, string>} */
    const labels = new Map(view.options.map((/** @type {any} */ o) => [o.id, o.label]));
    return value.map((/** @type {string} */ id) => labels.get(id) ?? id).join(", ");
  }
  if (view.kind === "confirm") return value ? String(view.confirm_label) : String(view.cancel_label);
  return String(value);
}
