// Consent cards: one per app.call waiting for the user, drawn by the host view outside every
// surface (a surface cannot draw or click one: it lives in its own sandboxed frame). The kernel
// decides what is pending; this module only shows it and reports the user's click.
//
// Messages (view_protocol.js): the kernel sends `consent` (everything) after a `consent_sync`,
// then `consent_delta` (each change alone; a gap in seq: sync again); the view sends
// `consent_sync`, `consent_decide` and `consent_revoke`.
//
// Capabilities that need the user's activation (open a tab, write the clipboard, pick a file)
// run inside the Allow click's own handler, before anything is awaited (H21); what the browser
// did goes to the kernel as `outcome`, which the kernel checks.

import { guardDecision } from "./decision_input.js";
import { ACCEPT, button, element, REJECT, STYLED } from "./dom.js";
import { clip, describeUrl, fieldOrder, hasHidden, KEY_FIELDS, visible } from "./honest_text.js";

/**
 * @typedef {{ action?: string, max_content_bytes?: number }} BrowserOptions
 * @typedef {{ call_id: string, capability: string, version: string, risk: string,
 *   description: string, agent: string, reason: string, arguments: Record<string, unknown>,
 *   owners?: Record<string, string>, description_by?: "host" | "requester",
 *   reason_by?: "host" | "agent",
 *   expires_at: string, remaining_ms: number, runs_in: string, browser: BrowserOptions,
 *   remember_allowed: boolean, typed_name_required: boolean, identity?: Identity }} CallSpec
 * @typedef {{ agent: string, session: number, via: string }} Identity
 *   who a call is from as the host knows it (H27): the label, the host's number, how it is connected
 * @typedef {Identity & { capability: string }} Grant
 * @typedef {{ call_id: string, capability: string, status: string,
 *   decided_by: string | null }} Recent
 * @typedef {{ ok: true, result: Record<string, unknown> } | { ok: false, message: string }
 *   | { cancelled: true }} Outcome
 * @typedef {{ spec: CallSpec, card: HTMLElement, deadline: number, expiry: HTMLElement,
 *   note: HTMLElement, position: HTMLElement, buttons: HTMLButtonElement[],
 *   actions: HTMLElement, typed: HTMLInputElement | null, remember: HTMLInputElement | null,
 *   busy: boolean }} Card
 * @typedef {import("./view_protocol.js").Model} Model
 */

const RISK_LABELS = /** @type {Record<string, string>} */ ({
  display_only: "display only",
  user_confirmation: "asks your confirmation",
  system_permission: "system permission: asked every time",
  restricted: "restricted: asked every time, type its name to allow",
});

const STYLE = `
.lineup-consent { display: flex; flex-direction: column; gap: 6px; }
.lineup-consent:empty { display: none; }
.lineup-consent-count { font-size: 12px; color: var(--jp-ui-font-color2, #666); }
.lineup-prompt-position { min-height: 16px; line-height: 16px; } /* "Request 1 of 2" appearing moves nothing */
.lineup-prompt { border: 2px solid var(--jp-brand-color1, #1976d2); border-radius: 6px; padding: 8px 10px; background: var(--jp-layout-color1, #fff); color: var(--jp-ui-font-color1, #222); font-size: 13px; display: flex; flex-direction: column; gap: 4px; }
.lineup-prompt[data-risk="system_permission"], .lineup-prompt[data-risk="restricted"] { border-color: var(--jp-warn-color0, #c77700); }
.lineup-prompt-title { font-weight: 600; }
.lineup-prompt-risk { font-size: 12px; color: var(--jp-ui-font-color2, #666); }
.lineup-prompt-args { margin: 0; max-height: 16em; overflow: auto; padding: 4px 6px; background: var(--jp-layout-color2, #f3f3f3); font-family: var(--jp-code-font-family, monospace); font-size: 12px; display: flex; flex-direction: column; gap: 4px; }
.lineup-prompt-arg-value, .lineup-prompt-reason-text { white-space: pre-wrap; word-break: break-word; }
.lineup-prompt-arg-name { font-weight: 600; margin-right: 6px; }
.lineup-prompt-domain { font-weight: 700; text-decoration: underline; }
.lineup-prompt-hidden { background: var(--jp-warn-color3, #fde7c0); color: var(--jp-warn-color0, #8a4b00); border-radius: 2px; }
.lineup-prompt-scope { font-size: var(--jp-ui-font-size0, 11px); color: var(--jp-ui-font-color2, #666); margin: 0 0 4px; }
.lineup-prompt-words { white-space: pre-wrap; word-break: break-word; font-size: 12px; }
.lineup-prompt-agent { font-family: var(--jp-code-font-family, monospace); font-style: italic; border: 1px dashed var(--jp-ui-font-color2, #888); border-radius: 3px; padding: 0 3px; }
.lineup-prompt-more { font-size: 11px; margin-left: 6px; }
.lineup-prompt-warning { font-size: 12px; color: var(--jp-warn-color0, #8a4b00); }
.lineup-prompt-actions { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
.lineup-prompt-actions button:not([data-armed]), .lineup-prompt-remember:not([data-armed]) { opacity: 0.6; }
.lineup-prompt button:focus-visible, .lineup-prompt input:focus-visible { outline: 2px solid var(--jp-brand-color1, #1976d2); }
.lineup-prompt-expiry, .lineup-prompt-note, .lineup-consent-grants, .lineup-consent-recent { font-size: 12px; color: var(--jp-ui-font-color2, #666); }
`;

/** @param {number} ms */
export function countdown(ms) {
  if (ms <= 0) return "Expired";
  const seconds = Math.ceil(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  if (minutes >= 60) return `Expires in ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return `Expires in ${minutes}:${String(seconds % 60).padStart(2, "0")}`;
}

/** @param {Uint8Array} bytes */
function base64(bytes) {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(text);
}

/** @param {File} file @param {number} maxContent @returns {Promise<Outcome>} */
async function describeFile(file, maxContent) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  /** @type {Record<string, unknown>} */
  const result = {
    name: file.name,
    size: file.size,
    media_type: file.type,
    sha256: Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""),
  };
  if (file.size <= maxContent) result.content_base64 = base64(bytes);
  return { ok: true, result };
}

/**
 * Start what the capability does in the browser. Must be called synchronously from the click
 * handler: window.open, clipboard writes and file choosers need the user's activation, which
 * an await would lose.
 * @param {CallSpec} spec
 * @param {HTMLElement} root
 * @returns {Promise<Outcome>}
 */
export function runInBrowser(spec, root) {
  const args = spec.arguments;
  const action = spec.browser.action;
  try {
    if (action === "open_url") {
      const url = new URL(String(args.url));
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return Promise.resolve({ ok: false, message: "only http and https pages are opened" });
      }
      window.open(url.href, "_blank", "noopener,noreferrer");
      return Promise.resolve({ ok: true, result: { opened: true } });
    }
    if (action === "clipboard_write") {
      return navigator.clipboard.writeText(String(args.text)).then(
        () => /** @type {Outcome} */ ({ ok: true, result: { written: true } }),
        (error) => ({ ok: false, message: String(error?.name ?? error) }),
      );
    }
    if (action === "pick_file") {
      const input = document.createElement("input");
      input.type = "file";
      if (typeof args.accept === "string") input.accept = args.accept;
      input.hidden = true;
      root.append(input);
      const maxContent = spec.browser.max_content_bytes ?? 0;
      const picked = new Promise((resolve) => {
        input.addEventListener(
          "change",
          () => {
            const file = input.files?.[0];
            input.remove();
            if (!file) resolve({ cancelled: true });
            else
              describeFile(file, maxContent).then(resolve, (error) =>
                resolve({ ok: false, message: String(error?.name ?? error) }),
              );
          },
          { once: true },
        );
        input.addEventListener(
          "cancel",
          () => {
            input.remove();
            resolve({ cancelled: true });
          },
          { once: true },
        );
      });
      input.click();
      return /** @type {Promise<Outcome>} */ (picked);
    }
  } catch (error) {
    return Promise.resolve({ ok: false, message: String(/** @type {any} */ (error)?.name ?? error) });
  }
  return Promise.resolve({ ok: false, message: `this view cannot run ${spec.capability}` });
}

let cardCounter = 0;

// How much of an agent's string a card shows before "Show all": a path is at most 1024
// characters (H25), a URL 2048; anything else 400, the reason 500, the agent's name 80.
const SHOWN = { key: 2048, other: 400, reason: 500, agent: 80 };
/** The marker `visible` writes; drawn in a warning colour (an agent typing one only fakes a warning). */
const MARKER = /(⟨U\+[0-9A-F]{4,6}⟩)/u;

/** Visible text, markers highlighted. @param {string} text @returns {Node[]} */
function shown(text) {
  return text
    .split(MARKER)
    .filter((part) => part !== "")
    .map((part) => (MARKER.test(part) ? element("mark", "lineup-prompt-hidden", part) : document.createTextNode(part)));
}

/**
 * An agent's string, visible and bounded, with "Show all" when it was cut.
 * @param {HTMLElement} into @param {string} text @param {number} limit @param {boolean} multiline
 */
function fillBounded(into, text, limit, multiline) {
  const { shown: head, omitted } = clip(text, limit);
  into.replaceChildren(...shown(visible(head, { multiline })));
  if (!omitted) return;
  into.append(`… (${omitted.toLocaleString("en")} more characters)`);
  const more = button(
    `lineup-prompt-more ${STYLED}`,
    `Show all (${(limit + omitted).toLocaleString("en")} characters)`,
  );
  more.dataset.offlineOk = ""; // it only shows what the card already has
  more.addEventListener("click", () => {
    into.replaceChildren(...shown(visible(text, { multiline })));
  });
  into.append(more);
}

/**
 * Does anything the agent wrote hold a character `visible` shows as a marker? (Line breaks
 * count only in one-line values: the name, argument names, key fields.)
 * @param {CallSpec} spec
 */
function holdsHidden(spec) {
  const keys = KEY_FIELDS[spec.capability] ?? [];
  /** @param {unknown} value @param {boolean} multiline @returns {boolean} */
  const walk = (value, multiline) => {
    if (typeof value === "string") return hasHidden(value, { multiline });
    if (Array.isArray(value)) return value.some((item) => walk(item, true));
    if (value && typeof value === "object") {
      return Object.entries(value).some(([name, item]) => hasHidden(name) || walk(item, true));
    }
    return false;
  };
  if (hasHidden(spec.agent) || hasHidden(spec.reason, { multiline: spec.reason_by !== "host" })) return true;
  if (spec.description_by === "requester" && hasHidden(spec.description, { multiline: true })) return true;
  return Object.entries(spec.arguments).some(([name, value]) => hasHidden(name) || walk(value, !keys.includes(name)));
}

/**
 * What a Remember would cover, said before the user ticks it (H27): this identity only (the
 * agent's name in its own style, then how the host knows it is connected), this capability
 * only, until the kernel restarts or it is revoked; its waiting requests of it run too.
 * @param {{ capability: string, identity?: Identity }} spec
 */
function rememberScope(spec) {
  const line = element("div", "lineup-prompt-scope");
  const who = spec.identity;
  if (!who) return line;
  line.append(
    "Remember covers only Agent ",
    agentName(who.agent),
    ` (${connection(who)}) and `,
    element("code", "", spec.capability),
    `, until this kernel restarts or you revoke it; its other waiting ${spec.capability} requests run too. ` +
      "Another agent, or one taking this name later, is asked again.",
  );
  return line;
}

/**
 * A remembered grant's line, with whose it is and its Revoke (H27).
 * @param {Grant} grant @param {(content: import("./view_protocol.js").HostViewMessage) => void} send
 */
function grantLine(grant, send) {
  const line = element("div", "lineup-consent-grant");
  const revoke = button(`lineup-revoke ${STYLED}`, "Revoke");
  revoke.setAttribute("aria-label", `Revoke the remembered permission for ${grant.capability}`);
  revoke.addEventListener("click", () =>
    send({ kind: "consent_revoke", capability: grant.capability, session: grant.session }),
  );
  line.append("Allowed for this session: ", element("code", "", grant.capability), " for Agent ");
  line.append(agentName(grant.agent), ` (${connection(grant)}) `, revoke);
  return line;
}

/** The name an agent gave itself, in the agent's own style: never read as the host's words. */
function agentName(/** @type {string} */ name) {
  const agent = element("span", "lineup-prompt-agent");
  fillBounded(agent, name, SHOWN.agent, false);
  agent.prepend("«");
  agent.append("»");
  return agent;
}

/** How the host knows an identity is connected (the kernel's own agents have no number). */
function connection(/** @type {Identity} */ who) {
  return who.session === 0 ? who.via : `${who.via}, connection ${who.session}`;
}

/**
 * What the capability does: the host's line, or the requester's words (an MCP server's tool
 * title or description) quoted in the agent's style under a label saying whose they are, so
 * "Risk: display only (verified by lineup-jupyter)" from a server never reads as the host's.
 * @param {CallSpec} spec
 */
function description(spec) {
  if (spec.description_by !== "requester") return element("div", "lineup-prompt-risk", spec.description);
  const line = element("div", "lineup-prompt-described");
  const words = element("span", "lineup-prompt-agent lineup-prompt-words");
  fillBounded(words, spec.description, SHOWN.reason, true);
  line.append(element("strong", "", "What it says it does (its own words, not checked by lineup-jupyter): "), words);
  return line;
}

/**
 * One argument of a call: its name, and its value as text the user can trust (a URL as the
 * browser will open it, its owner as the kernel named it, hidden characters shown, long
 * values cut).
 * @param {string} capability @param {string} name @param {unknown} value
 * @param {Record<string, string>} owners host -> registrable domain (protocol/_owners.py)
 */
function argumentRow(capability, name, value, owners) {
  const row = element("div", "lineup-prompt-arg");
  const label = element("span", "lineup-prompt-arg-name");
  fillBounded(label, name, 80, false);
  label.append(":");
  const body = element("span", "lineup-prompt-arg-value");
  const key = (KEY_FIELDS[capability] ?? []).includes(name);
  const url = name === "url" && typeof value === "string" ? describeUrl(value, owners) : null;
  if (url) {
    body.append(...shown(url.before), element("strong", "lineup-prompt-domain", url.domain), ...shown(url.after));
    if (url.punycode)
      body.append(
        element("div", "lineup-prompt-warning", "An international name, shown as the browser sends it (punycode)."),
      );
  } else if (typeof value === "string") {
    fillBounded(body, value, key ? SHOWN.key : SHOWN.other, !key);
  } else {
    fillBounded(body, JSON.stringify(value, null, 2) ?? String(value), SHOWN.other, true);
  }
  row.append(label, " ", body);
  return row;
}

/**
 * Draw the consent cards of a host view. Returns the cleanup.
 * @param {{ model: Model, root: HTMLElement,
 *   send: (content: import("./view_protocol.js").HostViewMessage) => void,
 *   signal?: AbortSignal, arrived?: () => void }} context
 */
export function mountPrompts({ model, root, send, signal, arrived = () => {} }) {
  const style = document.createElement("style");
  style.textContent = STYLE;
  const section = element("section", "lineup-consent");
  section.setAttribute("aria-label", "Requests from agents to use capabilities");
  const count = element("div", "lineup-consent-count");
  const queue = element("div", "lineup-consent-queue");
  queue.setAttribute("aria-live", "polite"); // a new card is announced, focus stays put
  const grants = element("div", "lineup-consent-grants");
  const recent = element("div", "lineup-consent-recent");
  recent.setAttribute("role", "status"); // "completed (user)" read out when another view decides
  // The count below the cards: a line appearing above them would move them.
  section.append(queue, count, grants, recent);
  // At the end: a card arriving moves nothing the user is working with (docs/security.md).
  root.append(style, section);

  /** @type {Map<string, Card>} */
  const cards = new Map();

  /**
   * @param {Card} entry
   * @param {"allow" | "deny" | "cancel"} decision
   * @param {Outcome} [outcome]
   */
  function decide(entry, decision, outcome) {
    entry.busy = true;
    for (const control of entry.buttons) control.disabled = true;
    entry.note.textContent = "Sent; waiting for the kernel…";
    send({
      kind: "consent_decide",
      call_id: entry.spec.call_id,
      decision,
      remember: entry.remember?.checked === true,
      typed_name: entry.typed ? entry.typed.value : null,
      ...(outcome && "ok" in outcome ? { outcome } : {}),
    });
  }

  /** @param {CallSpec} spec @returns {Card} */
  function makeCard(spec) {
    const id = `lineup-prompt-${++cardCounter}`;
    const card = element("div", "lineup-prompt");
    card.dataset.callId = spec.call_id;
    card.dataset.risk = spec.risk;
    card.setAttribute("role", "group");
    card.setAttribute("aria-labelledby", `${id}-title`);
    const position = element("div", "lineup-consent-count lineup-prompt-position");
    const title = element("div", "lineup-prompt-title");
    title.id = `${id}-title`;
    // The agent names itself: always «in quotes», in its own style, after the word Agent, so
    // no name (`lineup-jupyter`, "The notebook") reads as the host speaking.
    const agent = element("span", "lineup-prompt-agent");
    fillBounded(agent, spec.agent, SHOWN.agent, false);
    agent.prepend("«");
    agent.append("»");
    agent.title = "The name the agent gave itself";
    title.append("Agent ", agent, " asks to use ", element("code", "lineup-prompt-capability", spec.capability));
    const risk = element("div", "lineup-prompt-risk", `Risk: ${RISK_LABELS[spec.risk] ?? spec.risk}`);
    const reason = element("div", "lineup-prompt-reason");
    const reasonText = element("span", "lineup-prompt-reason-text");
    // The host's own summary of an MCP app's call holds the server's names in JSON quotes: one
    // line, so no name can start a line of its own.
    const hostWrote = spec.reason_by === "host";
    fillBounded(reasonText, spec.reason, SHOWN.reason, !hostWrote);
    reason.append(
      element(
        "strong",
        "",
        hostWrote
          ? "Why (lineup-jupyter's summary; the quoted names are the server's): "
          : "Reason (the agent's words): ",
      ),
      reasonText,
    );
    const args = element("div", "lineup-prompt-args");
    args.setAttribute("aria-label", "Arguments");
    args.setAttribute("role", "group");
    for (const name of fieldOrder(spec.capability, spec.arguments)) {
      args.append(argumentRow(spec.capability, name, spec.arguments[name], spec.owners ?? {}));
    }
    const warning = holdsHidden(spec)
      ? element(
          "div",
          "lineup-prompt-warning",
          "This request holds invisible or direction-changing characters: each is shown as ⟨U+code⟩.",
        )
      : null;
    const expiry = element("div", "lineup-prompt-expiry");
    const note = element("div", "lineup-prompt-note");
    note.setAttribute("aria-live", "polite");
    card.append(position, title, risk);
    if (spec.description) card.append(description(spec));
    card.append(reason, args);
    if (warning) card.append(warning);
    card.append(expiry);

    /** @type {HTMLInputElement | null} */
    let typed = null;
    if (spec.typed_name_required) {
      const label = element("label", "lineup-prompt-typed");
      label.append("Type ", element("code", "", spec.capability), " to allow: ");
      typed = document.createElement("input");
      typed.type = "text";
      typed.autocomplete = "off";
      typed.spellcheck = false;
      typed.className = "lineup-prompt-typed-input";
      label.append(typed);
      card.append(label);
    }
    /** @type {HTMLInputElement | null} */
    let remember = null;
    if (spec.remember_allowed) {
      const label = element("label", "lineup-prompt-remember");
      remember = document.createElement("input");
      remember.type = "checkbox";
      label.append(remember, " Remember for this session");
      card.append(label, rememberScope(spec));
    }
    const actions = element("div", "lineup-prompt-actions");
    // JupyterLab's own accept and reject styles: the host's Allow never looks like a button
    // a surface drew inside its frame.
    const allow = button(`lineup-allow ${ACCEPT}`, "Allow");
    const deny = button(`lineup-deny ${REJECT}`, "Deny");
    const dismiss = button(`lineup-dismiss ${STYLED}`, "Close");
    dismiss.title = "Close this request without deciding (the agent hears: cancelled)";
    actions.append(allow, deny, dismiss);
    card.append(actions, note);

    /** @type {Card} */
    const entry = {
      spec,
      card,
      expiry,
      note,
      position,
      typed,
      remember,
      actions,
      deadline: Date.now() + spec.remaining_ms,
      buttons: [allow, deny, dismiss],
      busy: false,
    };
    // Each button takes only a click the user meant (js/decision_input.js), checked before its
    // own handler; so does Remember, which widens what Allow decides. The card is armed (a
    // signal tests wait on) when all its buttons are.
    const guarded = remember?.parentElement ? [allow, deny, dismiss, remember.parentElement] : [allow, deny, dismiss];
    const say = (/** @type {string} */ text) => {
      note.textContent = text;
    };
    const armedChanged = () => {
      card.toggleAttribute(
        "data-armed",
        guarded.every((control) => control.hasAttribute("data-armed")),
      );
    };
    for (const control of guarded) guardDecision(control, { say, armedChanged });
    allow.addEventListener("click", () => {
      if (entry.busy || Date.now() >= entry.deadline) return;
      if (typed && typed.value !== spec.capability) {
        note.textContent = `Type ${spec.capability} exactly to allow this request.`;
        typed.focus();
        return;
      }
      if (spec.runs_in !== "browser") {
        decide(entry, "allow");
        return;
      }
      // Synchronously, in this click: the browser needs the user's activation (H21).
      const running = runInBrowser(spec, root);
      entry.busy = true;
      for (const control of entry.buttons) control.disabled = true;
      note.textContent = "Running in the browser…";
      running.then((outcome) => decide(entry, "cancelled" in outcome ? "cancel" : "allow", outcome));
    });
    deny.addEventListener("click", () => entry.busy || decide(entry, "deny"));
    dismiss.addEventListener("click", () => entry.busy || decide(entry, "cancel"));
    card.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !entry.busy) decide(entry, "cancel");
    });
    return entry;
  }

  function tick() {
    const now = Date.now();
    for (const entry of cards.values()) {
      const left = entry.deadline - now;
      entry.expiry.textContent = countdown(left);
      if (left <= 0) entry.buttons[0].disabled = true; // the kernel expires it (H20)
    }
  }

  /** @param {{ pending: CallSpec[], remembered: Grant[], recent: Recent[],
   *   refused?: { call_id: string, message: string } }} state */
  function apply(state) {
    const pending = Array.isArray(state.pending) ? state.pending : [];
    const wanted = new Set(pending.map((spec) => spec.call_id));
    for (const [callId, entry] of cards) {
      if (!wanted.has(callId)) {
        entry.card.remove();
        cards.delete(callId);
      }
    }
    pending.forEach((spec, index) => {
      let entry = cards.get(spec.call_id);
      if (!entry) {
        entry = makeCard(spec);
        cards.set(spec.call_id, entry);
        arrived();
      }
      queue.append(entry.card); // in the kernel's order: oldest first
      entry.position.textContent = pending.length > 1 ? `Request ${index + 1} of ${pending.length}` : "";
    });
    const refused = state.refused ? cards.get(state.refused.call_id) : undefined;
    if (refused && state.refused) {
      refused.busy = false;
      for (const control of refused.buttons) control.disabled = false;
      refused.note.textContent = state.refused.message;
    }
    count.textContent = pending.length > 1 ? `${pending.length} requests are waiting for you` : "";
    grants.replaceChildren();
    for (const grant of Array.isArray(state.remembered) ? state.remembered : []) grants.append(grantLine(grant, send));
    const last = Array.isArray(state.recent) ? state.recent[0] : undefined;
    recent.textContent = last
      ? `Last request: ${last.capability} (${last.call_id}): ${last.status}${last.decided_by ? `, decided by ${last.decided_by}` : ""}`
      : "";
    tick();
  }

  /** @type {{ pending: CallSpec[], remembered: Grant[], recent: Recent[] } | null} */
  let current = null; // null: waiting for everything (consent_sync)
  let seq = 0;

  /** @param {any} content */
  function onCustom(content) {
    if (content?.kind === "consent") {
      current = { pending: content.pending ?? [], remembered: content.remembered ?? [], recent: content.recent ?? [] };
      seq = Number(content.seq);
      apply({ ...current, refused: content.refused });
    } else if (content?.kind === "consent_delta") {
      if (current === null || Number(content.seq) <= seq) return;
      if (Number(content.seq) !== seq + 1) {
        current = null; // a message was lost: ask for everything again
        send({ kind: "consent_sync" });
        return;
      }
      seq = Number(content.seq);
      const gone = new Set(content.removed ?? []);
      current.pending = current.pending.filter((spec) => !gone.has(spec.call_id)).concat(content.added ?? []);
      if (content.remembered) current.remembered = content.remembered;
      if (content.recent) current.recent = content.recent;
      apply({ ...current, refused: content.refused });
    }
  }

  model.on("msg:custom", onCustom);
  const timer = setInterval(tick, 1000);
  send({ kind: "consent_sync" });

  const cleanup = () => {
    clearInterval(timer);
    model.off("msg:custom", onCustom);
    section.remove();
    style.remove();
  };
  signal?.addEventListener("abort", cleanup);
  return cleanup;
}
