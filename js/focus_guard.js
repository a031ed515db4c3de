// Focus belongs to the notebook page (issue 13). A surface can move the keyboard focus into
// its frame without any click (focus(), dialog.showModal(), a popover with autofocus, a label
// click, select(), reportValidity(), location.hash, a nested frame...), and anything done in
// the surface's own realm to stop that, it can undo. So the page decides, where no surface
// can reach.
//
// What the page can see (measured, Chromium 156): when focus moves into a surface, the page's
// window gets `blur` and `document.activeElement` becomes that surface's shell iframe, whoever
// caused it. The page cannot see the pointer over a sandboxed frame (no pointerover, no
// :hover, no :active on the iframe element); the host-owned shell frame can (its surface
// frame is in its process): `:hover` on the surface iframe, and the user activation a click
// in the surface gives to every ancestor frame (a surface's script cannot create one, and a
// key typed into the notebook does not activate the shell, a frame of another origin). So:
//
// - focus moved by Tab from the page is the user's: a Tab keydown the page did not cancel,
//   on an element before the surface (Shift+Tab: after it), at most TAB_MS earlier (moving
//   into a frame of another process, the page's blur comes a few tasks after the keydown);
// - otherwise the page asks the shell (`probe`); the user moved it when the pointer is over
//   the surface and the shell has user activation. Until the answer, what that surface sends
//   waits (`gate`); then it goes on, or it is discarded, focus goes back to the page element
//   that had it, and the surface is stopped (`stolen`): a surface that retries on a timer
//   would otherwise get the keys typed in each instant it holds focus (measured: 4 to 24
//   of 36 keys with a page that only restored focus).
//
// Giving focus back works only from a later task than the blur (measured: from the blur
// handler or a microtask the page's activeElement changes, but the keys still go to the
// frame).

import { SURFACE_NAMESPACE } from "./protocol.generated.js";

/**
 * @typedef {{ shells(): Iterable<HTMLIFrameElement>,
 *   probe(shell: HTMLIFrameElement): string,
 *   stolen(shell: HTMLIFrameElement): void, signal?: AbortSignal, probeTimeoutMs?: number,
 *   pollMs?: number }} FocusGuardOptions
 * @typedef {{ held: Array<() => void>, timer: ReturnType<typeof setTimeout>, nonce: string }} Pending
 */

/** How long after a Tab keydown in the page focus may arrive in the surface it led to. */
export const TAB_MS = 300;
/** How long the shell may take to answer a probe before the move counts as not the user's. */
export const PROBE_TIMEOUT_MS = 1000;
/** Focus moving from one surface to another gives the page no event: it looks this often. */
export const POLL_MS = 100;

/**
 * Ask a shell whether the user is in its frame now: the pointer over it and the user
 * activation of a click in it (bridge.js shellRelay answers `focus_answer` with the nonce).
 * The answer must carry the nonce: the shell relays its surface's or app's messages too, and
 * they never see the probe, so they cannot answer for the shell. Returns the nonce.
 * @param {HTMLIFrameElement} shell
 */
export function probeShell(shell) {
  const nonce = Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36)).join("");
  shell.contentWindow?.postMessage({ namespace: SURFACE_NAMESPACE, type: "focus_probe", nonce }, "*");
  return nonce;
}

/**
 * Guard the page's focus against the shells this view owns. Returns `answer` (the shell's
 * reply to a probe) and `gate` (run or hold what a surface sent).
 * @param {FocusGuardOptions} options
 */
export function guardFocus(options) {
  const timeoutMs = options.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  /** @type {HTMLIFrameElement | null} the shell the user clicked or tabbed into */
  let admitted = null;
  /** @type {Element | null} where focus goes back to */
  let last = null;
  /** @type {{ event: KeyboardEvent, at: number } | null} the last Tab pressed in the page */
  let tab = null;
  /** @type {Map<HTMLIFrameElement, Pending>} */
  const pending = new Map();

  /** @param {Element | null} node @returns {node is HTMLIFrameElement} */
  const isShell = (node) => {
    if (!(node instanceof HTMLIFrameElement)) return false;
    for (const shell of options.shells()) if (shell === node) return true;
    return false;
  };

  /** Is focus in one of our shells without the user having put it there? Then ask. */
  function check() {
    const active = document.activeElement;
    if (!isShell(active) || active === admitted || pending.has(active)) return;
    if (tabbedInto(active)) {
      tab = null;
      admitted = active;
      return;
    }
    const timer = setTimeout(() => settle(active, false), timeoutMs);
    pending.set(active, { held: [], timer, nonce: options.probe(active) });
  }

  /** Did the page's last Tab lead here? @param {HTMLIFrameElement} shell */
  function tabbedInto(shell) {
    if (!tab || tab.event.defaultPrevented || performance.now() - tab.at > TAB_MS) return false;
    const from = tab.event.target;
    if (!(from instanceof Node) || from === shell) return false;
    const order = from.compareDocumentPosition(shell);
    return tab.event.shiftKey
      ? (order & Node.DOCUMENT_POSITION_PRECEDING) !== 0
      : (order & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
  }

  /** @param {HTMLIFrameElement} shell @param {boolean} byUser */
  function settle(shell, byUser) {
    const waiting = pending.get(shell);
    if (!waiting) return;
    pending.delete(shell);
    clearTimeout(waiting.timer);
    if (byUser) {
      if (document.activeElement === shell) admitted = shell;
      for (const run of waiting.held) run();
      return;
    }
    // Not the user's: focus goes back (this is a later task than the blur, so it works).
    if (document.activeElement === shell) {
      if (last?.isConnected && last instanceof HTMLElement) last.focus({ preventScroll: true });
      else shell.blur();
    }
    options.stolen(shell);
  }

  const onBlur = () => check();
  const onFocusIn = (/** @type {FocusEvent} */ event) => {
    const target = /** @type {Element} */ (event.target);
    if (isShell(target)) return;
    last = target;
    admitted = null; // the user is back in the page: the next move into a surface is asked
  };
  const onFocus = () => {
    if (!isShell(document.activeElement)) admitted = null;
  };
  const onKeyDown = (/** @type {KeyboardEvent} */ event) => {
    // Kept whole: whether a handler cancelled it is read later, after its dispatch.
    if (event.key === "Tab") tab = { event, at: performance.now() };
  };
  window.addEventListener("blur", onBlur);
  window.addEventListener("focus", onFocus);
  document.addEventListener("focusin", onFocusIn, true);
  window.addEventListener("keydown", onKeyDown, true);
  const poll = setInterval(check, options.pollMs ?? POLL_MS);

  options.signal?.addEventListener("abort", () => {
    window.removeEventListener("blur", onBlur);
    window.removeEventListener("focus", onFocus);
    document.removeEventListener("focusin", onFocusIn, true);
    window.removeEventListener("keydown", onKeyDown, true);
    clearInterval(poll);
    for (const waiting of pending.values()) clearTimeout(waiting.timer);
    pending.clear();
  });

  return {
    /**
     * The shell's answer to a probe: did the user move focus into its surface? An answer
     * without the probe's nonce is not the shell's: it changes nothing, and false says so.
     * @param {HTMLIFrameElement} shell @param {unknown} nonce @param {boolean} byUser
     */
    answer(shell, nonce, byUser) {
      if (typeof nonce !== "string" || pending.get(shell)?.nonce !== nonce) return false;
      settle(shell, byUser);
      return true;
    },
    /**
     * Run `send` now, or hold it while the page asks whether focus in that surface is the
     * user's (it runs then, or never).
     * @param {HTMLIFrameElement} shell @param {() => void} send
     */
    gate(shell, send) {
      check();
      const waiting = pending.get(shell);
      if (waiting) waiting.held.push(send);
      else send();
    },
  };
}
