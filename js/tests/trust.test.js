// The sentence both views show for the host's bundle policy (H37).
import assert from "node:assert/strict";
import { test } from "node:test";

import { trustText } from "../trust.js";

test("H37: dev mode says any checked bundle opens", () => {
  assert.match(trustText({ mode: "dev", allowed: 0, keys: [] }), /^Dev mode/);
  assert.match(trustText(undefined), /^Dev mode/);
});

test("H37: strict mode counts digests and keys, singular and plural", () => {
  assert.equal(
    trustText({ mode: "strict", allowed: 1, keys: ["a", "b"] }),
    "Strict mode: inline bundles open only if allowlisted or signed (1 allowlisted digest, 2 trusted keys).",
  );
  assert.match(trustText({ mode: "strict", allowed: 0, keys: ["a"] }), /0 allowlisted digests, 1 trusted key\)/);
});
