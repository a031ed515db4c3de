// The one way the host's own chrome makes an element: agent strings go in as text, never markup.

/**
 * @param {string} tag
 * @param {string} className
 * @param {string} [text]
 * @returns {HTMLElement}
 */
export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * A button of the host's chrome: `type="button"`, so it never submits anything, unless it is
 * the submit button of a form the host draws (a question's answer).
 * @param {string} className
 * @param {string} text
 * @param {"button" | "submit"} [type]
 * @returns {HTMLButtonElement}
 */
export function button(className, text, type = "button") {
  const node = /** @type {HTMLButtonElement} */ (element("button", className, text));
  node.type = type;
  return node;
}

/**
 * JupyterLab's own button and input styles (theme-aware, light and dark): the host's controls
 * look like JupyterLab's, never like something a surface drew inside its frame.
 */
export const STYLED = "jp-mod-styled";
/** The button that says yes (Submit, Confirm, Allow): JupyterLab's accent. */
export const ACCEPT = "jp-mod-styled jp-mod-accept";
/** The button that says no (Deny). */
export const REJECT = "jp-mod-styled jp-mod-reject";
