// The browser's check of the one message a surface may send upward (S4, U7, U9).
//
// Twin of lineup_jupyter/protocol/_surface.py: same order of checks, same codes, rules and
// JSON paths, so the browser refuses exactly what the kernel would; the kernel checks again
// because the browser is not a place to trust. Golden cases: tests/fixtures/surface_messages.json.
// The input is what postMessage delivered: a structured clone, which can hold things JSON
// cannot (Date, Map, undefined, BigInt, cycles, shared references); those are refused too.

import {
  EVENT_NAME_PATTERN,
  MAX_EVENT_DATA_BYTES,
  MAX_JSON_DEPTH,
  RULES,
  SURFACE_NAMESPACE,
} from "./protocol.generated.js";

/**
 * @typedef {{ [key: string]: unknown }} JsonObject
 * @typedef {{ ok: true, event: string, data: JsonObject }} SurfaceMessageOk
 * @typedef {{ ok: false, code: string, rule: keyof typeof RULES, path: string, message: string }} SurfaceMessageRefused
 * @typedef {SurfaceMessageOk | SurfaceMessageRefused} SurfaceMessageVerdict
 */

const KEYS = new Set(["namespace", "type", "event", "data"]);
// Python's str.isidentifier(), which _surface.py uses to decide how to name an extra key.
const IDENTIFIER = /^[\p{XID_Start}_]\p{XID_Continue}*$/u;
// _json._PLAIN_KEY: keys written as $.key; every other key is written $["key"].
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/u;
// With the u flag a lone surrogate is its own code point, so this finds exactly those.
const LONE_SURROGATE = /\p{Surrogate}/u;
const encoder = new TextEncoder();

/**
 * @param {string} code
 * @param {keyof typeof RULES} rule
 * @param {string} path
 * @param {string} message
 * @returns {SurfaceMessageRefused}
 */
function refuse(code, rule, path, message) {
  return { ok: false, code, rule, path, message: `${message} ${RULES[rule]}` };
}

/**
 * An object literal or JSON.parse result: not an array, not a class instance (Date, Map...).
 * @param {unknown} value
 * @returns {value is JsonObject}
 */
export function isPlainObject(value) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Bytes of UTF-8 in JSON.stringify(value): the unit of every size limit (U9).
 * @param {unknown} value
 * @returns {number}
 */
export function jsonByteLength(value) {
  return encoder.encode(JSON.stringify(value)).length;
}

/**
 * The JSON path of a member, written as _json._member_path writes it (lengths in code points).
 * @param {string} path
 * @param {string} key
 * @returns {string}
 */
export function memberPath(path, key) {
  const chars = [...key];
  if (chars.length <= 64 && PLAIN_KEY.test(key)) return `${path}.${key}`;
  const shown = chars.length <= 64 ? key : `${chars.slice(0, 61).join("")}...`;
  return `${path}[${JSON.stringify(shown)}]`;
}

/** @param {unknown} value */
function kind_of(value) {
  if (typeof value !== "object" || value === null) return typeof value;
  return Object.prototype.toString.call(value).slice(8, -1);
}

/**
 * The first place where `root` is not exactly a JSON value (H2), or null.
 * Visits in the order of _json._walk (a stack: last member first, a container before its
 * members) so that a message with several faults is refused at the same path on both sides.
 * @param {unknown} root
 * @param {string} root_path
 * @returns {SurfaceMessageRefused | null}
 */
export function checkJsonValue(root, root_path) {
  /** @type {Array<[unknown, string, number]>} */
  const stack = [[root, root_path, 0]];
  // A structured clone may share or loop objects; JSON cannot, and walking them would not end.
  const seen = new Set();
  while (stack.length > 0) {
    const [value, path, depth] = /** @type {[unknown, string, number]} */ (stack.pop());
    if (typeof value === "string") {
      if (LONE_SURROGATE.test(value)) {
        return refuse(
          "invalid_json",
          "H2",
          path,
          "the string contains a lone surrogate, which is not valid Unicode text.",
        );
      }
      continue;
    }
    const is_array = Array.isArray(value);
    if (is_array || isPlainObject(value)) {
      if (depth >= MAX_JSON_DEPTH) {
        return refuse("invalid_json", "H2", path, `the value is nested more than ${MAX_JSON_DEPTH} levels deep.`);
      }
      if (seen.has(value)) {
        return refuse("invalid", "H2", path, "the same object appears twice; JSON has no references.");
      }
      seen.add(value);
      if (is_array) {
        const items = /** @type {unknown[]} */ (value);
        for (let i = 0; i < items.length; i++) stack.push([items[i], `${path}[${i}]`, depth + 1]);
        continue;
      }
      const object = /** @type {JsonObject} */ (value);
      for (const key of Object.keys(object)) {
        if (key === "__proto__") {
          return refuse("invalid", "H2", path, "the key '__proto__' is refused: it can rewrite an object's prototype.");
        }
        stack.push([key, path, depth + 1]);
        stack.push([object[key], memberPath(path, key), depth + 1]);
      }
      continue;
    }
    if (value === null || typeof value === "boolean") continue;
    if (typeof value === "number") {
      if (!Number.isFinite(value)) {
        return refuse("invalid_json", "H2", path, `${value} is not a finite JSON number.`);
      }
      continue;
    }
    return refuse("invalid", "H2", path, `a ${kind_of(value)} is not a JSON value.`);
  }
  return null;
}

/**
 * Check one upward surface message (S4, U7, U9), as _surface.validate_surface_message does.
 * @param {unknown} message
 * @returns {SurfaceMessageVerdict}
 */
export function validateSurfaceMessage(message) {
  if (!isPlainObject(message)) {
    return refuse("invalid", "U7", "$", "a surface message is a JSON object.");
  }
  const extra = Object.keys(message)
    .filter((key) => !KEYS.has(key))
    .sort(by_code_point);
  if (extra.length > 0) {
    const key = extra[0];
    return refuse(
      "invalid",
      "U7",
      IDENTIFIER.test(key) ? `$.${key}` : "$",
      `${JSON.stringify(key)} is not part of a surface message.`,
    );
  }
  const own = (/** @type {string} */ key) => (Object.hasOwn(message, key) ? message[key] : undefined);
  if (own("namespace") !== SURFACE_NAMESPACE) {
    return refuse("invalid", "U7", "$.namespace", `the namespace must be "${SURFACE_NAMESPACE}".`);
  }
  if (own("type") !== "event") {
    return refuse("invalid", "U7", "$.type", "the only upward type is 'event'.");
  }
  const event = own("event");
  if (typeof event !== "string" || !EVENT_NAME_PATTERN.test(event)) {
    return refuse("invalid", "U9", "$.event", `the event name ${shown(event)} does not have the required form.`);
  }
  const data = own("data");
  if (!isPlainObject(data)) {
    return refuse("invalid", "U9", "$.data", "data must be a JSON object.");
  }
  const refused = checkJsonValue(data, "$.data");
  if (refused !== null) return refused;
  const bytes = jsonByteLength(data);
  if (bytes >= MAX_EVENT_DATA_BYTES) {
    return refuse("too_large", "U9", "$.data", `the data is ${bytes} bytes; it must be under ${MAX_EVENT_DATA_BYTES}.`);
  }
  return { ok: true, event, data };
}

/** Python's sorted(): by code point, where JS's default sort compares UTF-16 code units.
 * @param {string} a
 * @param {string} b
 */
function by_code_point(a, b) {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const diff = /** @type {number} */ (x[i].codePointAt(0)) - /** @type {number} */ (y[i].codePointAt(0));
    if (diff !== 0) return diff;
  }
  return x.length - y.length;
}

/** @param {unknown} value */
function shown(value) {
  if (typeof value !== "string") return kind_of(value);
  return JSON.stringify(value.length <= 80 ? value : `${value.slice(0, 77)}...`);
}
