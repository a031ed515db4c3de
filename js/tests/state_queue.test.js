// Coalescing of states (U4), the size guard and the event rate limit.

import assert from "node:assert/strict";
import { test } from "node:test";

import { EventBatcher, RateLimit, SizeGuard, StateQueue } from "../state_queue.js";

test("U4: a burst of states delivers only the newest, once the surface is ready", () => {
  /** @type {Array<[string, number]>} */
  const delivered = [];
  const queue = new StateQueue((id, item) => delivered.push([id, item.revision]));
  for (let revision = 1; revision <= 10000; revision++) queue.push("w", { revision, state: { n: revision } });
  queue.flush(() => false);
  assert.deepEqual(delivered, []);
  queue.flush(() => true);
  assert.deepEqual(delivered, [["w", 10000]]);
});

test("U4: an older state never replaces a newer one, even arriving late", () => {
  /** @type {number[]} */
  const delivered = [];
  const queue = new StateQueue((_id, item) => delivered.push(item.revision));
  queue.push("w", { revision: 5, state: {} });
  queue.flush(() => true);
  assert.equal(queue.push("w", { revision: 4, state: {} }), false);
  assert.equal(queue.push("w", { revision: 5, state: {} }), false);
  assert.equal(queue.push("w", { revision: 7, state: {} }), true); // a gap is fine: states are whole
  queue.flush(() => true);
  assert.deepEqual(delivered, [5, 7]);
});

test("a reset instance (a new frame) takes its state again", () => {
  /** @type {number[]} */
  const delivered = [];
  const queue = new StateQueue((_id, item) => delivered.push(item.revision));
  queue.push("w", { revision: 3, state: {} });
  queue.flush(() => true);
  queue.reset("w");
  queue.push("w", { revision: 3, state: {} });
  queue.flush(() => true);
  assert.deepEqual(delivered, [3, 3]);
});

test("resize is clamped and ignores jitter", () => {
  const guard = new SizeGuard(40, 800);
  assert.equal(guard.next(10), null); // clamped to 40, which it already is
  assert.equal(guard.next(5000), 800);
  assert.equal(guard.next(801), null);
  assert.equal(guard.next(300), 300);
  assert.equal(guard.next(301), null);
  assert.equal(guard.next(Number.NaN), null);
});

test("resize that oscillates settles on the larger height and stops", () => {
  const guard = new SizeGuard(40, 800);
  /** @type {Array<number | null>} */
  const applied = [];
  for (let i = 0; i < 10; i++) applied.push(guard.next(i % 2 ? 200 : 300));
  assert.equal(guard.frozen, true);
  assert.equal(guard.current, 300);
  assert.equal(guard.next(500), null);
  assert.ok(applied.filter((h) => h !== null).length <= 6);
});

test("S4: a flood of events is cut to the burst, then to the rate", () => {
  let now = 0;
  const limit = new RateLimit(50, 100, () => now);
  let passed = 0;
  for (let i = 0; i < 1000; i++) if (limit.take()) passed++;
  assert.equal(passed, 100);
  now += 1000;
  for (let i = 0; i < 1000; i++) if (limit.take()) passed++;
  assert.equal(passed, 150);
  assert.equal(limit.dropped, 1850);
});

test("S4: events go one by one while few, then together, none lost and in order", () => {
  let clock = 0;
  /** @type {Array<() => void>} */
  const timers = [];
  /** @type {Array<number | number[]>} */
  const messages = [];
  const batcher = new EventBatcher(
    (/** @type {number} */ item) => messages.push(item),
    (/** @type {number[]} */ items) => messages.push(items),
    { windowMs: 100, batchAbove: 3, now: () => clock, later: (run) => timers.push(run) },
  );
  for (let item = 1; item <= 3; item++) batcher.push(item); // a click, a click, a click
  assert.deepEqual(messages, [1, 2, 3]);
  for (let item = 4; item <= 50; item++) batcher.push(item); // a flood: it waits
  assert.deepEqual(messages, [1, 2, 3]);
  assert.equal(timers.length, 1); // one timer for the whole window
  timers.shift()?.();
  assert.deepEqual(
    messages[3],
    Array.from({ length: 47 }, (_, i) => i + 4),
  );
  clock = 5000; // a quiet second later: at once again
  batcher.push(51);
  assert.deepEqual(messages.at(-1), 51);
});

test("S4: a flush sends what waits before a message that must follow it", () => {
  /** @type {Array<string | string[]>} */
  const messages = [];
  const batcher = new EventBatcher(
    (/** @type {string} */ item) => messages.push(item),
    (/** @type {string[]} */ items) => messages.push(items),
    { windowMs: 100, batchAbove: 0, now: () => 0, later: () => {} },
  );
  batcher.push("a");
  batcher.push("b");
  batcher.flush();
  batcher.flush(); // nothing waits: nothing sent
  assert.deepEqual(messages, [["a", "b"]]);
});

test("a delivery says which revision the surface had before (undefined for a new frame)", () => {
  /** @type {Array<[number, number | undefined]>} */
  const seen = [];
  const queue = new StateQueue((_id, item, from) => seen.push([item.revision, from]));
  queue.push("a", { revision: 1, state: {} });
  queue.flush(() => true);
  queue.push("a", { revision: 2, state: {} });
  queue.push("a", { revision: 3, state: {} });
  queue.flush(() => true);
  queue.reset("a"); // a new frame
  queue.push("a", { revision: 4, state: {} });
  queue.flush(() => true);
  assert.deepEqual(seen, [
    [1, undefined],
    [3, 1],
    [4, undefined],
  ]);
});

test("a frame that starts taller than the least height: the app's own size is what it keeps", () => {
  const guard = new SizeGuard(40, 800, 480);
  assert.equal(guard.next(480), null); // an app sized to the viewport measures 480 and keeps it
  assert.equal(guard.next(120), 120); // an app sized to its content shrinks to it
});
