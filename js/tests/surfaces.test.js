// How the cards follow the kernel's list (surfaces.js reconcilePlan): U1, U5, a new bundle is
// a new frame, never a patched one; a state change alone keeps the frame.
import assert from "node:assert/strict";
import { test } from "node:test";

import { reconcilePlan } from "../surfaces.js";

const shown = (/** @type {Record<string, number>} */ generations) =>
  new Map(Object.entries(generations).map(([id, generation]) => [id, { spec: { generation } }]));
const spec = (/** @type {string} */ instance_id, /** @type {number} */ generation) => ({ instance_id, generation });

test("the same generation keeps its frame; a new one and a new surface get one", () => {
  const plan = reconcilePlan(shown({ a: 1, b: 1 }), [spec("a", 1), spec("b", 2), spec("c", 1)]);
  assert.deepEqual(plan, { remove: ["b"], mount: ["b", "c"] });
});

test("a surface the kernel no longer lists loses its card", () => {
  assert.deepEqual(reconcilePlan(shown({ a: 1, b: 3 }), [spec("b", 3)]), { remove: ["a"], mount: [] });
  assert.deepEqual(reconcilePlan(shown({}), []), { remove: [], mount: [] });
});
