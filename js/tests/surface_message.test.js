// Every golden case of tests/fixtures/surface_messages.json through the browser's validator
// (S4, U7, U9, H2). tests/protocol/test_surface_fixtures.py runs the same cases through the kernel's
// twin, so both sides give the same verdict, code, rule and path.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { jsonByteLength, memberPath, validateSurfaceMessage } from "../surface_message.js";

/**
 * @typedef {{ name: string, rule: string, message: unknown, message_js?: string,
 *   expect: "valid" | "invalid", code?: string, path?: string }} Fixture
 */

const fixtures_url = new URL("../../tests/fixtures/surface_messages.json", import.meta.url);
/** @type {Fixture[]} */
const fixtures = JSON.parse(readFileSync(fixtures_url, "utf8"));

/** @param {Fixture} fixture */
function message_of(fixture) {
  // Values JSON cannot write (NaN, Date, cycles) are JS expressions, evaluated here only.
  return fixture.message_js === undefined ? fixture.message : new Function(`return ${fixture.message_js};`)();
}

for (const fixture of fixtures) {
  test(`${fixture.rule}: ${fixture.name}`, () => {
    const verdict = validateSurfaceMessage(message_of(fixture));
    if (fixture.expect === "valid") {
      assert.ok(verdict.ok, `refused: ${JSON.stringify(verdict)}`);
      return;
    }
    assert.ok(!verdict.ok, "accepted a message the fixture refuses");
    assert.deepEqual(
      { code: verdict.code, rule: verdict.rule, path: verdict.path },
      { code: fixture.code, rule: fixture.rule, path: fixture.path },
    );
    assert.ok(verdict.message.length > 0);
  });
}

test("U7: a refusal names its rule and quotes it", () => {
  const verdict = validateSurfaceMessage({ namespace: "nope", type: "event", event: "x", data: {} });
  assert.ok(!verdict.ok);
  assert.equal(verdict.rule, "U7");
  assert.match(verdict.message, /lineup\.surface\.v1/);
});

test("U9: a valid message hands back the same event and data", () => {
  const data = { unit: "c" };
  const verdict = validateSurfaceMessage({
    namespace: "lineup.surface.v1",
    type: "event",
    event: "refresh",
    data,
  });
  assert.deepEqual(verdict, { ok: true, event: "refresh", data });
});

test("U9: jsonByteLength counts UTF-8 bytes of JSON.stringify", () => {
  assert.equal(jsonByteLength({}), 2);
  assert.equal(jsonByteLength({ a: "é" }), 10);
  assert.equal(jsonByteLength({ a: "😀" }), 12);
  assert.equal(jsonByteLength({ a: "\n" }), 10);
});

test("H2: memberPath writes keys as the kernel does", () => {
  assert.equal(memberPath("$", "unit"), "$.unit");
  assert.equal(memberPath("$", "_a1"), "$._a1");
  assert.equal(memberPath("$", "1a"), '$["1a"]');
  assert.equal(memberPath("$", "a b"), '$["a b"]');
  assert.equal(memberPath("$", "x".repeat(64)), `$.${"x".repeat(64)}`);
  assert.equal(memberPath("$", "😀".repeat(64)), `$["${"😀".repeat(64)}"]`);
  assert.equal(memberPath("$", "😀".repeat(65)), `$["${"😀".repeat(61)}..."]`);
});

test("U9: a field polluted onto Object.prototype is not the message's own", () => {
  const proto = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (Object.prototype));
  proto.data = { polluted: true };
  try {
    const verdict = validateSurfaceMessage({ namespace: "lineup.surface.v1", type: "event", event: "x" });
    assert.ok(!verdict.ok);
    assert.equal(verdict.path, "$.data");
  } finally {
    delete proto.data;
  }
});

test("H2: a huge shared structure is refused quickly, not walked exponentially", () => {
  /** @type {unknown} */
  let node = 0;
  for (let i = 0; i < 60; i++) node = [node, node];
  const verdict = validateSurfaceMessage({
    namespace: "lineup.surface.v1",
    type: "event",
    event: "x",
    data: { node },
  });
  assert.ok(!verdict.ok);
  assert.equal(verdict.code, "invalid");
});
