// The shell's size gate (S4, U9): bounded work whatever a surface posts, and never a refusal of
// a message the page would accept.

import assert from "node:assert/strict";
import { test } from "node:test";

import { exceeds } from "../bridge.js";
import { MAX_MESSAGE_CHARS } from "../frames.js";

/**
 * A JSON value of every kind, from a seeded generator.
 * @param {() => number} random
 * @param {number} depth
 * @returns {unknown}
 */
function randomJson(random, depth) {
  const pick = Math.floor(random() * (depth > 4 ? 4 : 7));
  if (pick === 0) return Math.floor(random() * 1000) - 500;
  if (pick === 1) return 'é\n"x'.repeat(Math.floor(random() * 5));
  if (pick === 2) return random() < 0.5 ? null : true;
  if (pick === 3) return "";
  if (pick === 4)
    return Array.from(
      { length: Math.floor(random() * 6) },
      () => /** @type {unknown} */ (randomJson(random, depth + 1)),
    );
  /** @type {Record<string, unknown>} */
  const object = {};
  for (let i = 0; i < random() * 6; i++)
    object[`k${i}`.repeat(1 + Math.floor(random() * 3))] = randomJson(random, depth + 1);
  return object;
}

function seeded(/** @type {number} */ seed) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
}

test("the count never exceeds the JSON text: nothing the page accepts is refused", () => {
  const random = seeded(7);
  for (let i = 0; i < 500; i++) {
    const value = { namespace: "lineup.surface.v1", type: "event", event: "e", data: { v: randomJson(random, 0) } };
    const length = JSON.stringify(value).length;
    assert.equal(exceeds(value, length), false, JSON.stringify(value));
  }
  // The densest valid events: 16 KiB of zeros, of empty strings, of one-letter keys.
  const zeros = { namespace: "lineup.surface.v1", type: "event", event: "e", data: { a: new Array(8000).fill(0) } };
  assert.equal(exceeds(zeros, MAX_MESSAGE_CHARS), false);
  const keys = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`k${i}`, 0]));
  assert.equal(exceeds({ data: keys }, MAX_MESSAGE_CHARS), false);
});

test("large messages are over the limit, whatever their shape", () => {
  const limit = MAX_MESSAGE_CHARS;
  assert.equal(exceeds("x".repeat(limit + 1), limit), true);
  assert.equal(exceeds(new Array(1e9), limit), true); // sparse: as long as it says
  assert.equal(
    exceeds(
      Array.from({ length: 100_000 }, (_, i) => ({ i })),
      limit,
    ),
    true,
  );
  assert.equal(exceeds(new Map(Array.from({ length: 100_000 }, (_, i) => [i, i])), limit), true);
  assert.equal(exceeds(new Set(Array.from({ length: 100_000 }, (_, i) => i)), limit), true);
  assert.equal(exceeds({ b: new Uint8Array(limit) }, limit), true);
  const wide = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`key${i}`, i]));
  assert.equal(exceeds(wide, limit), true);
  let deep = {};
  for (let i = 0; i < 100_000; i++) deep = { d: deep };
  assert.equal(exceeds(deep, limit), true);
});

test("shared and cyclic objects are counted once and the walk ends", () => {
  /** @type {any} */
  const cycle = { a: 1 };
  cycle.self = cycle;
  assert.equal(exceeds(cycle, 1000), false);
  const shared = { s: "x".repeat(100) };
  assert.equal(exceeds(new Array(10).fill(shared), 1000), false);
});
