// What an MCP app's card shows (js/mcp_cards.js draws it): its heading, its grant card and its
// notes, made of the server's and the app's own strings, honestly (js/honest_text.js: hidden
// characters shown, URLs as the browser reads them, long values cut), and the cards' style.

import { guardDecision } from "./decision_input.js";
import { ACCEPT, button, element, REJECT } from "./dom.js";
import { clip, describeUrl, visible } from "./honest_text.js";
import { cspSource, GRANTABLE, grantedSources } from "./mcp_frames.js";

/**
 * @typedef {import("./view_protocol.js").McpAppSpec} McpAppSpec
 */

/** Notes a card shows (the kernel keeps the newest 20 in the spec too). */
export const NOTES_SHOWN = 20;
/** Characters of a note shown; the inspector has the whole message. */
export const NOTE_CHARS = 500;

/** What a grant lets the app do, per directive (the grant card's words). */
export const GRANT_WORDS = /** @type {Record<string, string>} */ ({
  connectDomains: "send and receive data (fetch, WebSocket) with",
  resourceDomains: "load scripts, styles, images, fonts and media from",
});

/**
 * What a card's header says: whose app this is, honestly (the server's own strings made
 * visible: hidden characters shown, bounded).
 * @param {McpAppSpec} spec
 */
export function appHeading(spec) {
  const one = (/** @type {string} */ text, /** @type {number} */ limit) => clip(visible(text), limit).shown;
  const title = one(spec.title || spec.tool, 80);
  const detail = `MCP app · server ${one(spec.server, 60)} ${one(spec.server_version, 20)} · tool ${one(spec.tool, 60)}`;
  return { title, detail, tooltip: `${one(spec.resource_uri, 200)} · ${spec.agent}` };
}

/**
 * The domains the resource declared that the user has not answered yet, per directive.
 * @param {McpAppSpec} spec @param {Set<string>} denied "directive domain" this view denied
 */
export function undecided(spec, denied) {
  const { sources } = grantedSources(spec.granted);
  /** @type {Array<{ directive: string, domain: string }>} */
  const rows = [];
  for (const directive of GRANTABLE) {
    for (const domain of spec.csp?.[directive] ?? []) {
      const source = cspSource(domain);
      if (source === null || sources[directive].includes(source)) continue; // not grantable, or granted
      if (!denied.has(`${directive} ${domain}`)) rows.push({ directive, domain });
    }
  }
  return rows;
}

/**
 * The grant card's content: a lead line, a row per undecided domain with Allow and Deny, and
 * what this host never grants; nothing when there is nothing to say.
 * @param {McpAppSpec} spec @param {Set<string>} denied
 * @param {(directive: string, domain: string, allow: boolean) => void} answer the user's click
 * @returns {HTMLElement[]}
 */
export function grantCard(spec, denied, answer) {
  const rows = undecided(spec, denied);
  const refused = spec.refused_csp ?? [];
  const { invalid } = grantedSources(spec.csp);
  if (rows.length === 0 && refused.length === 0 && invalid.length === 0) return [];
  const nodes = [
    element(
      "div",
      "lineup-mcp-grants-lead",
      "This app declares network access. It has none until you allow a domain; allowing one restarts the app with it.",
    ),
  ];
  for (const { directive, domain } of rows) {
    const row = element("div", "lineup-mcp-grant");
    row.dataset.directive = directive;
    row.dataset.domain = domain;
    row.append(
      element("span", "lineup-mcp-grant-what", `Let it ${GRANT_WORDS[directive]} `),
      domainText(domain, spec.owners ?? {}),
    );
    const allow = button(`lineup-mcp-allow ${ACCEPT}`, "Allow");
    const deny = button(`lineup-mcp-deny ${REJECT}`, "Deny");
    const click = (/** @type {boolean} */ yes) => {
      allow.disabled = true;
      deny.disabled = true;
      answer(directive, domain, yes);
    };
    allow.addEventListener("click", () => click(true));
    deny.addEventListener("click", () => click(false));
    // Only a click the user meant (js/decision_input.js): a row drawn under the pointer, by a
    // double click's first half or a redraw, takes none until it stood still and the pointer came.
    const note = element("span", "lineup-mcp-grant-note");
    note.setAttribute("aria-live", "polite");
    const say = (/** @type {string} */ text) => {
      note.textContent = text;
    };
    guardDecision(allow, { say });
    guardDecision(deny, { say });
    row.append(allow, deny, note);
    nodes.push(row);
  }
  for (const item of refused) {
    const reason = clip(visible(item.reason), 300).shown;
    nodes.push(
      element(
        "div",
        "lineup-mcp-grant-refused",
        `Not allowed here: ${visible(item.directive)} ${clip(visible(item.domain), 200).shown} (${reason})`,
      ),
    );
  }
  for (const item of invalid) {
    nodes.push(
      element(
        "div",
        "lineup-mcp-grant-refused",
        `Not a domain this host can allow: ${clip(visible(item.domain), 200).shown} (a scheme and a host, such as https://api.example.com)`,
      ),
    );
  }
  return nodes;
}

/** A note of the kernel's, as text: hidden characters shown, bounded. @param {string} text */
export function noteLine(text) {
  const { shown, omitted } = clip(visible(String(text), { multiline: true }), NOTE_CHARS);
  return element("div", "lineup-mcp-note", omitted ? `${shown}… (${omitted} more characters)` : shown);
}

/**
 * A declared domain as the user should read it: exactly as declared (a wildcard stays `*.`),
 * its owner marked out as the kernel named it (protocol/_owners.py), punycode for a host that
 * is not plain ASCII (honest_text.js describeUrl).
 * @param {string} domain @param {Record<string, string>} owners
 */
function domainText(domain, owners) {
  const holder = element("span", "lineup-mcp-domain");
  const wildcard = domain.includes("://*.");
  const url = describeUrl(wildcard ? domain.replace("://*.", "://") : domain, owners);
  if (!url) {
    holder.textContent = clip(visible(domain), 200).shown;
    return holder;
  }
  const before = wildcard ? url.before.replace("://", "://*.") : url.before;
  holder.append(before, element("strong", "", url.domain), url.after === "/" ? "" : url.after);
  if (wildcard) holder.append(` (every host under ${url.domain})`);
  if (url.punycode) holder.append(" (an international name, shown as the browser reads it)");
  return holder;
}

export const MCP_STYLE = `
.lineup-mcp:popover-open { position: fixed; inset: 0; width: auto; height: auto; max-width: none; max-height: none; margin: 0; padding: 0; border: 0; border-radius: 0; display: flex; flex-direction: column; background: var(--jp-layout-color0, #fff); color: inherit; }
.lineup-mcp[data-mode="fullscreen"] > .lineup-shell:not([hidden]) { flex: 1 1 auto; height: auto; }
.lineup-mcp-borderless { border-color: transparent; }
.lineup-mcp-exit { margin-left: auto; margin-right: 4px; font-size: 11px; }
.lineup-mcp-grants { display: flex; flex-direction: column; gap: 4px; padding: 6px 8px; font-size: 12px; border-bottom: 1px solid var(--jp-border-color2, #ddd); background: var(--jp-layout-color1, #fafafa); }
.lineup-mcp-grants[hidden] { display: none; }
.lineup-mcp-grant { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
.lineup-mcp-domain { font-family: var(--jp-code-font-family, monospace); }
.lineup-mcp-grant-refused { color: var(--jp-warn-color0, #a66); }
.lineup-mcp-grant button:not([data-armed]) { opacity: 0.6; }
.lineup-mcp-grant-note { font-size: 11px; color: var(--jp-warn-color0, #a66); }
.lineup-mcp-notes:empty, .lineup-mcp-lines:empty { display: none; }
.lineup-mcp-note { font-size: 12px; padding: 2px 8px; white-space: pre-wrap; color: var(--jp-ui-font-color1, #222); border-left: 3px solid var(--jp-brand-color1, #1976d2); margin: 2px 8px; }
`;
