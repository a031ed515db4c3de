// The app center's view: what it says of versions after a rollback (issue 15).
import assert from "node:assert/strict";
import { test } from "node:test";

import { newerVersions } from "../appcenter.js";

/** @param {string} version @param {string[]} versions */
const app = (version, versions) => ({
  id: "com.example.a",
  name: "A",
  version,
  enabled: true,
  previous: null,
  versions,
  surfaces: [],
  source: "",
});

test("after a rollback the newer installed versions are named", () => {
  assert.deepEqual(newerVersions(app("1.0.0", ["1.0.0", "1.1.0", "2.0.0"])), ["1.1.0", "2.0.0"]);
});

test("on the newest version there is nothing newer", () => {
  assert.deepEqual(newerVersions(app("2.0.0", ["1.0.0", "2.0.0"])), []);
  assert.deepEqual(newerVersions(app("1.0.0", ["1.0.0"])), []);
});
