// The inspector's log and filters in the browser (issue 7): bounded, gap-aware, filterable.
import assert from "node:assert/strict";
import { test } from "node:test";

import { arrow, gist, matches, plural, problem, RecordLog } from "../inspector_model.js";

/** @param {number} seq @param {Partial<import("../inspector_model.js").InspectorRecord>} [fields] */
const record = (seq, fields = {}) => ({
  seq,
  time: 0,
  direction: /** @type {const} */ ("to_client"),
  kind: /** @type {const} */ ("envelope"),
  type: "lineup.v1.ui.patch",
  instance_id: "w1",
  envelope: {},
  error: null,
  ...fields,
});

test("a reset keeps the last `size` records and appends continue from them", () => {
  const log = new RecordLog(10);
  log.reset([record(1), record(2), record(3)], 2);
  assert.deepEqual(
    log.records.map((r) => r.seq),
    [2, 3],
  );
  assert.equal(log.append(3, [record(4)]), true);
  assert.deepEqual(
    log.records.map((r) => r.seq),
    [3, 4],
  ); // the oldest falls off
  assert.equal(log.lastSeq, 4);
});

test("a batch that does not follow the last record is a gap: refused, nothing changes", () => {
  const log = new RecordLog(10);
  log.reset([record(1)], 10);
  assert.equal(log.append(2, [record(3)]), false); // the batch after 1 (record 2) went missing
  assert.deepEqual(
    log.records.map((r) => r.seq),
    [1],
  );
  assert.equal(log.lastSeq, 1);
});

test("filters by type, instance and problems; menus list distinct values", () => {
  const log = new RecordLog(10);
  const refused = record(3, {
    kind: "refused",
    type: null,
    instance_id: null,
    error: { code: "invalid", rule: "M1", path: "$.v", message: "v must be 1" },
  });
  log.reset([record(1), record(2, { type: "lineup.v1.ui.open", instance_id: "w2" }), refused], 10);
  assert.deepEqual(
    log.matching({ instance_id: "w2" }).map((r) => r.seq),
    [2],
  );
  assert.deepEqual(
    log.matching({ type: "lineup.v1.ui.patch" }).map((r) => r.seq),
    [1],
  );
  assert.deepEqual(
    log.matching({ problems_only: true }).map((r) => r.seq),
    [3],
  );
  assert.deepEqual(
    log.matching({}).map((r) => r.seq),
    [1, 2, 3],
  );
  assert.deepEqual(log.values("type"), ["lineup.v1.ui.open", "lineup.v1.ui.patch"]);
  assert.deepEqual(log.values("instance_id"), ["w1", "w2"]);
  assert.equal(matches(refused, { type: "lineup.v1.ui.patch" }), false);
});

test("a refusal reads as code, rule, path and sentence; an envelope has no problem", () => {
  const refused = record(1, {
    kind: "refused",
    error: { code: "invalid", rule: "U5", path: "$.payload.js", message: "code never changes through a patch" },
  });
  assert.equal(problem(refused), "invalid U5 $.payload.js: code never changes through a patch");
  assert.equal(problem(record(2)), null);
  assert.match(
    String(problem(record(3, { kind: "handler_error", error: { message: "boom" } }))),
    /^handler failed: boom/,
  );
  assert.equal(arrow(record(4)), "agent → host");
  assert.equal(arrow(record(5, { direction: "to_agent" })), "host → agent");
});

test("a row shows what matters without being opened: event, capability, status", () => {
  /** @param {string} type @param {object} payload */
  const sent = (type, payload) => /** @type {any} */ ({ type, envelope: { payload } });
  assert.equal(gist(sent("lineup.v1.ui.event", { instance_id: "w", event: "refresh", data: {} })), "refresh");
  assert.equal(gist(sent("lineup.v1.app.call", { call_id: "c1", capability: "app.open_url" })), "app.open_url");
  assert.equal(gist(sent("lineup.v1.app.result", { call_id: "c1", status: "completed" })), "c1 completed");
  assert.equal(gist(sent("lineup.v1.component.show", { kind: "choice", component_id: "q" })), "choice q");
  assert.equal(gist(sent("lineup.v1.ui.patch", { instance_id: "w", state: {} })), "");
  assert.equal(gist(/** @type {any} */ ({ type: "x", envelope: "not an object" })), "");
});

test("MCP traffic reads as MCP: who spoke, the server and app, the tool, the id", () => {
  /** @param {object} envelope */
  const mcp = (envelope) => record(1, { kind: "mcp", type: "mcp.tools/call", envelope });
  const call = mcp({
    server: "weather",
    app_id: "mcp-1",
    dir: "from_app",
    jsonrpc: { id: 7, method: "tools/call", params: { name: "refresh_weather" } },
  });
  assert.equal(arrow(call), "MCP app → host");
  assert.equal(gist(call), "weather mcp-1 refresh_weather #7");
  assert.equal(arrow(mcp({ dir: "to_server" })), "host → MCP server");
  assert.equal(gist(mcp({ server: "weather", dir: "to_app", jsonrpc: { id: 7, error: {} } })), "weather #7 error");
  assert.equal(arrow(mcp({ dir: "__proto__" })), "agent → host"); // not one of ours: the envelope's
  assert.equal(problem(call), null);
  assert.equal(matches(call, { problems_only: true }), false); // traffic, not a problem
});

test("counts read as English: 1 surface, 2 surfaces, 1 inventory", () => {
  assert.equal(plural(1, "surface"), "1 surface");
  assert.equal(plural(2, "surface"), "2 surfaces");
  assert.equal(plural(0, "call"), "0 calls");
  assert.equal(plural(1, "inventory", "inventories"), "1 inventory");
  assert.equal(plural(3, "inventory", "inventories"), "3 inventories");
});

test("health checks are kept apart: a flood of pings never pushes the conversation out", () => {
  const log = new RecordLog(3, 2);
  const ping = (/** @type {number} */ seq) => record(seq, { kind: "mcp", type: "mcp.ping", health: true });
  log.reset([record(1), record(2)], 3, 2);
  let seq = 2;
  for (let i = 0; i < 50; i++) {
    assert.equal(log.append(seq, [ping(seq + 1)]), true);
    seq += 1;
  }
  assert.deepEqual(
    log.records.map((r) => r.seq),
    [1, 2, 51, 52],
  ); // the conversation whole, the last two pings
  assert.equal(log.append(seq, [record(53), record(54)]), true);
  assert.deepEqual(
    log.records.filter((r) => !r.health).map((r) => r.seq),
    [2, 53, 54],
  ); // the conversation's own bound still holds
  assert.deepEqual(
    log.matching({ hide_health: true }).map((r) => r.seq),
    [2, 53, 54],
  );
  assert.equal(log.matching({}).length, 5);
});
