// Preload (`node --import ./offline.mjs server.js`) that keeps an MCP example server on this
// machine: every `listen` binds 127.0.0.1 (the examples listen on all interfaces unless told
// otherwise), and a `fetch` or socket to anywhere but loopback fails at once instead of
// waiting on a network the tests must not use (CDNs, map tiles, wikipedia, soundfonts).

import net from "node:net";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost", "[::1]"]);

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback]): put our host in place of any other
    const rest = args.slice(1);
    if (typeof rest[0] === "string") rest.shift();
    return listen.call(this, Number(first), "127.0.0.1", ...rest);
  }
  if (first && typeof first === "object" && !("path" in first)) {
    return listen.call(this, { ...first, host: "127.0.0.1" }, ...args.slice(1));
  }
  if (first === undefined || typeof first === "function") {
    return listen.call(this, 0, "127.0.0.1", ...args);
  }
  return listen.apply(this, args);
};

const offline = (/** @type {string} */ where) =>
  new TypeError(`offline: ${where} is not loopback (tests/mcp_servers/offline.mjs)`);

const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  if (!LOOPBACK.has(url.hostname)) throw offline(url.host);
  return realFetch(input, init);
};

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const options = args[0];
  const host =
    options && typeof options === "object" ? (options.path ? "localhost" : (options.host ?? "localhost")) : (typeof args[1] === "string" ? args[1] : "localhost");
  if (!LOOPBACK.has(host)) {
    process.nextTick(() => this.destroy(offline(host)));
    return this;
  }
  return connect.apply(this, args);
};
