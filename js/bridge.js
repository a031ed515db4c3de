// Code that runs inside the frames, injected as text. Each function here is serialised with
// Function.prototype.toString, so it must be self-contained: no imports, no outer names.

/**
 * The surface frame's first script: closes the ways out that CSP does not cover, then defines
 * the one global LineUpSurface (U6). Runs before any of the bundle's code.
 * @param {{ namespace: string, eventName: string }} config
 */
export function surfaceBridge(config) {
  const NS = config.namespace;
  const EVENT_NAME = new RegExp(config.eventName, "u");
  const win = /** @type {any} */ (window);
  // CSP has no directive for WebRTC: remove it (measured: a surface reached a STUN server).
  for (const name of [
    "RTCPeerConnection",
    "webkitRTCPeerConnection",
    "RTCDataChannel",
    "RTCSessionDescription",
    "RTCIceCandidate",
    "RTCRtpSender",
    "RTCRtpReceiver",
  ]) {
    try {
      delete win[name];
      Object.defineProperty(win, name, { value: undefined, writable: false, configurable: false });
    } catch {
      // already gone
    }
  }
  // execCommand('copy') wrote the page's clipboard after one click (measured).
  try {
    delete (/** @type {any} */ (Document.prototype)).execCommand;
    Object.defineProperty(Document.prototype, "execCommand", { value: undefined });
  } catch {
    // already gone
  }
  // A surface may not take the keyboard from the notebook: focus() moves focus only inside a
  // surface that already has it (the user clicked or tabbed into it). Measured without this:
  // a focus() on a timer, with no click, took every key typed into the notebook.
  const focusOwn = (/** @type {any} */ proto, /** @type {string} */ name) => {
    const original = proto[name];
    if (typeof original !== "function") return;
    Object.defineProperty(proto, name, {
      value: function (/** @type {unknown[]} */ ...args) {
        if (document.hasFocus()) return original.apply(this, args);
      },
      writable: false,
      configurable: false,
    });
  };
  focusOwn(HTMLElement.prototype, "focus");
  focusOwn(SVGElement.prototype, "focus");
  focusOwn(win, "focus");

  // A nested frame has fresh constructors (WebRTC again) and its own navigation: none may live.
  const NESTED = "iframe,frame,object,embed,portal,fencedframe";
  new MutationObserver((records) => {
    for (const record of records) {
      for (const node of record.addedNodes) {
        if (!(node instanceof Element)) continue;
        if (node.matches(NESTED)) node.remove();
        for (const inner of node.querySelectorAll(NESTED)) inner.remove();
      }
    }
  }).observe(document, { childList: true, subtree: true });

  const post = (/** @type {object} */ message) => parent.postMessage(message, "*");
  /** @type {Array<(state: object) => void>} */
  const listeners = [];
  /** @type {object | null} */
  let state = null;
  let manualSize = false;

  window.addEventListener("message", (event) => {
    if (event.source !== parent) return;
    const message = event.data;
    if (!message || message.namespace !== NS) return;
    if (message.type === "theme") {
      // The notebook's theme as CSS variables (--lineup-background, ...) and color-scheme.
      const root = document.documentElement;
      root.dataset.theme = message.mode === "dark" ? "dark" : "light";
      root.style.colorScheme = root.dataset.theme;
      for (const [name, value] of Object.entries(message.vars ?? {})) {
        if (/^--lineup-[a-z-]+$/.test(name) && typeof value === "string") root.style.setProperty(name, value);
      }
      return;
    }
    if (message.type === "ping") {
      post({ namespace: NS, type: "pong", n: message.n }); // the host checks we still answer
      return;
    }
    if (message.type !== "state") return;
    state = message.state;
    for (const listener of listeners.slice()) {
      try {
        listener(/** @type {object} */ (state));
      } catch (error) {
        console.error("[lineup] an onState callback failed:", error);
      }
    }
  });

  const api = Object.freeze({
    /** @param {string} name @param {object} [data] */
    event(name, data) {
      if (typeof name !== "string" || !EVENT_NAME.test(name)) {
        throw new TypeError(`[lineup] event name ${JSON.stringify(name)} must match ${config.eventName} (U9)`);
      }
      post({ namespace: NS, type: "event", event: name, data: data === undefined ? {} : data });
    },
    /** @param {(state: object) => void} callback */
    onState(callback) {
      if (typeof callback !== "function") throw new TypeError("[lineup] onState needs a function");
      listeners.push(callback);
      if (state !== null) {
        const current = state;
        queueMicrotask(() => callback(current));
      }
    },
    /** @param {number} height */
    resize(height) {
      manualSize = true;
      post({ namespace: NS, type: "resize", height: Number(height) });
    },
  });
  Object.defineProperty(win, "LineUpSurface", { value: api, writable: false, configurable: false });

  // Tell the host what the CSP blocked, so the agent's author can see why something failed.
  document.addEventListener("securitypolicyviolation", (event) => {
    post({
      namespace: NS,
      type: "csp",
      directive: String(event.effectiveDirective).slice(0, 64),
      blocked: String(event.blockedURI).slice(0, 200),
    });
  });

  const measure = () => {
    if (!manualSize) post({ namespace: NS, type: "resize", height: document.documentElement.scrollHeight });
  };
  // Ready (U4) once the bundle's own scripts have run, so its onState is registered.
  document.addEventListener("DOMContentLoaded", () => {
    post({ namespace: NS, type: "ready" });
    measure();
    new ResizeObserver(measure).observe(document.documentElement);
  });
}

/**
 * The shell frame's script: holds the surface frame and relays messages by event.source, so
 * neither side can reach anything else. The shell's own CSP (frame-src 'none') is what stops
 * the surface from navigating itself (measured: 0 requests leave with it, 1 per try without).
 * @param {{ srcdoc: string, allow: string, namespace: string, perSecond: number }} config
 */
export function shellRelay(config) {
  // A flood is cut here, before it costs the notebook page anything: at most `perSecond`
  // messages go up (bursts of twice that); the page hears once a second how many were dropped.
  let tokens = 2 * config.perSecond;
  let last = performance.now();
  let dropped = 0;
  setInterval(() => {
    if (dropped) parent.postMessage({ namespace: config.namespace, type: "dropped", count: dropped }, "*");
    dropped = 0;
  }, 1000);
  // The shell's own CSP is what blocks a surface navigating itself: report those blocks too.
  document.addEventListener("securitypolicyviolation", (event) => {
    parent.postMessage(
      {
        namespace: config.namespace,
        type: "csp",
        directive: String(event.effectiveDirective).slice(0, 64),
        blocked: String(event.blockedURI).slice(0, 200),
      },
      "*",
    );
  });
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("allow", config.allow);
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.setAttribute("title", "surface");
  frame.srcdoc = config.srcdoc;
  document.body.appendChild(frame);
  window.addEventListener("message", (event) => {
    if (event.source === frame.contentWindow) {
      const now = performance.now();
      tokens = Math.min(2 * config.perSecond, tokens + ((now - last) / 1000) * config.perSecond);
      last = now;
      if (tokens < 1) {
        dropped += 1;
        return;
      }
      tokens -= 1;
      parent.postMessage(event.data, "*");
    } else if (event.source === parent && event.data?.type === "focus_probe") {
      // The page asks whether the user moved focus into the surface (js/focus_guard.js). Only
      // this frame can tell: the pointer is over the surface, and a click in it activated
      // this frame too (a surface's script cannot; a key typed in the notebook does not).
      // Never relayed: the surface must not learn the nonce.
      const activation = /** @type {any} */ (navigator).userActivation;
      parent.postMessage(
        {
          namespace: config.namespace,
          type: "focus_answer",
          nonce: event.data.nonce,
          user: activation?.isActive === true && frame.matches(":hover"),
        },
        "*",
      );
    } else if (event.source === parent) {
      frame.contentWindow?.postMessage(event.data, "*");
    }
  });
}
