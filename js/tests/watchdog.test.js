// The watchdog's look at a surface (watchdog.js): a ready surface silent past stall_ms is
// stalled once, pinged again and again until it answers; a pong brings it back.
import assert from "node:assert/strict";
import { test } from "node:test";

import { look, pong } from "../watchdog.js";

const STALL = 5000;

test("a surface that is not ready is neither pinged nor stalled", () => {
  assert.deepEqual(look({ ready: false, pingSent: 1, pongSeen: 0, stalled: false }, 1e9, STALL), {
    stall: false,
    ping: false,
  });
});

test("an answered ping is followed by the next; an unanswered one within stall_ms waits", () => {
  assert.deepEqual(look({ ready: true, pingSent: 100, pongSeen: 150, stalled: false }, 2100, STALL), {
    stall: false,
    ping: true,
  });
  assert.deepEqual(look({ ready: true, pingSent: 100, pongSeen: 50, stalled: false }, 100 + STALL, STALL), {
    stall: false,
    ping: false,
  });
});

test("silent past stall_ms: stalled once, then pinged on every look until it answers", () => {
  const entry = { ready: true, pingSent: 100, pongSeen: 50, stalled: false };
  assert.deepEqual(look(entry, 101 + STALL, STALL), { stall: true, ping: true });
  entry.stalled = true;
  entry.pingSent = 101 + STALL;
  assert.deepEqual(look(entry, 20_000, STALL), { stall: false, ping: true });
  assert.equal(pong(entry, 20_001), true);
  assert.equal(entry.stalled, false);
  assert.equal(pong(entry, 20_002), false); // control: a pong of a live surface changes nothing
});
