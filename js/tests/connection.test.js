// The host view's line to the kernel (connection.js): early messages wait, in order; events
// go before what came after them; a kernel that is gone never breaks the view.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Connection, EARLY_KEPT, EVENTS_ALONE_PER_SECOND } from "../connection.js";

function fake() {
  /** @type {any[]} */ const sent = [];
  /** @type {Array<() => void>} */ const timers = [];
  const model = {
    get: () => undefined,
    set: () => {},
    send: (/** @type {any} */ content) => sent.push(content),
    on: () => {},
    off: () => {},
  };
  const connection = new Connection(model, { now: () => 0, later: (run) => timers.push(run) });
  return { connection, sent, timers, model };
}

test("what the user did before the kernel answered waits, in order, then goes", () => {
  const { connection, sent } = fake();
  connection.send({ kind: "sync" }); // not held: the sync is what connects
  connection.sendInOrder({ kind: "close", instance_id: "a" });
  connection.event({ kind: "event", instance_id: "b", message: {} });
  assert.deepEqual(sent, [{ kind: "sync" }]);
  connection.connect();
  assert.deepEqual(
    sent.map((content) => content.kind),
    ["sync", "close", "event"],
  );
});

test("a view that never connects keeps only the first few", () => {
  const { connection, sent } = fake();
  for (let n = 0; n < 3 * EARLY_KEPT; n++) connection.sendInOrder({ kind: "close", instance_id: String(n) });
  connection.connect();
  assert.equal(sent.length, EARLY_KEPT);
  assert.equal(sent[0].instance_id, "0");
});

test("events batched in a burst go before the message that followed them", () => {
  const { connection, sent, timers } = fake();
  connection.connect();
  for (let n = 0; n < EVENTS_ALONE_PER_SECOND + 5; n++)
    connection.event({ kind: "event", instance_id: "w", message: n });
  connection.sendInOrder({ kind: "close", instance_id: "w" });
  const kinds = sent.map((content) => content.kind);
  assert.deepEqual(kinds.slice(-2), ["events", "close"]);
  assert.equal(sent.at(-2).items.length, 5);
  assert.equal(timers.length, 1);
});

test("without a kernel, sending does not throw: the view stays read-only", () => {
  const { connection, model } = fake();
  model.send = () => {
    throw new Error("no comm");
  };
  const warn = console.warn;
  console.warn = () => {};
  try {
    connection.connect();
    assert.doesNotThrow(() => connection.sendInOrder({ kind: "sync" }));
  } finally {
    console.warn = warn;
  }
});
