// What a surface's shell sends the host view, and what of it reaches the kernel (S4, U7, U9,
// S3, H21): relay.js with a fake card, a fake kernel line and a clock the test moves.
import assert from "node:assert/strict";
import { test } from "node:test";

import { SURFACE_NAMESPACE } from "../protocol.generated.js";
import { BLOCKED, Relay, SCRIPT_HINT, SILENT } from "../relay.js";
import { RateLimit, SizeGuard } from "../state_queue.js";

/** A surface's entry, a relay whose ports record what it did, and the clock. */
function setup({ perSecond = 50, burst = 100 } = {}) {
  let now = 5000;
  const clock = () => now;
  const entry = {
    spec: { instance_id: "w" },
    ready: false,
    stalled: false,
    rate: new RateLimit(perSecond, burst, clock),
    size: new SizeGuard(40, 800),
    lastDropReport: 0,
    lastCspReport: 0,
    shellKey: /** @type {string | null} */ ("shell-key"),
  };
  /** @type {any[]} */ const sent = [];
  /** @type {any[]} */ const events = [];
  /** @type {string[]} */ const did = [];
  /** @type {Set<string>} */ const shown = new Set();
  /** @type {Relay<typeof entry>} */
  const relay = new Relay(
    {
      sendInOrder: (content) => sent.push(content),
      event: (item) => events.push(item),
      ready: () => did.push("ready"),
      pong: () => did.push("pong"),
      resize: (_entry, height) => did.push(`resize ${height}`),
      notice: (_entry, kind) => {
        if (shown.has(kind)) return false;
        shown.add(kind);
        return true;
      },
    },
    { events_per_second: perSecond },
    clock,
  );
  const message = (/** @type {object} */ fields) => ({ namespace: SURFACE_NAMESPACE, ...fields });
  /** What the shell itself says: marked with its key (bridge.js shellRelay). @param {object} fields */
  const report = (fields) => message({ ...fields, shell: "shell-key" });
  return {
    entry,
    relay,
    sent,
    events,
    did,
    shown,
    message,
    report,
    advance: (/** @type {number} */ ms) => (now += ms),
  };
}

test("U7: a message outside the surface namespace is refused, counted like an event", () => {
  const { entry, relay, events, sent } = setup();
  relay.handle(entry, { type: "event", event: "go", data: {} });
  relay.handle(entry, "not even an object");
  assert.deepEqual(
    events.map((item) => [item.kind, item.code, item.rule, item.path]),
    [
      ["refused", "invalid", "U7", "$.namespace"],
      ["refused", "invalid", "U7", "$.namespace"],
    ],
  );
  assert.deepEqual(sent, []);
});

test("a valid event goes to the kernel as the surface sent it, named by the view (S4)", () => {
  const { entry, relay, events, message } = setup();
  relay.handle(entry, message({ type: "event", event: "go", data: { n: 1 } }));
  assert.deepEqual(events, [
    {
      kind: "event",
      instance_id: "w",
      message: { namespace: SURFACE_NAMESPACE, type: "event", event: "go", data: { n: 1 } },
    },
  ]);
});

test("S4: a surface naming another instance is refused, not relayed as that instance", () => {
  const { entry, relay, events, message } = setup();
  relay.handle(entry, message({ type: "event", event: "go", data: {}, instance_id: "other" }));
  assert.deepEqual(
    events.map((item) => [item.kind, item.instance_id, item.path]),
    [["refused", "w", "$.instance_id"]],
  );
});

test("an invalid event is refused with the checker's reason, and control: a valid one is not", () => {
  const { entry, relay, events, message } = setup();
  relay.handle(entry, message({ type: "event", event: "1bad", data: {} }));
  relay.handle(entry, message({ type: "event", event: "good", data: {} }));
  assert.equal(events[0].kind, "refused");
  assert.equal(events[0].path, "$.event");
  assert.equal(events[1].kind, "event");
});

test("S4: past the rate, events are dropped and said once a second, never more", () => {
  const { entry, relay, events, sent, message, advance } = setup({ perSecond: 2, burst: 2 });
  for (let n = 0; n < 50; n++) relay.handle(entry, message({ type: "event", event: "go", data: {} }));
  assert.equal(events.length, 2);
  assert.deepEqual(
    sent.map((content) => content.code),
    ["rate_limited"],
  );
  advance(1001);
  for (let n = 0; n < 50; n++) relay.handle(entry, message({ type: "event", event: "go", data: {} }));
  assert.equal(sent.length, 2);
});

test("ready once, pong and resize go to the card; a height out of bounds is held to them", () => {
  const { entry, relay, did, message } = setup();
  relay.handle(entry, message({ type: "ready" }));
  relay.handle(entry, message({ type: "ready" }));
  relay.handle(entry, message({ type: "pong" }));
  relay.handle(entry, message({ type: "resize", height: 10_000 }));
  assert.equal(entry.ready, true);
  assert.deepEqual(did, ["ready", "pong", "resize 800"]);
});

test("H21: a blocked clipboard write is shown once with the capability to use; an unknown one is not", () => {
  const { entry, relay, sent, shown, message } = setup();
  relay.handle(entry, message({ type: "blocked", what: "copy" }));
  relay.handle(entry, message({ type: "blocked", what: "copy" }));
  relay.handle(entry, message({ type: "blocked", what: "<img src=x>" }));
  assert.deepEqual([...shown], ["copy"]);
  assert.deepEqual(sent, [
    { kind: "refused", instance_id: "w", code: "unsupported", rule: "H21", path: "$", message: BLOCKED.copy },
  ]);
});

test("U4: a surface that never ran is shown and reported as a problem; a ready one is not", () => {
  const { entry, relay, sent, report } = setup();
  relay.handle(entry, report({ type: "silent" }));
  assert.deepEqual(
    sent.map((content) => [content.kind, content.code ?? content.level]),
    [
      ["refused", "invalid"],
      ["surface_problem", "silent"],
    ],
  );
  assert.equal(sent[1].text, SILENT);
  entry.ready = true;
  relay.handle(entry, report({ type: "silent" }));
  assert.equal(sent.length, 2);
});

test("a surface's problem is text and bounded, whatever the bridge was sent", () => {
  const { entry, relay, sent, message } = setup();
  // An object String() cannot convert: a surface can post one through its shell.
  relay.handle(entry, message({ type: "problem", level: { toString: null }, text: "x".repeat(5000), stack: 7 }));
  relay.handle(entry, message({ type: "problem", level: "error", text: "boom", stack: "s".repeat(9000) }));
  assert.equal(sent[0].level, "(not text)");
  assert.equal(sent[0].text.length, 500);
  assert.equal(sent[0].stack, "");
  assert.equal(sent[1].stack.length, 4000);
});

test("S3: CSP violations are reported at most once a second, with the script hint for scripts", () => {
  const { entry, relay, sent, message, advance } = setup();
  for (let n = 0; n < 100; n++)
    relay.handle(entry, message({ type: "csp", directive: "script-src-elem", blocked: "inline" }));
  advance(1001);
  relay.handle(entry, message({ type: "csp", directive: "img-src", blocked: "https://x" }));
  assert.deepEqual(
    sent.map((content) => content.code),
    ["csp_violation", "csp_violation"],
  );
  assert.ok(sent[0].message.endsWith(SCRIPT_HINT));
  assert.ok(!sent[1].message.endsWith(SCRIPT_HINT));
});

test("fields String() cannot convert never break the view", () => {
  const { entry, relay, sent, message } = setup();
  const hostile = { toString: null, valueOf: null };
  for (const type of ["csp", "blocked", "dropped", "too_large", "resize"]) {
    assert.doesNotThrow(() =>
      relay.handle(
        entry,
        message({
          type,
          directive: hostile,
          blocked: hostile,
          what: hostile,
          count: hostile,
          limit: hostile,
          height: hostile,
        }),
      ),
    );
  }
  assert.ok(sent.some((content) => content.code === "csp_violation"));
});

test("U9: the shell's too_large counts against the rate; dropped is reported as is", () => {
  const { entry, relay, events, sent, report } = setup();
  relay.handle(entry, report({ type: "too_large", limit: 65536 }));
  relay.handle(entry, report({ type: "dropped", count: 12 }));
  assert.deepEqual(
    events.map((item) => [item.code, item.rule]),
    [["too_large", "U9"]],
  );
  assert.deepEqual(
    sent.map((content) => [content.code, content.message]),
    [["rate_limited", "the surface sent too many messages: 12 dropped in the last second"]],
  );
});

test("U4: a surface whose js does not parse says where, when the page found it", async () => {
  const { entry, relay, sent, report } = setup();
  relay.ports.whySilent = async () => "its js does not parse: here (line 2, column 11 of its js).";
  relay.handle(entry, report({ type: "silent" }));
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(
    sent.map((content) => content.message ?? content.text),
    [
      "its js does not parse: here (line 2, column 11 of its js).",
      "its js does not parse: here (line 2, column 11 of its js).",
    ],
  );
});

test("S4: a surface forging its shell's reports gets only what its rate allows (issue 22)", () => {
  const { entry, relay, events, sent, message, report } = setup();
  // 1000 `dropped` (and the other shell-only reports) without the shell's key, in one instant.
  for (let n = 0; n < 1000; n++) {
    relay.handle(entry, message({ type: ["dropped", "too_large", "silent"][n % 3], count: 1, shell: "guess" }));
  }
  // At most the burst (100) is refused as the surface's own messages; the rest is said once.
  assert.equal(events.length, 100);
  assert.ok(events.every((item) => item.kind === "refused" && item.code !== "rate_limited"));
  assert.deepEqual(
    sent.map((content) => content.code),
    ["rate_limited"],
  );
  assert.ok(!sent.some((content) => /dropped in the last second/.test(content.message)));
  // The shell's own report still is one.
  relay.handle(entry, report({ type: "dropped", count: 7 }));
  assert.match(sent.at(-1).message, /7 dropped in the last second/);
});

test("S4 control: with the shell's marks off (shellKey null) every forged report is taken", () => {
  const { entry, relay, sent, message } = setup();
  entry.shellKey = null;
  for (let n = 0; n < 1000; n++) relay.handle(entry, message({ type: "dropped", count: 1 }));
  assert.equal(sent.filter((content) => content.code === "rate_limited").length, 1000);
});

test("a surface's own csp reports take from its rate; its shell's do not", () => {
  const surface = setup({ perSecond: 1, burst: 2 });
  for (let n = 0; n < 5; n++) {
    surface.relay.handle(surface.entry, surface.message({ type: "csp", directive: "img-src", blocked: "https://x" }));
  }
  assert.deepEqual(
    surface.sent.map((content) => content.code),
    ["csp_violation", "rate_limited"],
  );
  const shell = setup({ perSecond: 1, burst: 2 });
  for (let n = 0; n < 5; n++) {
    shell.relay.handle(shell.entry, shell.report({ type: "csp", directive: "img-src", blocked: "https://x" }));
  }
  assert.deepEqual(
    shell.sent.map((content) => content.code),
    ["csp_violation"],
  );
});
