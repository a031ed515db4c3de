// A surface stuck in an endless loop freezes every surface that shares its process (measured);
// the page itself stays responsive, so the host pings each ready surface and notices the
// silence: a surface that has not answered a ping for `stallMs` is stalled, and the view
// offers to stop it (surfaces.js). A pong recovers it.

/**
 * What the watchdog keeps of a surface (surfaces.js Entry has these fields).
 * @typedef {{ ready: boolean, pingSent: number, pongSeen: number, stalled: boolean }} Watched
 */

/**
 * One look at a surface at `now`: whether it just stalled, and whether to ping it (when the
 * last ping was answered, or again and again while it is stalled, to see it come back).
 * @param {Watched} entry @param {number} now @param {number} stallMs
 * @returns {{ stall: boolean, ping: boolean }}
 */
export function look(entry, now, stallMs) {
  if (!entry.ready) return { stall: false, ping: false };
  const stall = !entry.stalled && entry.pingSent > entry.pongSeen && now - entry.pingSent > stallMs;
  return { stall, ping: stall || entry.stalled || entry.pongSeen >= entry.pingSent };
}

/**
 * A pong came: returns whether the surface was stalled and is now back.
 * @param {Watched} entry @param {number} now
 */
export function pong(entry, now) {
  entry.pongSeen = now;
  if (!entry.stalled) return false;
  entry.stalled = false;
  return true;
}

/**
 * Every `pingMs`, look at each surface; until `signal` aborts.
 * @template {Watched} E
 * @param {{ entries: () => Iterable<E>, ping: (entry: E, now: number) => void,
 *   stalled: (entry: E) => void, stallMs: number, pingMs: number, signal: AbortSignal,
 *   now?: () => number }} options
 */
export function watchSurfaces({ entries, ping, stalled, stallMs, pingMs, signal, now = () => performance.now() }) {
  const timer = setInterval(() => {
    const at = now();
    for (const entry of entries()) {
      const seen = look(entry, at, stallMs);
      if (seen.stall) {
        entry.stalled = true;
        stalled(entry);
      }
      if (seen.ping) {
        entry.pingSent = at;
        ping(entry, at);
      }
    }
  }, pingMs);
  signal.addEventListener("abort", () => clearInterval(timer));
}
