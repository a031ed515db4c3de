// Drawing a long list without holding the page: what to draw next, in the kernel's order
// (DrawQueue), and a loop that does it in slices of a few milliseconds, one a frame (paced).
// A view that mounts on a session of 1 500 components drew them all in one task (measured:
// 240-290 ms of the page's CPU, over a second on a loaded machine, during which nothing else
// in JupyterLab ran); now each slice is short, the components appear in order, and each one
// only once it is whole (its Markdown checked), since a slice never stops inside one.
//
// No DOM here: components.js draws; the tests drive this with a fake clock.

/**
 * @typedef {{ component_id: string, [field: string]: any }} Listed
 * @typedef {{ place: Listed, previous: Listed | null } | { prune: true } | { one: string }} Job
 *   place: draw `place` if it changed, right after `previous` (first when null);
 *   prune: the pass is over, remove what the list no longer has; one: redraw that component
 */

/**
 * The order of the work. A pass draws the whole list in its order (a snapshot, a view that
 * mounts): each component right after the one before it, so the page's order becomes the
 * list's even where it was not. A single change (a feed op) waits until the pass is over, so
 * it lands in a list already in order.
 */
export class DrawQueue {
  constructor() {
    /** @type {{ cursor: number, lastId: string | null } | null} the pass under way */
    this.pass = null;
    /** @type {Set<string>} components changed since, in the order they changed */
    this.changed = new Set();
  }

  /** Draw the whole list again (everything changed is in it). */
  all() {
    this.pass = { cursor: 0, lastId: null };
    this.changed.clear();
  }

  /** One component changed, or went. @param {string} componentId */
  one(componentId) {
    this.changed.add(componentId);
  }

  /**
   * The next job against the list as it is now: the list may have changed since the last
   * job (a feed message between two slices), so a pass finds where it was by the id it drew
   * last, and starts again from the top when that one has gone.
   * @param {ReadonlyArray<Listed>} views @returns {Job | null}
   */
  next(views) {
    const pass = this.pass;
    if (pass) {
      if (pass.lastId !== null && views[pass.cursor - 1]?.component_id !== pass.lastId) {
        pass.cursor = lastIndexOf(views, pass.lastId) + 1; // 0 when it has gone
      }
      if (pass.cursor < views.length) {
        const previous = pass.cursor > 0 ? views[pass.cursor - 1] : null;
        const place = views[pass.cursor++];
        pass.lastId = place.component_id;
        return { place, previous };
      }
      this.pass = null;
      return { prune: true };
    }
    for (const componentId of this.changed) {
      this.changed.delete(componentId);
      return { one: componentId };
    }
    return null;
  }
}

/**
 * The index of `componentId` in `views`, searching from the end (a change is nearly always
 * to one of the last), or -1.
 * @param {ReadonlyArray<Listed>} views @param {string} componentId
 */
export function lastIndexOf(views, componentId) {
  for (let i = views.length - 1; i >= 0; i--) if (views[i].component_id === componentId) return i;
  return -1;
}

/**
 * Until the next frame: one slice a frame, so the page styles and lays out what a slice
 * added before the next slice adds more (with scheduler.yield the slices ran ahead of the
 * rendering, which then took 500 new components in one 160 ms task, measured). A hidden page
 * has no frames: there, a timer.
 * @returns {Promise<void>}
 */
function nextFrame() {
  return new Promise((resolve) => {
    if (typeof requestAnimationFrame === "function" && !document.hidden) requestAnimationFrame(() => resolve());
    else setTimeout(resolve, 0);
  });
}

/**
 * Call `step` until it says there is nothing left, in slices of about `budgetMs`: the first
 * slice at the end of the task that woke it (a single change is drawn in the task that
 * brought it), the next ones a frame apart. Call the returned `wake` when there is new work;
 * a wake during a run joins it. Nothing runs once `signal` is aborted.
 * @param {{ step: () => boolean, signal: AbortSignal, budgetMs?: number,
 *   now?: () => number, pause?: () => Promise<void>,
 *   failed?: (error: unknown) => void }} options
 *   step: do one job and return true, or return false when there was none
 * @returns {{ wake(): void, settled(): Promise<void> }}
 *   settled: resolves when the work is done (or stopped): what a test waits on
 */
export function paced({
  step,
  signal,
  budgetMs = 8,
  now = () => performance.now(),
  pause = nextFrame,
  failed = (error) => console.error("[lineup] drawing failed:", error),
}) {
  let running = false;
  /** @type {Promise<void>} */
  let done = Promise.resolve();

  const run = async () => {
    try {
      while (!signal.aborted) {
        const start = now();
        let more = true;
        try {
          do more = step();
          while (more && now() - start < budgetMs);
        } catch (error) {
          failed(error); // that job is lost, not the ones after it
        }
        if (!more) return;
        await pause();
      }
    } finally {
      // At once, not a microtask later: a wake right after this run ends starts another.
      running = false;
    }
  };

  return {
    wake() {
      if (running || signal.aborted) return;
      running = true;
      // A microtask: the rest of this task (the other ops of a feed message) queues its work
      // first, and the first slice takes all of it within its budget.
      done = Promise.resolve().then(run);
    },
    settled() {
      return done;
    },
  };
}
