// The inspector's records in the browser, without the DOM (so node --test covers them): a
// bounded log that notices a gap in what the kernel sent, and the filters and one-line
// summaries the view draws from.

/**
 * @typedef {{ seq: number, time: number, direction: "to_client" | "to_agent",
 *   kind: "envelope" | "refused" | "handler_error" | "mcp", type: string | null,
 *   instance_id: string | null, envelope: any, error: any, health?: boolean }} InspectorRecord
 * @typedef {{ type?: string, instance_id?: string, problems_only?: boolean,
 *   hide_health?: boolean }} RecordFilter
 */

/**
 * The kernel's history as this view has it, oldest first: at most `size` records of the
 * conversation and `healthSize` health checks (core/_bus.py History: a watchdog's pings never
 * push the conversation out, here either).
 */
export class RecordLog {
  /** @param {number} size @param {number} [healthSize] */
  constructor(size, healthSize = 0) {
    this.size = Math.max(1, size);
    this.healthSize = Math.max(0, healthSize);
    /** @type {InspectorRecord[]} */
    this.records = [];
    this.lastSeq = 0;
  }

  /**
   * Everything the kernel has, after a sync.
   * @param {InspectorRecord[]} records @param {number} size @param {number} [healthSize]
   */
  reset(records, size, healthSize = 0) {
    this.size = Math.max(1, size);
    this.healthSize = Math.max(0, healthSize);
    this.records = records.slice();
    this.trim();
    this.lastSeq = records.length ? records[records.length - 1].seq : 0;
  }

  /** Drop the oldest of each kind past its bound. */
  trim() {
    let health = 0;
    for (const record of this.records) if (record.health) health += 1;
    let extraHealth = Math.max(0, health - this.healthSize);
    let extra = Math.max(0, this.records.length - health - this.size);
    if (!extraHealth && !extra) return;
    this.records = this.records.filter((record) => {
      if (record.health ? extraHealth-- > 0 : extra-- > 0) return false;
      return true;
    });
  }

  /**
   * Records the kernel sent after the one numbered `after`. False when this view missed a
   * message in between (the server's rate limiter drops some under load): ask for a sync.
   * @param {number} after @param {InspectorRecord[]} records
   */
  append(after, records) {
    if (after !== this.lastSeq) return false;
    this.records.push(...records);
    this.trim();
    if (records.length) this.lastSeq = records[records.length - 1].seq;
    return true;
  }

  /** @param {RecordFilter} filter */
  matching(filter) {
    return this.records.filter((record) => matches(record, filter));
  }

  /** The distinct values of a field, sorted, for the filter menus. @param {"type" | "instance_id"} field */
  values(field) {
    const seen = new Set();
    for (const record of this.records) if (record[field]) seen.add(record[field]);
    return [...seen].sort();
  }
}

/** @param {InspectorRecord} record @param {RecordFilter} filter */
export function matches(record, filter) {
  if (filter.type && record.type !== filter.type) return false;
  if (filter.instance_id && record.instance_id !== filter.instance_id) return false;
  if (filter.problems_only && (record.kind === "envelope" || record.kind === "mcp")) return false;
  if (filter.hide_health && record.health) return false;
  return true;
}

// An MCP record's `dir` (core/_bus.py Record): JSON-RPC between the kernel and an MCP server,
// or between the page and an MCP app (docs/mcp-apps.md).
const MCP_ARROWS = {
  to_server: "host → MCP server",
  from_server: "MCP server → host",
  to_app: "host → MCP app",
  from_app: "MCP app → host",
};

/** Who sent it, in a word: the agent side or the notebook side. @param {InspectorRecord} record */
export function arrow(record) {
  if (record.kind === "mcp") {
    const dir = /** @type {keyof typeof MCP_ARROWS} */ (record.envelope?.dir);
    if (Object.hasOwn(MCP_ARROWS, dir)) return MCP_ARROWS[dir];
  }
  return record.direction === "to_client" ? "agent → host" : "host → agent";
}

/**
 * Why it was refused, in one line (code, rule, JSON path, the sentence), or null.
 * @param {InspectorRecord} record
 */
export function problem(record) {
  if (record.kind === "envelope" || !record.error) return null;
  const { code, rule, path, message } = record.error;
  if (record.kind === "handler_error") return `handler failed: ${message ?? ""}`;
  return `${code ?? "refused"} ${rule ?? ""} ${path ?? ""}: ${message ?? ""}`.replace(/ +/g, " ");
}

/**
 * What a row must show without being opened: the event's name, the capability called, the
 * call's status, the component's kind and id, why a surface closed. @param {InspectorRecord} record
 */
export function gist(record) {
  if (record.kind === "mcp") return mcpGist(record.envelope);
  const payload = /** @type {Record<string, unknown> | undefined} */ (record.envelope?.payload);
  if (!payload || typeof payload !== "object") return "";
  const text = (/** @type {unknown} */ value) => (typeof value === "string" ? value.slice(0, 80) : "");
  switch (record.type) {
    case "lineup.v1.ui.event":
      return text(payload.event);
    case "lineup.v1.app.call":
      return text(payload.capability);
    case "lineup.v1.app.result":
      return `${text(payload.call_id)} ${text(payload.status)}`;
    case "lineup.v1.ui.close":
      return text(payload.reason);
    case "lineup.v1.component.show":
      return `${text(payload.kind)} ${text(payload.component_id)}`;
    case "lineup.v1.component.answer":
      return `${text(payload.component_id)} ${text(payload.status)}`;
    default:
      return "";
  }
}

/**
 * An MCP record's row: its server and app, the tool called or the JSON-RPC id answered.
 * @param {any} envelope
 */
function mcpGist(envelope) {
  if (!envelope || typeof envelope !== "object") return "";
  const text = (/** @type {unknown} */ value) => (typeof value === "string" ? value.slice(0, 80) : "");
  const rpc = envelope.jsonrpc && typeof envelope.jsonrpc === "object" ? envelope.jsonrpc : {};
  const where = [text(envelope.server), text(envelope.app_id)].filter(Boolean).join(" ");
  const tool = rpc.params && typeof rpc.params === "object" ? text(rpc.params.name) : "";
  const id = typeof rpc.id === "string" || typeof rpc.id === "number" ? `#${String(rpc.id).slice(0, 40)}` : "";
  const outcome = rpc.error ? "error" : "";
  return [where, tool, id, outcome].filter(Boolean).join(" ");
}

/** "1 surface", "2 surfaces". @param {number} count @param {string} word @param {string} [many] */
export function plural(count, word, many = `${word}s`) {
  return `${count} ${count === 1 ? word : many}`;
}

/** @param {number} seconds since the epoch */
export function clock(seconds) {
  const date = new Date(seconds * 1000);
  const pad = (/** @type {number} */ n, width = 2) => String(n).padStart(width, "0");
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}
