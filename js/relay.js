// What a surface's shell sends the host view, and what of it reaches the kernel (S4, U7).
//
// The shell window that sent a message decides the instance (surfaces.js entryOf); this
// module decides the rest: the shell's own reports (ready, pong, resize, dropped, too_large,
// blocked, silent, problem, csp) and the surface's events, checked as the kernel checks them
// (surface_message.js) and within the surface's rate. What the view refuses goes to the agent
// as a `refused` message; a flood of refusals is still a flood, so it counts like events.

import { SURFACE_NAMESPACE } from "./protocol.generated.js";
import { validateSurfaceMessage } from "./surface_message.js";

/**
 * @typedef {import("./view_protocol.js").HostViewMessage} HostViewMessage
 * @typedef {import("./view_protocol.js").EventItem} EventItem
 * @typedef {{ code: string, rule: string, path: string, message: string }} Report
 * @typedef {{ spec: { instance_id: string }, ready: boolean, stalled: boolean,
 *   rate: { take(): boolean }, size: { next(height: number): number | null },
 *   lastDropReport: number, lastCspReport: number, shellKey: string | null }} Relayed
 */

/** What the bridge keeps a surface from doing itself, and what to use instead (C8, H21). */
export const BLOCKED = /** @type {Record<string, string>} */ ({
  copy: "This surface tried to change what you copy; blocked. An app writes the clipboard with clipboard.write, after you allow it.",
  file: "This surface tried to read a file itself; blocked. An app reads a file you pick with device.pick_file, after you allow it.",
});
/** The reports only a shell makes (bridge.js shellRelay): taken only with its key. */
export const SHELL_REPORTS = new Set(["dropped", "too_large", "silent"]);

/** Said when a surface never spoke: its one script (bridge + js) did not run. */
export const SILENT =
  "This surface did not start: its script did not run (a syntax error in its js? the browser console says).";

/**
 * Said when the page found where its js does not parse (syntax_check.js).
 * @param {{ message: string, line: number, column: number }} found
 */
export function silentAt(found) {
  return `This surface did not start: its js does not parse: ${found.message} (line ${found.line}, column ${found.column} of its js).`;
}
/** Said with a blocked script: only the bundle's js runs in a surface (docs/security.md). */
export const SCRIPT_HINT =
  " (a surface runs only its bundle's js: no <script> in its html, no inline on* handler, no eval)";

/**
 * A field of what a frame sent, as text: whatever a surface posts through its shell (an
 * object whose toString is null makes String() throw) never breaks the host view.
 * @param {unknown} value
 */
export function asText(value) {
  if (typeof value === "string") return value;
  try {
    return String(value);
  } catch {
    return "(not text)";
  }
}

/** @param {unknown} value */
function asNumber(value) {
  return typeof value === "number" ? value : Number(asText(value));
}

/**
 * @template {Relayed} E
 * @typedef {{
 *   sendInOrder(content: HostViewMessage): void,
 *   event(item: EventItem): void,
 *   ready(entry: E): void,
 *   pong(entry: E): void,
 *   resize(entry: E, height: number): void,
 *   notice(entry: E, kind: string, text: string): boolean,
 *   whySilent?: (entry: E) => Promise<string | null>,
 * }} RelayPorts
 */

/** @template {Relayed} E */
export class Relay {
  /**
   * @param {RelayPorts<E>} ports where the relay's decisions go: the kernel and the card
   * @param {{ events_per_second: number }} config
   * @param {() => number} [now]
   */
  constructor(ports, config, now = () => performance.now()) {
    this.ports = ports;
    this.config = config;
    this.now = now;
  }

  /** Tell the surface's agent what the view refused or did. @param {E} entry @param {Report} report */
  refuse(entry, report) {
    this.ports.sendInOrder({ kind: "refused", instance_id: entry.spec.instance_id, ...report });
  }

  /** A refusal within the surface's rate, batched with its events. @param {E} entry @param {Report} report */
  refuseCounted(entry, report) {
    if (!entry.rate.take()) this.tooMany(entry);
    else this.ports.event({ kind: "refused", instance_id: entry.spec.instance_id, ...report });
  }

  /** Past the rate: the excess is dropped, and said at most once a second. @param {E} entry */
  tooMany(entry) {
    const now = this.now();
    if (now - entry.lastDropReport <= 1000) return;
    entry.lastDropReport = now;
    this.refuse(entry, {
      code: "rate_limited",
      rule: "S4",
      path: "$",
      message: `more than ${this.config.events_per_second} messages per second: the excess is dropped`,
    });
  }

  /**
   * Said once per kind in the surface's card, where the user looks, and to its agent.
   * @param {E} entry @param {string} kind @param {{ code: string, rule: string, message: string }} report
   */
  notice(entry, kind, report) {
    if (this.ports.notice(entry, kind, report.message)) this.refuse(entry, { ...report, path: "$" });
  }

  /**
   * A surface's script problem, to the kernel (host.problems), as text and bounded.
   * @param {E} entry @param {{ level?: unknown, text?: unknown, stack?: unknown }} report
   */
  problem(entry, report) {
    this.ports.sendInOrder({
      kind: "surface_problem",
      instance_id: entry.spec.instance_id,
      level: asText(report.level).slice(0, 32),
      text: asText(report.text).slice(0, 500),
      stack: typeof report.stack === "string" ? report.stack.slice(0, 4000) : "",
    });
  }

  /**
   * What the surface's shell sent. A report only the shell makes (dropped, too_large,
   * silent) counts as the shell's only with the shell's key; without it the surface sent it,
   * and it is one of the surface's messages, within its rate like any other (a surface posting
   * `dropped` 160 times a second made 964 errors in 6 s outside the rate before). What a
   * surface may report itself (csp, blocked) takes from its rate too.
   * @param {E} entry @param {any} message
   */
  handle(entry, message) {
    if (message?.namespace !== SURFACE_NAMESPACE) {
      this.refuseCounted(entry, { code: "invalid", rule: "U7", path: "$.namespace", message: "not a surface message" });
      return;
    }
    const shells = entry.shellKey === null || message.shell === entry.shellKey;
    if (!shells && SHELL_REPORTS.has(message.type)) {
      this.event(entry, message);
      return;
    }
    if (!shells && (message.type === "csp" || message.type === "blocked") && !entry.rate.take()) {
      this.tooMany(entry);
      return;
    }
    switch (message.type) {
      case "ready":
        if (entry.ready) return; // once a frame: repeating it costs the page nothing more
        entry.ready = true;
        this.ports.ready(entry);
        return;
      case "pong":
        this.ports.pong(entry);
        return;
      case "dropped":
        this.refuse(entry, {
          code: "rate_limited",
          rule: "S4",
          path: "$",
          message: `the surface sent too many messages: ${asNumber(message.count)} dropped in the last second`,
        });
        return;
      case "too_large":
        this.refuseCounted(entry, {
          code: "too_large",
          rule: "U9",
          path: "$",
          message: `the message is over ${asNumber(message.limit)} characters as JSON: the shell refused it`,
        });
        return;
      case "blocked": {
        const kind = asText(message.what);
        if (!Object.hasOwn(BLOCKED, kind)) return; // the surface names it: only ours are shown
        this.notice(entry, kind, { code: "unsupported", rule: "H21", message: BLOCKED[kind] });
        return;
      }
      case "silent": {
        if (entry.ready) return;
        const say = (/** @type {string} */ text) => {
          this.notice(entry, "silent", { code: "invalid", rule: "U4", message: text });
          this.problem(entry, { level: "silent", text });
        };
        const why = this.ports.whySilent?.(entry);
        if (!why) say(SILENT);
        else
          why.then(
            (found) => say(found ?? SILENT),
            () => say(SILENT),
          );
        return;
      }
      case "problem":
        // The bridge's report of the bundle's own error (issue 15): shown in the host view
        // and host.problems, within the surface's rate like an event.
        if (!entry.rate.take()) this.tooMany(entry);
        else this.problem(entry, message);
        return;
      case "csp":
        this.csp(entry, message);
        return;
      case "resize": {
        const height = entry.size.next(asNumber(message.height));
        if (height !== null) this.ports.resize(entry, height);
        return;
      }
      default:
        this.event(entry, message);
    }
  }

  /** A Content-Security-Policy violation: one report a second, a loop of them is one story. @param {E} entry @param {any} message */
  csp(entry, message) {
    const now = this.now();
    if (now - entry.lastCspReport <= 1000) return;
    entry.lastCspReport = now;
    const directive = asText(message.directive);
    this.refuse(entry, {
      code: "csp_violation",
      rule: "S3",
      path: "$",
      message: `blocked by ${directive}: ${asText(message.blocked)}${directive.startsWith("script-src") ? SCRIPT_HINT : ""}`,
    });
  }

  /** The surface's own message: an event, checked as the kernel would, within its rate. @param {E} entry @param {any} message */
  event(entry, message) {
    if (!entry.rate.take()) {
      this.tooMany(entry);
      return;
    }
    const instance_id = entry.spec.instance_id;
    const verdict = validateSurfaceMessage(message);
    if (!verdict.ok) {
      const { code, rule, path, message: text } = verdict;
      this.ports.event({ kind: "refused", instance_id, code, rule, path, message: text });
    } else {
      this.ports.event({
        kind: "event",
        instance_id,
        message: { namespace: SURFACE_NAMESPACE, type: "event", event: verdict.event, data: verdict.data },
      });
    }
  }
}
