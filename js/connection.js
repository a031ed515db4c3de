// The host view's line to the kernel: what it sends, in the order the user did it.
//
// Without a kernel (a notebook reopened, a kernel that died) sending throws: the view then
// stays as it is, read-only, instead of breaking. Once the view knows the kernel is gone
// (kernel_link.js), nothing is sent: `refuse` tells the user instead. What the user did before the kernel answered
// the first sync (a click on a surface that just appeared) waits, in order, instead of being
// lost; a view that never connects keeps only the first few. Surface events are batched when
// they come thick (state_queue.js EventBatcher); any other message first lets the waiting
// events go, so the kernel hears everything in the order it happened.

import { EventBatcher } from "./state_queue.js";

/**
 * @typedef {import("./view_protocol.js").HostViewMessage} HostViewMessage
 * @typedef {import("./view_protocol.js").EventItem} EventItem
 * @typedef {import("./view_protocol.js").Model<HostViewMessage>} HostModel
 */

/** Messages kept while the kernel has not answered the first sync. */
export const EARLY_KEPT = 100;
// Events travel one comm message each while the view sends fewer than this many a second,
// then together, one message per window (see EventBatcher).
export const EVENTS_ALONE_PER_SECOND = 20;
export const EVENT_WINDOW_MS = 100;

export class Connection {
  /**
   * @param {HostModel} model
   * @param {{ now?: () => number, later?: (run: () => void, ms: number) => unknown }} [clock]
   */
  constructor(model, clock = {}) {
    this.model = model;
    this.connected = false;
    /** While the kernel is gone: told instead of sending (kernel_link.js). @type {(() => void) | null} */
    this.refuse = null;
    /** @type {HostViewMessage[]} */
    this.early = [];
    /** @type {EventBatcher<EventItem>} */
    this.events = new EventBatcher(
      (item) => this.sendNow(item),
      (items) => this.sendNow({ kind: "events", items }),
      { windowMs: EVENT_WINDOW_MS, batchAbove: EVENTS_ALONE_PER_SECOND, ...clock },
    );
  }

  /** Send at once, connected or not (a sync, a consent card's decision). @param {HostViewMessage} content */
  send(content) {
    if (this.refuse) {
      this.refuse();
      return;
    }
    try {
      this.model.send(content);
    } catch (error) {
      console.warn("[lineup] the kernel is not reachable:", error);
    }
  }

  /** Send once connected; until then keep it, in order. @param {HostViewMessage} content */
  sendNow(content) {
    if (this.connected) this.send(content);
    else if (this.early.length < EARLY_KEPT) this.early.push(content);
  }

  /** A surface's event or refusal: alone or batched. @param {EventItem} item */
  event(item) {
    this.events.push(item);
  }

  /** Anything else the user did: after the events that came before it. @param {HostViewMessage} content */
  sendInOrder(content) {
    this.events.flush();
    this.sendNow(content);
  }

  /** The kernel answered: what waited goes now, in order. */
  connect() {
    this.connected = true;
    for (const content of this.early.splice(0)) this.send(content);
  }

  /** The view goes: what the user did last still reaches the kernel (or waits with the rest). */
  close() {
    this.events.flush();
  }
}
