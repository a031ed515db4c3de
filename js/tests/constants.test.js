// Sanity of js/protocol.generated.js: the values the browser checks with are the ones the
// seed's examples were written against (U1, U2, U9, C4, C8, C9, C11, S7).

import assert from "node:assert/strict";
import { test } from "node:test";

import * as rules from "../protocol.generated.js";

test("U1: the seed's ids match ID_PATTERN", () => {
  for (const id of ["msg_ui_01", "conv_01", "agent_hermes_main", "weather.dashboard.01", "call_open_docs_01"]) {
    assert.match(id, rules.ID_PATTERN);
  }
  assert.match("x".repeat(128), rules.ID_PATTERN);
  for (const id of ["", "x".repeat(129), "has space", "slash/no", "é"]) assert.doesNotMatch(id, rules.ID_PATTERN);
});

test("U9: the seed's event names match EVENT_NAME_PATTERN", () => {
  for (const name of ["refresh", "close", "draw", "resize", "snapshot"]) assert.match(name, rules.EVENT_NAME_PATTERN);
  for (const name of ["", "1x", "_x", "a b", "x".repeat(65), "refresh\n"])
    assert.doesNotMatch(name, rules.EVENT_NAME_PATTERN);
});

test("U2: the seed's app ids and versions match", () => {
  for (const id of ["com.lineup.weather.dashboard", "com.lineup.svg-canvas"]) assert.match(id, rules.APP_ID_PATTERN);
  for (const id of ["weather", "Com.Lineup.x", "com..x"]) assert.doesNotMatch(id, rules.APP_ID_PATTERN);
  for (const v of ["1.0.0", "0.1.0-rc.1+build.5"]) assert.match(v, rules.SEMVER_PATTERN);
  for (const v of ["1.0", "01.0.0", "1.0.0-"]) assert.doesNotMatch(v, rules.SEMVER_PATTERN);
  for (const v of ["1", "1.0", "1.0.0"]) assert.match(v, rules.SHORT_VERSION_PATTERN);
});

test("C7, C9: the seed's capability names and expires_at match", () => {
  for (const name of ["app.open_url", "clipboard.write", "device.pick_file", "artifact.save"]) {
    assert.match(name, rules.CAPABILITY_NAME_PATTERN);
  }
  assert.doesNotMatch("open_url", rules.CAPABILITY_NAME_PATTERN);
  assert.match("2026-08-02T12:10:00Z", rules.RFC3339_PATTERN);
  assert.match("2026-08-02T12:10:00.123456789+08:00", rules.RFC3339_PATTERN);
  assert.doesNotMatch("2026-08-02 12:10:00", rules.RFC3339_PATTERN);
});

test("S7: INTEGRITY_PATTERN takes a sha256 digest in padded base64", () => {
  assert.match(`sha256-${"A".repeat(42)}/=`, rules.INTEGRITY_PATTERN);
  assert.doesNotMatch("sha256-BASE64_DIGEST", rules.INTEGRITY_PATTERN);
});

test("C8, C11: the enums are the seed's, in order", () => {
  assert.deepEqual(rules.RISKS, ["display_only", "user_confirmation", "system_permission", "restricted"]);
  assert.deepEqual(rules.STATUSES, ["completed", "rejected", "cancelled", "expired", "unsupported", "failed"]);
});

test("U7, U9: namespace and limits", () => {
  assert.equal(rules.SURFACE_NAMESPACE, "lineup.surface.v1");
  assert.equal(rules.MAX_EVENT_DATA_BYTES, 16 * 1024);
  assert.equal(rules.MAX_JSON_DEPTH, 64);
});

test("M2: every direction type is a known family, and RULES quotes each rule used here", () => {
  for (const type of [...rules.AGENT_TO_CLIENT, ...rules.CLIENT_TO_AGENT])
    assert.ok(!type.startsWith(rules.TYPE_PREFIX));
  for (const rule of ["S4", "U7", "U9", "H2"]) assert.ok(rules.RULES[/** @type {keyof typeof rules.RULES} */ (rule)]);
});

test("the generated values cannot be changed at run time", () => {
  for (const value of Object.values(rules)) {
    if (typeof value === "object") assert.ok(Object.isFrozen(value));
  }
  assert.throws(() => {
    /** @type {string[]} */ (/** @type {unknown} */ (rules.RISKS)).push("anything");
  }, TypeError);
});
