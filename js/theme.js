// The notebook's theme, for surfaces to follow: light or dark, and a few colours, sent to each
// ready surface (frames.js bridge) and again whenever JupyterLab switches theme.

import { SURFACE_NAMESPACE } from "./protocol.generated.js";

/** Variables a surface gets (as --lineup-NAME) from JupyterLab's theme. */
export const THEME_VARIABLES = [
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

/**
 * @typedef {{ namespace: string, type: "theme", mode: "light" | "dark",
 *   vars: Record<string, string> }} ThemeMessage
 */

/**
 * The theme message for the page's computed styles and JupyterLab's `data-jp-theme-light`
 * (absent outside JupyterLab: light).
 * @param {{ getPropertyValue(name: string): string }} styles
 * @param {string | undefined} light
 * @returns {ThemeMessage}
 */
export function themeMessage(styles, light) {
  /** @type {Record<string, string>} */
  const vars = {};
  for (const [name, source] of THEME_VARIABLES) vars[name] = styles.getPropertyValue(source).trim();
  return { namespace: SURFACE_NAMESPACE, type: "theme", mode: light === "false" ? "dark" : "light", vars };
}

/** The page's theme now. @returns {ThemeMessage} */
export function pageTheme() {
  return themeMessage(getComputedStyle(document.body), document.body.dataset.jpThemeLight);
}

/**
 * Call `changed` whenever JupyterLab switches theme, until `signal` aborts.
 * @param {() => void} changed @param {AbortSignal} signal
 */
export function watchTheme(changed, signal) {
  const observer = new MutationObserver(changed);
  observer.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-light", "data-jp-theme-name"] });
  signal.addEventListener("abort", () => observer.disconnect());
}

/** MCP Apps' standard style variables (the App SDK's McpUiStyleVariableKey) from JupyterLab's. */
export const MCP_STYLE_VARIABLES = [
  ["--color-background-primary", "--jp-layout-color0"],
  ["--color-background-secondary", "--jp-layout-color1"],
  ["--color-background-tertiary", "--jp-layout-color2"],
  ["--color-text-primary", "--jp-ui-font-color1"],
  ["--color-text-secondary", "--jp-ui-font-color2"],
  ["--color-text-tertiary", "--jp-ui-font-color3"],
  ["--color-text-danger", "--jp-error-color1"],
  ["--color-text-success", "--jp-success-color1"],
  ["--color-text-warning", "--jp-warn-color1"],
  ["--color-border-primary", "--jp-border-color1"],
  ["--color-border-secondary", "--jp-border-color2"],
  ["--color-ring-primary", "--jp-brand-color1"],
  ["--font-sans", "--jp-ui-font-family"],
  ["--font-mono", "--jp-code-font-family"],
];

/**
 * The theme as an MCP app's host context has it (`theme`, `styles.variables`): only the
 * variables the page defines.
 * @param {{ getPropertyValue(name: string): string }} styles
 * @param {string | undefined} light
 */
export function mcpTheme(styles, light) {
  /** @type {Record<string, string>} */
  const variables = {};
  for (const [name, source] of MCP_STYLE_VARIABLES) {
    const value = styles.getPropertyValue(source).trim();
    if (value) variables[name] = value;
  }
  return { theme: light === "false" ? "dark" : "light", styles: { variables } };
}

/** The page's theme now, for an MCP app. */
export function pageMcpTheme() {
  return mcpTheme(getComputedStyle(document.body), document.body.dataset.jpThemeLight);
}
