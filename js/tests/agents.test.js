// The host view's line for an agent outside the kernel (H42).
import assert from "node:assert/strict";
import { test } from "node:test";

import { agentText, troubled } from "../agents.js";

test("H42: a named agent, how it is connected, and its status", () => {
  const view = { agent_id: "agent_greeter", via: "process 'python g.py'", status: "running", problem: null };
  assert.equal(agentText(view), "Agent agent_greeter (process 'python g.py'): running");
  assert.equal(troubled(view), false);
});

test("H42: an agent not named yet, and one that ended badly or lost its connection", () => {
  const unnamed = { agent_id: null, via: "WebSocket from 127.0.0.1:5000", status: "connected", problem: null };
  assert.match(agentText(unnamed), /^An agent not named yet \(WebSocket from/);
  assert.equal(troubled({ ...unnamed, status: "exited", problem: "exited with code 3" }), true);
  assert.equal(troubled({ ...unnamed, status: "disconnected" }), true);
  assert.equal(troubled({ ...unnamed, status: "exited", problem: null }), false); // code 0
});
