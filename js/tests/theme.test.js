// What a surface is told of the notebook's theme (theme.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { SURFACE_NAMESPACE } from "../protocol.generated.js";
import { MCP_STYLE_VARIABLES, mcpTheme, THEME_VARIABLES, themeMessage } from "../theme.js";

const styles = { getPropertyValue: (/** @type {string} */ name) => `  ${name}-value ` };

test("each --lineup- variable carries its JupyterLab variable's value, trimmed", () => {
  const message = themeMessage(styles, "true");
  assert.equal(message.namespace, SURFACE_NAMESPACE);
  assert.equal(message.type, "theme");
  assert.deepEqual(
    Object.keys(message.vars),
    THEME_VARIABLES.map(([name]) => name),
  );
  assert.equal(message.vars["--lineup-accent"], "--jp-brand-color1-value");
});

test("dark only when JupyterLab says the theme is not light; outside JupyterLab, light", () => {
  assert.equal(themeMessage(styles, "false").mode, "dark");
  assert.equal(themeMessage(styles, "true").mode, "light");
  assert.equal(themeMessage(styles, undefined).mode, "light");
});

test("an MCP app gets the theme as MCP Apps' standard variables, which the App SDK's schema takes", async () => {
  const { McpUiHostContextSchema } = await import("@modelcontextprotocol/ext-apps/app-with-deps");
  const context = mcpTheme(styles, "false");
  assert.equal(context.theme, "dark");
  assert.equal(context.styles.variables["--font-sans"], "--jp-ui-font-family-value");
  assert.deepEqual(
    Object.keys(context.styles.variables),
    MCP_STYLE_VARIABLES.map(([name]) => name),
  );
  assert.ok(McpUiHostContextSchema.safeParse(context).success);
  const empty = mcpTheme({ getPropertyValue: () => "" }, undefined);
  assert.deepEqual(empty, { theme: "light", styles: { variables: {} } }, "a variable the page lacks is left out");
});
