// The consent card's countdown text (the rest of prompts.js is exercised in a real browser:
// tests/browser/test_consent.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { countdown } from "../prompts.js";

test("countdown shows minutes and seconds, rounding up, then Expired", () => {
  assert.equal(countdown(299_001), "Expires in 5:00");
  assert.equal(countdown(61_000), "Expires in 1:01");
  assert.equal(countdown(1), "Expires in 0:01");
  assert.equal(countdown(0), "Expired");
  assert.equal(countdown(-5), "Expired");
  assert.equal(countdown(2 * 3600_000 + 5 * 60_000), "Expires in 2 h 5 min");
});
