// What the user's failing handlers read as in the host view (docs/agents.md, "Handlers").
import assert from "node:assert/strict";
import { test } from "node:test";

import { problemTitle } from "../problems.js";

test("a problem reads as where it happened and what was raised", () => {
  const problem = {
    seq: 1,
    source: "handler",
    where: "agent 'a': on_go() for ui.event 'go'",
    message: "ZeroDivisionError: division by zero",
    traceback: "Traceback ...",
    agent_id: "a",
    instance_id: "w",
    at: "2026-12-03T19:40:00.000Z",
  };
  assert.equal(
    problemTitle(problem),
    "agent 'a': on_go() for ui.event 'go' raised ZeroDivisionError: division by zero",
  );
});

test("a surface's problem reads as where, then what, with how many times", () => {
  const problem = {
    seq: 2,
    source: "surface",
    where: "surface 'w' (agent 'a')",
    message: "TypeError: x is undefined",
    traceback: "",
    agent_id: "a",
    instance_id: "w",
    at: "",
    count: 3,
  };
  assert.equal(problemTitle(problem), "surface 'w' (agent 'a'): TypeError: x is undefined (3 times)");
});
