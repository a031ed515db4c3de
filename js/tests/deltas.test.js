// The kernel's feed applied to a view's picture (deltas.js): each change alone, idempotent for
// two views sharing one model, and a lost message seen as a gap (U4, H6, H13).

import assert from "node:assert/strict";
import { test } from "node:test";

import { applyOp, FeedSequence, mergePatch, patchesSince, replaceAll } from "../deltas.js";

const spec = (/** @type {Record<string, any>} */ extra = {}) => ({
  instance_id: "w",
  generation: 1,
  revision: 1,
  app: { id: "a.b" },
  html: "<p>",
  css: "",
  js: "",
  state: { a: 1, big: "x".repeat(10) },
  ...extra,
});

/** @returns {import("../deltas.js").Picture} */
const empty = () => ({ surfaces: [], components: [] });

test("RFC 7396: objects merge key by key, null deletes, the rest replaces; the target stays", () => {
  const target = { a: 1, b: { c: 2, d: 3 }, e: [1] };
  const result = mergePatch(target, { a: null, b: { c: null, f: 4 }, e: [2], g: "x" });
  assert.deepEqual(result, { b: { d: 3, f: 4 }, e: [2], g: "x" });
  assert.deepEqual(target, { a: 1, b: { c: 2, d: 3 }, e: [1] });
  assert.equal(mergePatch({ a: 1 }, 5), 5);
  assert.deepEqual(mergePatch(5, { a: 1 }), { a: 1 });
});

test("H6: a patch applies to the revision it names, once; a patch to another revision is a gap", () => {
  const picture = empty();
  applyOp(picture, { op: "open", spec: spec() });
  const patch = { op: "patch", instance_id: "w", generation: 1, base: 1, revision: 3, patches: [{ a: 2 }, { b: 3 }] };
  assert.deepEqual(applyOp(picture, patch), { surface: "w" });
  assert.deepEqual(picture.surfaces[0].state, { a: 2, big: "x".repeat(10), b: 3 });
  assert.equal(picture.surfaces[0].revision, 3);
  // the second view of the same model gets the same message: nothing changes
  assert.deepEqual(applyOp(picture, patch), { surface: "w" });
  assert.deepEqual(picture.surfaces[0].state, { a: 2, big: "x".repeat(10), b: 3 });
  const later = { op: "patch", instance_id: "w", generation: 1, base: 4, revision: 5, patches: [{ a: 9 }] };
  assert.deepEqual(applyOp(picture, later), { gap: "surface w" });
  assert.equal(picture.surfaces[0].state.a, 2);
});

test("U1: a replace keeps its place with a new generation; a state of the old frame is dropped", () => {
  const picture = empty();
  applyOp(picture, { op: "open", spec: spec() });
  applyOp(picture, { op: "open", spec: spec({ instance_id: "v" }) });
  applyOp(picture, { op: "open", spec: spec({ generation: 3, revision: 2, state: { n: 1 } }) });
  assert.deepEqual(
    picture.surfaces.map((s) => [s.instance_id, s.generation]),
    [
      ["w", 3],
      ["v", 1],
    ],
  );
  assert.equal(applyOp(picture, { op: "state", instance_id: "w", generation: 1, revision: 9, state: {} }), null);
  assert.deepEqual(applyOp(picture, { op: "state", instance_id: "w", generation: 3, revision: 3, state: { n: 2 } }), {
    surface: "w",
  });
  assert.deepEqual(picture.surfaces[0].state, { n: 2 });
  applyOp(picture, { op: "close", instance_id: "w" });
  assert.deepEqual(
    picture.surfaces.map((s) => s.instance_id),
    ["v"],
  );
  assert.deepEqual(applyOp(picture, { op: "state", instance_id: "w", generation: 3, revision: 4, state: {} }), {
    gap: "surface w",
  });
});

test("H13: a component changes alone, in the kernel's order; a text grows by its new end", () => {
  const picture = empty();
  applyOp(picture, { op: "component", view: { component_id: "a", kind: "text", text: "ab", order: 0, rev: 1 } });
  applyOp(picture, { op: "component", view: { component_id: "c", kind: "status", order: 2, rev: 1 } });
  applyOp(picture, { op: "component", view: { component_id: "b", kind: "status", order: 1, rev: 1 } });
  assert.deepEqual(
    picture.components.map((c) => c.component_id),
    ["a", "b", "c"],
  );
  const splice = { op: "splice", component_id: "a", rev: 2, field: "text", cut: 1, add: "é😀" };
  assert.deepEqual(applyOp(picture, splice), { component: "a" });
  assert.equal(picture.components[0].text, "aé😀");
  applyOp(picture, splice); // a second view: applied already
  assert.equal(picture.components[0].text, "aé😀");
  // the cut counts UTF-16 units, as the kernel sends it
  applyOp(picture, { op: "splice", component_id: "a", rev: 3, field: "text", cut: 2, add: "!" });
  assert.equal(picture.components[0].text, "aé!");
  assert.deepEqual(applyOp(picture, { op: "splice", component_id: "a", rev: 5, field: "text", cut: 0, add: "?" }), {
    gap: "component a",
  });
  applyOp(picture, { op: "removed", component_id: "b" });
  assert.deepEqual(
    picture.components.map((c) => c.component_id),
    ["a", "c"],
  );
  assert.equal(applyOp(picture, { op: "from a newer kernel" }), null);
});

test("the lists are edited in place: the model keeps them, and a saved notebook with them", () => {
  const picture = empty();
  const surfaces = picture.surfaces;
  applyOp(picture, { op: "open", spec: spec() });
  replaceAll(surfaces, [spec({ instance_id: "z" })]);
  assert.equal(picture.surfaces, surfaces);
  assert.deepEqual(
    surfaces.map((s) => s.instance_id),
    ["z"],
  );
});

test("a view takes the next message only: a lost one is a gap until the next snapshot", () => {
  const feed = new FeedSequence();
  assert.equal(feed.next(1), "skip"); // before its first snapshot
  feed.snapshot(4);
  assert.equal(feed.next(4), "skip");
  assert.equal(feed.next(5), "take");
  assert.equal(feed.next(7), "gap");
  assert.equal(feed.next(8), "skip");
  feed.snapshot(8);
  assert.equal(feed.next(9), "take");
});

test("patchesSince: the patches from any revision a frame may hold, until a whole state", () => {
  const spec = { instance_id: "s", generation: 1, revision: 1, state: { a: 1 } };
  const picture = { surfaces: [spec], components: [] };
  const patch = (/** @type {number} */ base, /** @type {object[]} */ patches) =>
    applyOp(picture, { op: "patch", instance_id: "s", generation: 1, base, revision: base + 1, patches });
  assert.equal(patchesSince(spec, 1), undefined); // nothing known yet: the whole state goes
  patch(1, [{ a: 2 }]);
  patch(2, [{ b: { c: 1 } }, { a: null }]);
  assert.deepEqual(spec.state, { b: { c: 1 } });
  assert.deepEqual(patchesSince(spec, 1), [{ a: 2 }, { b: { c: 1 } }, { a: null }]);
  assert.deepEqual(patchesSince(spec, 2), [{ b: { c: 1 } }, { a: null }]);
  assert.deepEqual(patchesSince(spec, 3), []);
  assert.equal(patchesSince(spec, 0), undefined); // a revision it never had
  // applied from any of them, they give the same state as the kernel's
  for (const [from, state] of [
    [1, { a: 1 }],
    [2, { a: 2 }],
  ]) {
    const steps = /** @type {object[]} */ (patchesSince(spec, /** @type {number} */ (from)));
    assert.deepEqual(steps.reduce(mergePatch, state), spec.state);
  }
  applyOp(picture, { op: "state", instance_id: "s", generation: 1, revision: 4, state: { z: 1 } });
  assert.equal(patchesSince(spec, 3), undefined); // replaced whole: the frames get it whole
  for (let base = 4; base < 24; base++) patch(base, [{ n: base }]);
  assert.equal(patchesSince(spec, 4), undefined); // too far behind: the whole state
  assert.deepEqual(patchesSince(spec, 22), [{ n: 22 }, { n: 23 }]);
});
