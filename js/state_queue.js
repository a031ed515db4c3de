// Only the latest state matters (U4): states that arrive faster than a surface can take them
// are coalesced, and one that is older than what the surface already has is dropped.

/**
 * @typedef {{ revision: number, state: object }} Revisioned
 */

export class StateQueue {
  /** @param {(instanceId: string, item: Revisioned, from: number | undefined) => void} deliver
   * `from`: the revision the surface had before (undefined for a new frame). */
  constructor(deliver) {
    this.deliver = deliver;
    /** @type {Map<string, number>} newest revision delivered, per instance */
    this.delivered = new Map();
    /** @type {Map<string, Revisioned>} newest revision waiting, per instance */
    this.waiting = new Map();
  }

  /**
   * Take a state; returns false if it is not newer than what is delivered or waiting.
   * @param {string} instanceId
   * @param {Revisioned} item
   */
  push(instanceId, item) {
    const newest = Math.max(this.delivered.get(instanceId) ?? 0, this.waiting.get(instanceId)?.revision ?? 0);
    if (item.revision <= newest) return false;
    this.waiting.set(instanceId, item);
    return true;
  }

  /** Deliver the newest waiting state of each instance that is ready. @param {(id: string) => boolean} ready */
  flush(ready) {
    for (const [instanceId, item] of this.waiting) {
      if (!ready(instanceId)) continue;
      this.waiting.delete(instanceId);
      const from = this.delivered.get(instanceId);
      this.delivered.set(instanceId, item.revision);
      this.deliver(instanceId, item, from);
    }
  }

  /** Forget an instance (closed, or replaced by a new frame that must get its state again). @param {string} instanceId */
  reset(instanceId) {
    this.delivered.delete(instanceId);
    this.waiting.delete(instanceId);
  }
}

/**
 * A height a surface asked for, made safe: clamped, and frozen once it starts to oscillate
 * between values (a known failure of hosts that resize to content that resizes to the host).
 */
export class SizeGuard {
  /** @param {number} min @param {number} max @param {number} [start] the height it has now */
  constructor(min, max, start = min) {
    this.min = min;
    this.max = max;
    /** @type {number[]} */
    this.recent = [];
    this.frozen = false;
    this.current = start;
  }

  /**
   * The height to apply, or null to leave it as it is.
   * @param {number} requested
   */
  next(requested) {
    if (this.frozen || !Number.isFinite(requested)) return null;
    const height = Math.round(Math.min(this.max, Math.max(this.min, requested)));
    if (Math.abs(height - this.current) < 2) return null;
    this.recent.push(height);
    if (this.recent.length > 6) this.recent.shift();
    const [a, b] = this.recent.slice(-2);
    const flips = this.recent.filter((h, i) => i >= 2 && h === this.recent[i - 2]).length;
    if (flips >= 3 && a !== b) {
      this.frozen = true; // A, B, A, B...: settle on the larger and stop listening
      this.current = Math.max(a, b);
      return this.current;
    }
    this.current = height;
    return height;
  }
}

/** Events a surface may send: a token bucket, so a flood is cut and reported once. */
export class RateLimit {
  /** @param {number} perSecond @param {number} burst @param {() => number} [now] */
  constructor(perSecond, burst, now = () => performance.now()) {
    this.perSecond = perSecond;
    this.burst = burst;
    this.tokens = burst;
    this.now = now;
    this.last = now();
    this.dropped = 0;
  }

  take() {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.dropped += 1;
    return false;
  }
}

/**
 * Events on their way to the kernel. Each comm message costs the kernel, the server and
 * JupyterLab a busy/idle round (measured: 50 single events a second from one surface slowed
 * an unrelated cell from 0.2 s to 3.8 s). So an event goes at once while the view has sent
 * fewer than `batchAbove` messages in the last second (a click, a drag: no added latency),
 * and beyond that they travel together, one message per `windowMs`. None is dropped here;
 * RateLimit decides what is too much.
 * @template T
 */
export class EventBatcher {
  /**
   * @param {(item: T) => void} sendOne
   * @param {(items: T[]) => void} sendMany
   * @param {{ windowMs: number, batchAbove: number, now?: () => number,
   *   later?: (run: () => void, ms: number) => unknown }} options
   */
  constructor(
    sendOne,
    sendMany,
    // setTimeout is called through a closure: called as this.later(...), a browser throws
    // "Illegal invocation" (its `this` must be the window).
    { windowMs, batchAbove, now = () => performance.now(), later = (run, ms) => setTimeout(run, ms) },
  ) {
    this.sendOne = sendOne;
    this.sendMany = sendMany;
    this.windowMs = windowMs;
    this.batchAbove = batchAbove;
    this.now = now;
    this.later = later;
    /** @type {T[]} */
    this.waiting = [];
    /** @type {number[]} when each message of the last second went */
    this.sent = [];
    this.scheduled = false;
  }

  /** @param {T} item */
  push(item) {
    const now = this.now();
    while (this.sent.length && now - this.sent[0] >= 1000) this.sent.shift();
    if (!this.scheduled && this.sent.length < this.batchAbove) {
      this.sent.push(now);
      this.sendOne(item);
      return;
    }
    this.waiting.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      this.later(() => this.flush(), this.windowMs);
    }
  }

  /** Send what waits now, as one message (before anything that must come after it). */
  flush() {
    this.scheduled = false;
    if (!this.waiting.length) return;
    this.sent.push(this.now());
    this.sendMany(this.waiting.splice(0));
  }
}
