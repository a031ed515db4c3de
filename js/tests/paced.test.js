// A long list drawn in slices (issue 16: no page task over 100 ms with a 1 500-message
// session): the order of the work, and the slicing, with a fake clock and fake frames.

import assert from "node:assert/strict";
import { test } from "node:test";

import { DrawQueue, lastIndexOf, paced } from "../paced.js";

/** @param {string[]} ids */
const list = (ids) => ids.map((component_id) => ({ component_id }));

/** Every job until the queue is idle, as short strings. @param {DrawQueue} queue @param {() => any[]} views */
function drain(queue, views) {
  const jobs = [];
  for (let job = queue.next(views()); job; job = queue.next(views())) {
    if ("place" in job) jobs.push(`${job.place.component_id}<${job.previous?.component_id ?? "^"}`);
    else if ("prune" in job) jobs.push("prune");
    else jobs.push(`one ${job.one}`);
  }
  return jobs;
}

test("a pass places every component after the one before it, in the list's order, then prunes", () => {
  const queue = new DrawQueue();
  const views = list(["a", "b", "c"]);
  queue.one("x"); // changed before the snapshot: the pass covers it
  queue.all();
  assert.deepEqual(
    drain(queue, () => views),
    ["a<^", "b<a", "c<b", "prune"],
  );
  assert.equal(queue.next(views), null, "nothing left");
});

test("changes wait for the pass, then come once each, in the order they changed", () => {
  const queue = new DrawQueue();
  const views = list(["a", "b"]);
  queue.all();
  queue.one("b");
  queue.one("a");
  queue.one("b");
  assert.deepEqual(
    drain(queue, () => views),
    ["a<^", "b<a", "prune", "one b", "one a"],
  );
});

test("a pass resumes where it was when the list changed between two slices", () => {
  const queue = new DrawQueue();
  let views = list(["a", "b", "c", "d"]);
  queue.all();
  assert.deepEqual(queue.next(views), { place: views[0], previous: null });
  assert.deepEqual(queue.next(views), { place: views[1], previous: views[0] });
  views = list(["new", "a", "b", "c", "d"]); // shown before, with an earlier order
  assert.deepEqual(
    drain(queue, () => views),
    ["c<b", "d<c", "prune"],
  );
});

test("a pass whose last drawn component went starts again from the top: nothing is skipped", () => {
  const queue = new DrawQueue();
  let views = list(["a", "b", "c"]);
  queue.all();
  queue.next(views);
  queue.next(views);
  views = list(["a", "c"]); // b removed
  assert.deepEqual(
    drain(queue, () => views),
    ["a<^", "c<a", "prune"],
  );
});

test("lastIndexOf finds from the end, or -1", () => {
  const views = list(["a", "b", "a"]);
  assert.equal(lastIndexOf(views, "a"), 2);
  assert.equal(lastIndexOf(views, "z"), -1);
});

/**
 * A clock that a step moves by 1 ms, frames a test lets through one by one.
 * @param {number} jobs
 */
function harness(jobs) {
  let clock = 0;
  let left = jobs;
  /** @type {number[]} steps done in each slice */
  const slices = [];
  /** @type {Array<() => void>} */
  const frames = [];
  const stop = new AbortController();
  const work = paced({
    step: () => {
      if (left === 0) return false;
      left--;
      clock += 1;
      slices[slices.length - 1]++;
      return true;
    },
    signal: stop.signal,
    budgetMs: 3,
    now: () => clock,
    pause: () => {
      slices.push(0);
      return new Promise((resolve) => frames.push(resolve));
    },
  });
  slices.push(0);
  return {
    work,
    stop,
    slices,
    add: (/** @type {number} */ more) => {
      left += more;
    },
    /** Let the next frame come, and the slice in it run. */
    async frame() {
      const resolve = frames.shift();
      assert.ok(resolve, "a slice is waiting for a frame");
      resolve();
      await new Promise((done) => setImmediate(done));
    },
    get waiting() {
      return frames.length;
    },
  };
}

test("work is done in slices of the budget, one a frame, and stops when there is none", async () => {
  const h = harness(8);
  h.work.wake();
  h.work.wake(); // joins the run
  assert.deepEqual(h.slices, [0], "nothing yet: the first slice runs at the end of this task");
  await Promise.resolve();
  assert.deepEqual(h.slices, [3, 0]);
  await h.frame();
  assert.deepEqual(h.slices, [3, 3, 0]);
  await h.frame();
  await h.work.settled();
  assert.deepEqual(h.slices, [3, 3, 2]);
  assert.equal(h.waiting, 0, "no frame asked for once the work is done");
});

test("a task's changes are all queued before its first slice starts", async () => {
  const h = harness(0);
  for (let i = 0; i < 2; i++) {
    h.add(1);
    h.work.wake(); // a feed message: one op after another, each waking the work
  }
  await h.work.settled();
  assert.deepEqual(h.slices, [2]);
});

test("a wake right after a run ended starts another run", async () => {
  const h = harness(1);
  h.work.wake();
  await h.work.settled();
  h.add(1);
  h.work.wake();
  await h.work.settled();
  assert.deepEqual(h.slices, [2]);
});

test("nothing runs once the signal is aborted (the view is gone)", async () => {
  const h = harness(10);
  h.work.wake();
  await Promise.resolve();
  assert.deepEqual(h.slices, [3, 0]);
  h.stop.abort();
  await h.frame();
  await h.work.settled();
  assert.deepEqual(h.slices, [3, 0]);
  h.work.wake();
  await h.work.settled();
  assert.deepEqual(h.slices, [3, 0]);
});

test("a failing job is reported, and the jobs after it are still done", async () => {
  let done = 0;
  let calls = 0;
  /** @type {unknown[]} */
  const failures = [];
  const work = paced({
    step: () => {
      calls++;
      if (calls === 2) throw new Error("boom");
      if (calls > 4) return false;
      done++;
      return true;
    },
    signal: new AbortController().signal,
    failed: (error) => failures.push(error),
    pause: () => Promise.resolve(),
  });
  work.wake();
  await work.settled();
  assert.equal(done, 3);
  assert.equal(failures.length, 1);
  assert.match(String(failures[0]), /boom/);
});
