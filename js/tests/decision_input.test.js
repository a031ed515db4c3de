// The decision-input rules (js/decision_input.js) as a function of times: what a click the
// user aimed elsewhere looks like, and what a meant one does (docs/security.md, "Decisions").
// The DOM half (events, the frame-by-frame measure) runs in tests/browser/test_decisions.py.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ARM_DELAY_MS, Intent, placeOf } from "../decision_input.js";

const click = (/** @type {number} */ now, detail = 1, trusted = true) => ({ now, trusted, detail });

test("a control takes no click before it stood still for ARM_DELAY_MS", () => {
  const intent = new Intent(1000);
  intent.entered(1001);
  intent.pressed(1002);
  assert.equal(intent.refusal(click(1002)), "early");
  assert.equal(intent.refusal(click(1000 + ARM_DELAY_MS - 1)), "early");
});

test("a pointer that was there when it appeared never counts: the user who keeps clicking", () => {
  const intent = new Intent(0);
  intent.entered(5); // the browser's own enter as the control appeared under a still pointer
  // A click every 250 ms at the same spot, long after the delay: none is taken.
  for (let now = 250; now < 10_000; now += 250) {
    intent.pressed(now);
    assert.notEqual(intent.refusal(click(now)), null, `click at ${now} ms`);
  }
});

test("the control: the pointer arrives after it armed, then presses, and the click counts", () => {
  const intent = new Intent(0);
  intent.entered(ARM_DELAY_MS + 100);
  intent.pressed(ARM_DELAY_MS + 300);
  assert.equal(intent.refusal(click(ARM_DELAY_MS + 320)), null);
});

test("an arrival before it armed, or a press that began before it armed, does not count", () => {
  const early = new Intent(0);
  early.entered(ARM_DELAY_MS - 1);
  early.pressed(ARM_DELAY_MS + 300);
  assert.equal(early.refusal(click(ARM_DELAY_MS + 320)), "arrival");
  const held = new Intent(0);
  held.entered(ARM_DELAY_MS + 1);
  held.pressed(ARM_DELAY_MS - 10); // pressed before, released after
  assert.equal(held.refusal(click(ARM_DELAY_MS + 320)), "arrival");
});

test("a move or redraw starts the wait again, and the pointer must arrive again", () => {
  const intent = new Intent(0);
  intent.entered(1000);
  intent.pressed(1100);
  assert.equal(intent.refusal(click(1100)), null);
  intent.placed(1200); // moved under the pointer
  intent.pressed(1300);
  assert.equal(intent.refusal(click(1300)), "early");
  intent.pressed(1200 + ARM_DELAY_MS + 500);
  assert.equal(intent.refusal(click(1200 + ARM_DELAY_MS + 500)), "arrival");
  intent.entered(1200 + ARM_DELAY_MS + 600);
  intent.pressed(1200 + ARM_DELAY_MS + 700);
  assert.equal(intent.refusal(click(1200 + ARM_DELAY_MS + 700)), null);
});

test("a double click never decides twice: its second click, and a row redrawn 44-93 ms later", () => {
  const row = new Intent(0);
  row.entered(1000);
  row.pressed(1000);
  assert.equal(row.refusal(click(1000, 1)), null);
  assert.equal(row.refusal(click(1120, 2)), "repeat");
  for (const later of [44, 93]) {
    const next = new Intent(1000 + later); // the row drawn under the pointer after the first click
    next.entered(1000 + later + 1);
    next.pressed(1120);
    assert.equal(next.refusal(click(1120, 1)), "early");
  }
});

test("keyboard: counts only when the focus came to the control after it armed", () => {
  const intent = new Intent(0);
  intent.focused(10); // focus was there as it appeared (keys typed then go nowhere)
  assert.equal(intent.refusal(click(ARM_DELAY_MS + 100, 0)), "keyboard");
  intent.focused(ARM_DELAY_MS + 200); // the user tabbed to it
  assert.equal(intent.refusal(click(ARM_DELAY_MS + 300, 0)), null);
  assert.equal(new Intent(0).refusal(click(5, 0)), "early");
});

test("a synthetic click never decides", () => {
  const intent = new Intent(0);
  intent.entered(ARM_DELAY_MS + 1);
  intent.pressed(ARM_DELAY_MS + 2);
  assert.equal(intent.refusal(click(ARM_DELAY_MS + 3, 1, false)), "synthetic");
});

test("placeOf: nothing for a detached, empty or covered control, its box otherwise", () => {
  /** @param {object} box @param {boolean} connected @param {unknown} hit */
  const fake = (box, connected, hit) => {
    const control = /** @type {any} */ ({
      isConnected: connected,
      getBoundingClientRect: () => box,
      ownerDocument: { elementFromPoint: () => hit },
      contains: (/** @type {unknown} */ node) => node === control || node === "child",
    });
    return control;
  };
  const box = { left: 10.2, top: 20.6, width: 80, height: 24 };
  assert.equal(placeOf(fake(box, false, null)), "");
  assert.equal(placeOf(fake({ ...box, width: 0 }, true, null)), "");
  assert.equal(placeOf(fake(box, true, "a full-screen app")), "");
  assert.equal(placeOf(fake(box, true, "child")), "10,21,80,24");
  const self = fake(box, true, null);
  self.ownerDocument.elementFromPoint = () => self;
  assert.equal(placeOf(self), "10,21,80,24");
});
