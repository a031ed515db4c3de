// A surface's card header: a title, its instance id and the agent that owns it (issue 15).
import assert from "node:assert/strict";
import { test } from "node:test";

import { surfaceHeading } from "../surface_heading.js";

test("an inline surface without a name is titled by its instance, with its agent", () => {
  const spec = { instance_id: "weather.01", app: { id: "local.notebook.surface", version: "0.1.0" }, owner: "agent_a" };
  assert.deepEqual(surfaceHeading(spec), {
    title: "weather.01",
    detail: "agent agent_a",
    tooltip: "local.notebook.surface 0.1.0 · weather.01",
  });
});

test("a named app shows its name, then the instance and the agent", () => {
  const spec = {
    instance_id: "c1",
    app: { id: "com.lineup.svg-canvas", version: "1.0.0", name: "Canvas" },
    owner: "b",
  };
  assert.deepEqual(surfaceHeading(spec).title, "Canvas");
  assert.deepEqual(surfaceHeading(spec).detail, "c1 · agent b");
});

test("an app without a name falls back to its id", () => {
  const spec = { instance_id: "x", app: { id: "com.example.app" } };
  assert.deepEqual(surfaceHeading(spec), { title: "com.example.app", detail: "x", tooltip: "com.example.app · x" });
});
