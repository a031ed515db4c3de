// Only the latest state matters (U4): states that arrive faster than a surface can take them
// are coalesced, and one that is older than what the surface already has is dropped.

/**
 * @typedef {{ revision: number, state: object }} Revisioned
 */

export class StateQueue {
  /** @param {(instanceId: string, item: Revisioned) => void} deliver */
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
      this.delivered.set(instanceId, item.revision);
      this.deliver(instanceId, item);
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
  /** @param {number} min @param {number} max */
  constructor(min, max) {
    this.min = min;
    this.max = max;
    /** @type {number[]} */
    this.recent = [];
    this.frozen = false;
    this.current = min;
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
