// How a view learns its kernel is gone (kernel_link.js): from the model's comm and from the
// session's or kernel's Lumino signals; gone for good, but a dropped server connection comes back.
import assert from "node:assert/strict";
import { test } from "node:test";

import { Connection } from "../connection.js";
import { goneByStatus, watchKernel } from "../kernel_link.js";
import { lineupState } from "../notebook_state.js";

/** A Lumino signal's shape: connect, disconnect, and a way to emit. */
function signal() {
  /** @type {Set<(sender: unknown, args: any) => void>} */
  const slots = new Set();
  return {
    connect: (/** @type {any} */ slot) => slots.add(slot),
    disconnect: (/** @type {any} */ slot) => slots.delete(slot),
    emit: (/** @type {any} */ args) => {
      for (const slot of [...slots]) slot(null, args);
    },
    slots,
  };
}

function fake() {
  const session = {
    statusChanged: signal(),
    connectionStatusChanged: signal(),
    kernelChanged: signal(),
  };
  /** @type {Map<string, Function>} */
  const handlers = new Map();
  const model = {
    on: (/** @type {string} */ name, /** @type {Function} */ fn) => handlers.set(name, fn),
    off: (/** @type {string} */ name) => handlers.delete(name),
    widget_manager: { context: { sessionContext: session } },
  };
  /** @type {(string | null)[]} */
  const seen = [];
  const stop = new AbortController();
  watchKernel(model, (gone) => seen.push(gone), stop.signal);
  return { session, handlers, seen, stop };
}

test("a restart, a shutdown, a dead kernel each say why, and stay", () => {
  assert.equal(goneByStatus("restarting"), "restarted");
  assert.equal(goneByStatus("autorestarting"), "restarted");
  assert.equal(goneByStatus("dead"), "dead");
  assert.equal(goneByStatus("idle"), null);
  const { session, seen } = fake();
  session.statusChanged.emit("busy");
  assert.deepEqual(seen, []);
  session.statusChanged.emit("restarting");
  session.statusChanged.emit("idle"); // a restarted kernel knows no model of ours
  session.connectionStatusChanged.emit("connected");
  assert.deepEqual(seen, ["restarted"]);
});

test("the session's kernel going or changing is said; the model's comm going too", () => {
  const shut = fake();
  shut.session.kernelChanged.emit({ oldValue: {}, newValue: null });
  assert.deepEqual(shut.seen, ["shutdown"]);
  const replaced = fake();
  replaced.session.kernelChanged.emit({ oldValue: {}, newValue: {} });
  assert.deepEqual(replaced.seen, ["replaced"]);
  const comm = fake();
  comm.handlers.get("comm_live_update")?.();
  assert.deepEqual(comm.seen, ["restarted"]);
});

test("a dropped connection comes back; nothing is heard after the view goes", () => {
  const { session, seen, stop, handlers } = fake();
  session.connectionStatusChanged.emit("connecting");
  session.connectionStatusChanged.emit("connected");
  assert.deepEqual(seen, ["disconnected", null]);
  stop.abort();
  assert.equal(session.statusChanged.slots.size, 0);
  assert.equal(handlers.size, 0);
});

test("a view without a session or kernel (another anywidget host) watches its comm only", () => {
  /** @type {(string | null)[]} */
  const seen = [];
  /** @type {Function | undefined} */
  let commDown;
  const model = { on: (/** @type {string} */ _n, /** @type {Function} */ fn) => (commDown = fn), off: () => {} };
  watchKernel(model, (gone) => seen.push(gone), new AbortController().signal);
  commDown?.();
  assert.deepEqual(seen, ["restarted"]);
});

test("without a kernel nothing is sent: the user is told instead", () => {
  /** @type {any[]} */ const sent = [];
  const model = {
    get: () => undefined,
    set: () => {},
    send: (/** @type {any} */ c) => sent.push(c),
    on: () => {},
    off: () => {},
  };
  const connection = new Connection(model);
  let told = 0;
  connection.refuse = () => told++;
  connection.send({ kind: "sync" });
  assert.deepEqual(sent, []);
  assert.equal(told, 1);
});

test("a saved notebook keeps the lineup models and what they refer to, nothing else", () => {
  const full = {
    version_major: 2,
    version_minor: 0,
    state: {
      h: { state: { _anywidget_id: "lineup_jupyter.widgets._widget.HostWidget", layout: "IPY_MODEL_l" } },
      l: { state: { _model_name: "LayoutModel" } },
      o: { state: { _anywidget_id: "someone.else.Widget" } },
    },
  };
  assert.deepEqual(Object.keys(lineupState(full)?.state ?? {}), ["h", "l"]);
  assert.equal(lineupState({ state: { o: full.state.o } }), null); // none live: keep what was saved
});
