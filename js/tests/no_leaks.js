// Loaded before every test file (`node --test --import`): after a file's last test, nothing of
// ours may still be running. A timer or socket left behind keeps the process alive long after
// the tests passed (an SDK App's 60 s request timer once made a 0.35 s file take 60 s), so it
// fails the file here, naming what was left, instead of costing time silently.
import assert from "node:assert/strict";
import { after } from "node:test";

/** What a test can start and forget and that outlives it; node's own file reads (CloseReq, FSReqCallback) and setImmediate callbacks settle alone. */
const OURS = new Set(["Timeout", "TCPWrap", "TCPServerWrap", "UDPWrap", "ProcessWrap"]);

after(() => {
  const left = process.getActiveResourcesInfo().filter((kind) => OURS.has(kind));
  assert.deepEqual(left, [], `a test left these running: ${left.join(", ")}`);
});
