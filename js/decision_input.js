// Did the user mean this click? The one home of that answer for every control of the host's
// that decides something: a consent card's Allow, Deny and Close, an MCP app's grant rows, a
// question's buttons and options, the app center's Install and Enable (docs/security.md,
// "Decisions"). An agent can time what it shows (a card, a question, a redrawn row) to appear
// under a click the user aimed at something else: a game that has the user click at one spot,
// a double click whose second half lands on what the first one caused. Browsers guard their
// own permission prompts the same way: Chromium's InputEventActivationProtector ignores input
// that comes sooner than a double-click interval after a prompt is shown or moved, Firefox
// keeps its install and download buttons disabled for `security.dialog_enable_delay`. A delay
// alone does not show intent (measured: a user clicking at one spot every 250 ms clicks again
// after any delay), where the pointer came from does. So a control takes a pointer click only
// when all of these hold:
//
// 1. it has been visible (not covered: the page's hit test at its centre finds it) and still
//    (same box) for ARM_DELAY_MS; any move, resize, redraw or covering starts the wait again;
// 2. the pointer ARRIVED on it after that: a pointermove on the control, once it was armed,
//    that came from outside it (where the browser says the pointer was before the move,
//    clientX - movementX, lies outside the control's box; this holds when the pointer comes
//    from a frame too, whose moves the page never sees). A control that appeared or moved under
//    a still pointer gets no such move (the browser's own boundary events and a press at the
//    spot where the pointer already was carry no movement): it does not count, and neither
//    does a pointer wandering inside it;
// 3. the press began on it after it armed, and the click is a single click (the second click
//    of a double click never decides);
// 4. the browser made the event (isTrusted).
//
// A keyboard activation (Enter or Space: a click with detail 0) counts when the control is
// armed and the keyboard focus came to it after it armed (the user tabbed to it, or clicked
// it): keys typed while it appeared go nowhere. One decision per gesture: a control a decision
// was taken from is done; what it decided disables its group (the caller's).

/** How long a control stands visible and still before it takes a click (the old card's 750 ms,
 * between Chromium's double-click interval, 500 ms, and Firefox's 1000 ms dialog delay). */
export const ARM_DELAY_MS = 750;

/** Why a click was not taken, in the words the user reads next to the control. */
export const REFUSED = /** @type {const} */ ({
  synthetic: "Only a click of yours decides: this one was not made by the browser.",
  early:
    "That click came as this appeared or moved, so it was not taken. Read it, then move the pointer onto the button and click.",
  arrival:
    "The pointer was already here when this appeared, so that click was not taken. Move the pointer onto the button, then click.",
  repeat: "A double click decides nothing. Click once.",
  keyboard: "Press Tab to move to this button after reading it, then Enter.",
});

/** @typedef {keyof typeof REFUSED} Refusal */

/**
 * What one control has seen, without the DOM: the rules above as a function of times.
 */
export class Intent {
  /** @param {number} now when the control was drawn */
  constructor(now) {
    this.placedAt = now;
    this.enteredAt = Number.NEGATIVE_INFINITY;
    this.pressedAt = Number.NEGATIVE_INFINITY;
    this.focusedAt = Number.NEGATIVE_INFINITY;
  }

  /** It appeared, moved, was redrawn or uncovered: the wait starts again. @param {number} now */
  placed(now) {
    this.placedAt = now;
  }

  /** The pointer came onto it from outside. @param {number} now */
  entered(now) {
    this.enteredAt = now;
  }

  /** A press (pointerdown) on it. @param {number} now */
  pressed(now) {
    this.pressedAt = now;
  }

  /** The keyboard focus came to it. @param {number} now */
  focused(now) {
    this.focusedAt = now;
  }

  get armedAt() {
    return this.placedAt + ARM_DELAY_MS;
  }

  /** @param {number} now */
  armed(now) {
    return now >= this.armedAt;
  }

  /**
   * Whether the pointer arrived on it after it armed and is still the one that arrived: what a
   * click inside a frame (which the page never sees) must add to count as meant.
   * @param {number} now
   */
  arrived(now) {
    return this.armed(now) && this.enteredAt >= this.armedAt;
  }

  /**
   * Why this activation decides nothing, or null when it is the user's.
   * @param {{ now: number, trusted: boolean, detail: number }} click
   * @returns {Refusal | null}
   */
  refusal({ now, trusted, detail }) {
    if (!trusted) return "synthetic";
    if (!this.armed(now)) return "early";
    if (detail === 0) return this.focusedAt >= this.armedAt ? null : "keyboard";
    if (detail > 1) return "repeat";
    if (this.enteredAt < this.armedAt || this.pressedAt < this.armedAt) return "arrival";
    return null;
  }
}

/**
 * A control's place on the screen, or "" when it is not there to be read: detached, of no
 * size, or covered at its centre (by a full-screen app, an overlay, another card).
 * @param {HTMLElement} control
 */
export function placeOf(control) {
  if (!control.isConnected) return "";
  const box = control.getBoundingClientRect();
  if (box.width < 1 || box.height < 1) return "";
  const hit = control.ownerDocument.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  if (!hit || !control.contains(hit)) return "";
  return `${Math.round(box.left)},${Math.round(box.top)},${Math.round(box.width)},${Math.round(box.height)}`;
}

/**
 * @typedef {{ control: HTMLElement, intent: Intent, place: string,
 *   armedChanged: (armed: boolean) => void }} Watched
 */

/**
 * Record when the pointer arrives on `control` (rule 2): a move onto it from outside its box.
 * @param {HTMLElement} control @param {Watched} item
 */
function arrivals(control, item) {
  control.addEventListener("pointermove", (event) => {
    check(item, event.timeStamp);
    if (!event.isTrusted || (event.movementX === 0 && event.movementY === 0)) return;
    const box = control.getBoundingClientRect();
    const x = event.clientX - event.movementX;
    const y = event.clientY - event.movementY;
    if (x < box.left || x >= box.right || y < box.top || y >= box.bottom) item.intent.entered(event.timeStamp);
  });
}

/** When the page last saw the pointer move: outside every frame, whose moves it never sees. */
let lastPageMove = Number.NEGATIVE_INFINITY;
let tracking = false;
function trackPageMoves() {
  if (tracking) return;
  tracking = true;
  const seen = (/** @type {PointerEvent} */ event) => {
    if (event.isTrusted) lastPageMove = event.timeStamp;
  };
  window.addEventListener("pointermove", seen, { capture: true, passive: true });
}

/** Every guarded control on the page, measured once a frame while any is there. */
const watched = /** @type {Set<Watched>} */ (new Set());
let frame = 0;

/**
 * Has the control moved (or been covered) since it was last measured? Then its wait starts
 * again from `now`. Called every frame, and again by each of its events before they count: a
 * card removed above it moves it at once, and the browser's own pointerenter for a control
 * that moved under a still pointer may come before the next frame's measure.
 * @param {Watched} item @param {number} now
 */
function check(item, now) {
  const place = placeOf(item.control);
  if (place !== item.place || place === "") {
    item.place = place;
    item.intent.placed(now);
  }
}

function measure() {
  frame = 0;
  const now = performance.now();
  for (const item of watched) {
    if (!item.control.isConnected) {
      watched.delete(item);
      continue;
    }
    check(item, now);
    const armed = item.intent.armed(now);
    if (armed !== item.control.hasAttribute("data-armed")) {
      item.control.toggleAttribute("data-armed", armed);
      item.armedChanged(armed);
    }
  }
  if (watched.size > 0) frame = requestAnimationFrame(measure);
}

/**
 * Guard a control that decides something. Its click (and, for an option, its change) reaches
 * the control's own handlers only when the user meant it; otherwise it is stopped before them
 * and `say` tells the user why. `data-armed` is set on the control while it takes a click (the
 * host dims it until then; tests wait on it instead of sleeping).
 * @param {HTMLElement} control a button, or an option's label (its input inside)
 * @param {{ say: (text: string) => void, armedChanged?: (armed: boolean) => void }} options
 * @returns {Intent}
 */
export function guardDecision(control, { say, armedChanged = () => {} }) {
  const intent = new Intent(performance.now());
  /** @type {Watched} */
  const item = { control, intent, place: "", armedChanged };
  const trusted = (/** @type {Event} */ event) => {
    check(item, event.timeStamp);
    return event.isTrusted;
  };
  arrivals(control, item);
  // A press focuses the button too: that focus is the pointer's, not the keyboard's (a click
  // refused as early must not make a later Space or Enter count).
  let pressing = false;
  control.addEventListener("pointerdown", (event) => {
    if (!trusted(event)) return;
    intent.pressed(event.timeStamp);
    pressing = true;
    setTimeout(() => {
      pressing = false;
    });
  });
  control.addEventListener("focusin", (event) => {
    if (trusted(event) && !pressing) intent.focused(event.timeStamp);
  });
  // A click on an option's label is followed, in the same task, by the click the browser
  // gives its input (detail 0 in Chromium): that one is the same gesture, judged once.
  let passing = false;
  control.addEventListener(
    "click",
    (event) => {
      if (passing) return;
      check(item, event.timeStamp);
      const why = intent.refusal({ now: event.timeStamp, trusted: event.isTrusted, detail: event.detail });
      if (why === null) {
        passing = true;
        setTimeout(() => {
          passing = false;
        });
        return;
      }
      event.preventDefault(); // an option stays as it was, a submit button submits nothing
      event.stopImmediatePropagation();
      say(REFUSED[why]);
    },
    true,
  );
  watched.add(item);
  if (!frame) frame = requestAnimationFrame(measure);
  return intent;
}

/**
 * Guard a field whose Enter decides (a question's text input): the field is watched like a
 * control, and the user's focus on it or typing in it after it armed is what lets Enter count
 * (`keyboardRefusal`). Clicks into a field decide nothing, so they are not judged.
 * @param {HTMLElement} field
 * @returns {Intent}
 */
export function guardField(field) {
  const intent = new Intent(performance.now());
  /** @type {Watched} */
  const item = { control: field, intent, place: "", armedChanged: () => {} };
  const seen = (/** @type {Event} */ event) => {
    check(item, event.timeStamp);
    if (event.isTrusted) intent.focused(event.timeStamp);
  };
  field.addEventListener("focusin", seen);
  field.addEventListener("input", seen);
  watched.add(item);
  if (!frame) frame = requestAnimationFrame(measure);
  return intent;
}

/**
 * Watch a frame whose clicks the page cannot see (an MCP app's: its clicks stay in it) and
 * whose click may decide something (full screen). `meant(now)`: the frame stood still and
 * visible for ARM_DELAY_MS, and the pointer came onto it after that: the page saw the pointer
 * move after the frame armed (the page sees no move while the pointer is in the frame, so it
 * was outside then). A frame that appeared under a still pointer is not meant.
 * @param {HTMLIFrameElement} area
 * @returns {{ meant(now: number): boolean }}
 */
export function guardArea(area) {
  const intent = new Intent(performance.now());
  /** @type {Watched} */
  const item = { control: area, intent, place: "", armedChanged: () => {} };
  trackPageMoves();
  watched.add(item);
  if (!frame) frame = requestAnimationFrame(measure);
  return {
    meant(now) {
      check(item, now);
      intent.entered(lastPageMove);
      intent.pressed(now); // the press was in the frame, just now (its shell said so)
      return intent.arrived(now);
    },
  };
}

/**
 * Whether a keyboard decision made from a field (Enter in a question's text input) is the
 * user's: the field's own control must be armed and focused after it armed.
 * @param {Intent} intent @param {Event} event
 * @returns {Refusal | null}
 */
export function keyboardRefusal(intent, event) {
  return intent.refusal({ now: event.timeStamp, trusted: event.isTrusted, detail: 0 });
}
