// The component kinds are declared once, in protocol/_models.py COMPONENT_KINDS; this view
// draws each through the renderer registered under the name the declaration gives it
// (COMPONENT_RENDERERS, generated). A declared name with no renderer here, or a renderer no
// kind names, is drift: this test fails before any view draws "cannot draw a ...".

import assert from "node:assert/strict";
import { test } from "node:test";

import { RENDERERS, rendererOf } from "../components.js";
import { COMPONENT_RENDERERS, COMPONENT_VERSIONS } from "../protocol.generated.js";

test("every declared renderer name has a browser renderer, and every renderer a kind", () => {
  const declared = new Set(Object.values(COMPONENT_RENDERERS));
  assert.deepEqual(
    [...declared].filter((name) => !Object.hasOwn(RENDERERS, name)),
    [],
  );
  assert.deepEqual(
    Object.keys(RENDERERS).filter((name) => !declared.has(name)),
    [],
  );
});

test("every kind the kernel may send has a renderer; an unknown kind has none", () => {
  for (const kind of Object.keys(COMPONENT_VERSIONS)) assert.equal(typeof rendererOf(kind), "function", kind);
  for (const kind of ["no_such_kind", "toString", "__proto__", "constructor"]) {
    assert.equal(rendererOf(kind), undefined, kind);
  }
});
