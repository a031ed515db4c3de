// Code that runs inside the frames, injected as text. Each function here is serialised with
// Function.prototype.toString, so it must be self-contained: no imports, no outer names.

/**
 * The host's guard of a realm: closes the ways out that CSP does not cover (WebRTC,
 * execCommand, focus taken without the user, messages from other frames, copy and cut, file
 * inputs, drops and pastes). It runs first in every script the host admits: a surface's one
 * script (surfaceBridge, below) and each inline script of an MCP app (mcp_frames.js), so a
 * copy of any of them in a nested frame brings the guard along (docs/security.md).
 * Idempotent: each script of an app starts with it, and only the first run in a realm acts;
 * the mark it leaves cannot be set before it (nothing runs before the first guard) nor
 * removed after (non-configurable).
 * @param {{ namespace: string, sameRealmParent?: boolean }} config `namespace`: what `blocked`
 *   reports are posted under; `sameRealmParent`: an MCP app's `window.parent` is a same-realm
 *   stand-in for the shell (below)
 */
export function realmGuard(config) {
  const win = /** @type {any} */ (window);
  const MARK = Symbol.for("lineup.realm_guard");
  if (win[MARK] === true) return;
  Object.defineProperty(win, MARK, { value: true, writable: false, configurable: false });
  const NS = config.namespace;
  const up = parent;
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
    delete (/** @type {any} */ (Document.prototype).execCommand);
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

  // Nested frames need no removing: the CSP (hashes of scripts that start with this guard)
  // keeps any other script from running in them, and each is an opaque origin of its own, so
  // the bundle cannot reach into one (measured, docs/security.md).

  /** @type {Set<string>} what was reported blocked already: once is enough */
  const reported = new Set();
  const blocked = (/** @type {string} */ what) => {
    if (reported.has(what)) return;
    reported.add(what);
    up.postMessage({ namespace: NS, type: "blocked", what }, "*");
  };

  // The guards below use the realm's functions as they are now, before the bundle runs: a
  // bundle can replace Function.prototype.call, a getter or Array.prototype.includes later,
  // but not the references taken here. Reflect.apply is one of them.
  const apply = Reflect.apply;
  const getter = (/** @type {object} */ proto, /** @type {string} */ name) =>
    /** @type {(this: any) => any} */ (
      /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(proto, name)).get
    );
  const define = Object.defineProperty;
  const stopAll = Event.prototype.stopImmediatePropagation;
  const cancel = Event.prototype.preventDefault;
  const composedPath = Event.prototype.composedPath;
  const sourceOf = getter(MessageEvent.prototype, "source");
  const inputType = getter(HTMLInputElement.prototype, "type");
  const dragData = getter(DragEvent.prototype, "dataTransfer");
  const pasteData = getter(ClipboardEvent.prototype, "clipboardData");
  const dataTypes = getter(DataTransfer.prototype, "types");
  const addListener = EventTarget.prototype.addEventListener;
  const listen = (
    /** @type {EventTarget} */ target,
    /** @type {string} */ type,
    /** @type {(event: any) => void} */ handler,
  ) => apply(addListener, target, [type, handler, true]);
  const stop = (/** @type {Event} */ event) => {
    apply(cancel, event, []);
    apply(stopAll, event, []);
  };

  // On the window in the capture phase, before any of the bundle's code: the first listener
  // any message meets. A message that is not from this surface's own shell or from itself
  // (another surface walking window.top.frames, a nested frame) stops here; the bundle never
  // sees it. Its own messages pass: libraries post to their own window to schedule work.
  listen(window, "message", (event) => {
    const source = apply(sourceOf, event, []);
    if (source !== up && source !== window) apply(stopAll, event, []);
  });

  // What the user copies is what the surface shows: copy and cut events never reach the
  // bundle, so it cannot put other text on the clipboard (clipboardData.setData); an app
  // writes the clipboard with clipboard.write, after the user's consent. Said once, when the
  // user copied and a listener of the bundle's was kept from the event: registering one is
  // no attempt (React listens for every event it knows, copy too, and changes nothing).
  let listening = false;
  for (const type of ["copy", "cut"]) listen(window, type, () => listening && blocked("copy"));
  for (const type of ["copy", "cut"]) listen(window, type, (event) => apply(stopAll, event, []));
  define(EventTarget.prototype, "addEventListener", {
    value: function (/** @type {string} */ type, /** @type {any[]} */ ...rest) {
      if (type === "copy" || type === "cut") listening = true;
      return apply(addListener, this, [type, ...rest]);
    },
    writable: false,
    configurable: false,
  });
  for (const proto of [HTMLElement.prototype, SVGElement.prototype, Document.prototype, win]) {
    for (const name of ["oncopy", "oncut"]) {
      try {
        const set = () => {
          listening = true;
        };
        define(proto, name, { get: () => null, set, configurable: false });
      } catch {
        // not defined there in this browser
      }
    }
  }

  // A file reaches an agent only through device.pick_file, with the user's consent: a
  // surface's own <input type=file> does not open, showPicker() refuses it, and files dropped
  // or pasted into a surface never reach the bundle. The window sees a click inside a closed
  // shadow root as a click on its host, so each shadow root the bundle can reach (attachShadow,
  // ElementInternals) gets the same guard.
  const isFileInput = (/** @type {unknown} */ node) => {
    try {
      return apply(inputType, node, []) === "file";
    } catch {
      return false; // not an <input>
    }
  };
  /** @type {WeakSet<EventTarget>} */
  const guarded = new WeakSet();
  const guardClicks = (/** @type {EventTarget} */ target) => {
    if (apply(WeakSet.prototype.has, guarded, [target])) return;
    apply(WeakSet.prototype.add, guarded, [target]);
    listen(target, "click", (event) => {
      if (!isFileInput(apply(composedPath, event, [])[0])) return;
      stop(event);
      blocked("file");
    });
  };
  guardClicks(window);
  const attachShadow = Element.prototype.attachShadow;
  define(Element.prototype, "attachShadow", {
    value: function (/** @type {ShadowRootInit} */ init) {
      const root = apply(attachShadow, this, [init]);
      guardClicks(root);
      return root;
    },
    writable: false,
    configurable: false,
  });
  const internalsRoot = getter(ElementInternals.prototype, "shadowRoot");
  define(ElementInternals.prototype, "shadowRoot", {
    get() {
      const root = apply(internalsRoot, this, []);
      if (root) guardClicks(root);
      return root;
    },
    configurable: false,
  });
  const showPicker = HTMLInputElement.prototype.showPicker;
  define(HTMLInputElement.prototype, "showPicker", {
    value: function () {
      if (isFileInput(this)) {
        blocked("file");
        throw new DOMException("a surface picks files with device.pick_file", "NotAllowedError");
      }
      return apply(showPicker, this, []);
    },
    writable: false,
    configurable: false,
  });
  const carriesFiles = (/** @type {(this: any) => any} */ read, /** @type {Event} */ event) => {
    const data = apply(read, event, []);
    const types = data ? apply(dataTypes, data, []) : [];
    for (let i = 0; i < types.length; i++) if (types[i] === "Files") return true;
    return false;
  };
  listen(window, "drop", (event) => {
    if (carriesFiles(dragData, event)) {
      stop(event);
      blocked("file");
    }
  });
  listen(window, "paste", (event) => {
    if (carriesFiles(pasteData, event)) {
      stop(event);
      blocked("file");
    }
  });

  if (config.sameRealmParent) {
    // MCP apps are written for a parent of their own origin (the spec's sandbox proxy), and
    // some read properties of it: Vue's reactivity, given an App whose transport holds
    // window.parent, reads `__v_isRef` of it, which throws on a cross-origin window (measured:
    // every basic-vue button failed). No sandboxed frame can have a parent of its own origin
    // here: every document below a sandbox without allow-same-origin gets an opaque origin
    // of its own (measured, docs/mcp-apps.md). So `parent` is a plain object of this realm
    // that posts to the real parent, and a message from the real parent says it came from
    // that object. It holds nothing: the app could post to the real parent anyway.
    const stand = Object.freeze({
      postMessage: (/** @type {unknown[]} */ ...args) => apply(up.postMessage, up, args),
    });
    define(win, "parent", { get: () => stand, configurable: false });
    define(MessageEvent.prototype, "source", {
      get() {
        const real = apply(sourceOf, this, []);
        return real === up ? stand : real;
      },
      configurable: false,
    });
  }
}

/**
 * Tell the host what the CSP blocked in this frame, so the author of a surface or an app can
 * see why something failed (and, for an MCP app, which domain the user has not granted).
 * @param {{ namespace: string, key?: string }} config
 */
export function cspReports(config) {
  const up = parent;
  document.addEventListener("securitypolicyviolation", (event) => {
    up.postMessage(
      {
        namespace: config.namespace,
        type: "csp",
        directive: String(event.effectiveDirective).slice(0, 64),
        blocked: String(event.blockedURI).slice(0, 200),
        shell: config.key, // the shell's own reports carry its key; a surface's carry none
      },
      "*",
    );
  });
}

/**
 * The surface frame's first script: the realm's guard, then the one global LineUpSurface
 * (U6). Runs before any of the bundle's code.
 * @param {{ namespace: string, eventName: string }} config
 * @param {(target: any, patch: any) => any} merge RFC 7396 merge patch (deltas.js mergePatch)
 * @param {typeof realmGuard} guard
 * @param {typeof cspReports} reportCsp
 */
export function surfaceBridge(config, merge, guard, reportCsp) {
  guard({ namespace: config.namespace });
  const NS = config.namespace;
  const EVENT_NAME = new RegExp(config.eventName, "u");
  const win = /** @type {any} */ (window);

  const post = (/** @type {object} */ message) => parent.postMessage(message, "*");
  /** @type {Array<(state: object) => void>} */
  const listeners = [];
  /** @type {object | null} */
  let state = null;
  /** @type {unknown} the revision of `state` (the page's count, U4) */
  let revision;
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
    if (message.type === "patch") {
      // The page sends the change when this frame holds the revision it applies to (U4: the
      // bundle still gets the whole state); one that does not follow is never applied.
      if (message.base !== revision || !Array.isArray(message.patches)) return;
      let next = state;
      for (const patch of message.patches) next = merge(next, patch);
      state = next;
    } else if (message.type === "state") {
      state = message.state;
    } else {
      return;
    }
    revision = message.revision;
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

  // What the bundle gets wrong is shown in the notebook, next to the surface (issue 15), not
  // only in devtools: uncaught errors, rejected promises, and its own console.error and
  // console.warn, as text cut to 500 characters (a stack to 4000), at most 10 in a burst
  // then one a second. A bundle can undo this in its realm: it is a diagnosis, not a guard.
  let problemTokens = 10;
  let problemAt = performance.now();
  const describe = (/** @type {unknown} */ value) => {
    try {
      if (value instanceof Error) return `${value.name}: ${value.message}`;
      return typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
    } catch {
      return String(value);
    }
  };
  const report = (/** @type {string} */ level, /** @type {string} */ text, /** @type {unknown} */ stack) => {
    const now = performance.now();
    problemTokens = Math.min(10, problemTokens + (now - problemAt) / 1000);
    problemAt = now;
    if (problemTokens < 1) return;
    problemTokens -= 1;
    post({
      namespace: NS,
      type: "problem",
      level,
      text: String(text).slice(0, 500),
      stack: typeof stack === "string" ? stack.slice(0, 4000) : "",
    });
  };
  window.addEventListener("error", (event) => {
    report("error", event.message || describe(event.error), event.error?.stack);
  });
  window.addEventListener("unhandledrejection", (event) => {
    report("rejection", describe(event.reason), event.reason?.stack);
  });
  for (const level of /** @type {const} */ (["error", "warn"])) {
    const original = console[level];
    console[level] = (/** @type {unknown[]} */ ...args) => {
      report(`console.${level}`, args.map(describe).join(" "), undefined);
      return original.apply(console, args);
    };
  }

  reportCsp({ namespace: NS });

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
 * It is the gate between a surface and the notebook page (S4): every message from its surface
 * takes a token, refused or not; one that is too big never reaches the page. Its own reports
 * (dropped, too_large, silent, csp) carry `key`, a secret of this shell's that its surface
 * cannot read (it is in the shell's document, another origin): the page tells them from
 * whatever the surface sends in their shape (relay.js).
 * @param {{ srcdoc: string, title: string, allow: string, namespace: string, perSecond: number,
 *   maxChars: number, key: string }} config
 * @param {typeof exceeds} larger
 * @param {typeof cspReports} reportCsp
 */
export function shellRelay(config, larger, reportCsp) {
  // A flood is cut here, before it costs the notebook page anything: at most `perSecond`
  // messages go up (bursts of twice that); the page hears once a second how many were dropped.
  let tokens = 2 * config.perSecond;
  let last = performance.now();
  let dropped = 0;
  setInterval(() => {
    if (dropped)
      parent.postMessage({ namespace: config.namespace, type: "dropped", count: dropped, shell: config.key }, "*");
    dropped = 0;
  }, 1000);
  // The shell's own CSP is what blocks a surface navigating itself: report those blocks too.
  reportCsp({ namespace: config.namespace, key: config.key });
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.setAttribute("allow", config.allow);
  frame.setAttribute("referrerpolicy", "no-referrer");
  frame.setAttribute("title", config.title);
  frame.srcdoc = config.srcdoc;
  // The bridge and the bundle's js are one script: if it does not parse, nothing runs and the
  // surface never says a word. Say so for it, once it has loaded and stayed silent.
  let heard = false;
  frame.addEventListener("load", () => {
    setTimeout(() => {
      if (!heard) parent.postMessage({ namespace: config.namespace, type: "silent", shell: config.key }, "*");
    }, 2000);
  });
  document.body.appendChild(frame);
  window.addEventListener("message", (event) => {
    if (event.source === frame.contentWindow) {
      heard = true;
      const now = performance.now();
      tokens = Math.min(2 * config.perSecond, tokens + ((now - last) / 1000) * config.perSecond);
      last = now;
      if (tokens < 1) {
        dropped += 1;
        return;
      }
      tokens -= 1;
      if (larger(event.data, config.maxChars)) {
        parent.postMessage(
          { namespace: config.namespace, type: "too_large", limit: config.maxChars, shell: config.key },
          "*",
        );
        return;
      }
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

/**
 * Whether a message is larger than `limit` characters as JSON text, counted on the clone the
 * shell holds (the surfaces' process pays for that clone, never the notebook page). The count
 * never exceeds the JSON text's length (each value at least 1 character, a string its quotes
 * and length, a member its quoted key and colon, an array a comma per item), so no message the
 * page would accept is refused here; and every step adds to it, so the walk stops after about
 * `limit` steps whatever the surface sent (a sparse array counts as long as it says, an object
 * seen twice once). Runs in the shell, passed to shellRelay as text: self-contained.
 * @param {unknown} message
 * @param {number} limit
 */
export function exceeds(message, limit) {
  let size = 0;
  /** @type {unknown[]} */
  const stack = [message];
  const seen = new Set();
  while (stack.length > 0) {
    const value = stack.pop();
    size += 1;
    if (typeof value === "string") size += value.length + 1;
    if (typeof value === "object" && value !== null && !seen.has(value)) {
      seen.add(value);
      size += 1;
      if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) {
        size += value.byteLength;
      } else if (Array.isArray(value)) {
        size += value.length;
        for (let i = 0; i < value.length && size <= limit; i++) stack.push(value[i]);
      } else if (value instanceof Map || value instanceof Set) {
        for (const entry of value) {
          stack.push(entry);
          size += 1;
          if (size > limit) break;
        }
      } else {
        const object = /** @type {Record<string, unknown>} */ (value);
        for (const key in object) {
          stack.push(object[key]);
          size += key.length + 3;
          if (size > limit) break;
        }
      }
    }
    if (size > limit) return true;
  }
  return false;
}
