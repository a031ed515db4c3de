// Where a surface's js does not parse (syntax_check.js): the page's check never runs the script.
import assert from "node:assert/strict";
import { test } from "node:test";

import { findSyntaxError, NEVER_PARSES } from "../syntax_check.js";

test("no program ends with the appended text: whatever the js, the check's script never parses", () => {
  const prefixes = [
    "",
    "f(",
    "f(1,",
    "[",
    "{",
    "class A {",
    "class A { m() {",
    "`unterminated $" + "{x}",
    "'abc\\",
    "/* open comment",
    "// a line comment",
    "x = /re",
    "a ? b :",
    "async function f() { await",
    "let x = 1;",
    "function f() {}",
    "label:",
    "x\n<!--",
  ];
  for (const prefix of prefixes) {
    assert.throws(() => new Function(prefix + NEVER_PARSES), SyntaxError, JSON.stringify(prefix));
  }
});

/** A worker that reports one error event. @param {Partial<ErrorEvent>} event */
const reporting = (event) => {
  /** @type {string[]} */
  const ended = [];
  const make = () => ({
    /** @param {string} _type @param {(event: any) => void} listener */
    addEventListener(_type, listener) {
      queueMicrotask(() => listener({ preventDefault() {}, ...event }));
    },
    terminate() {
      ended.push("terminated");
    },
  });
  return { make, ended };
};

test("the error's line is counted in the bundle's js; the worker is ended", async () => {
  const script = "bridge line 1\nbridge line 2\nlet a = 1;\nconst x = ;";
  const { make, ended } = reporting({ message: "SyntaxError: Unexpected token ';'", lineno: 4, colno: 11 });
  const found = await findSyntaxError(script, 3, make);
  assert.deepEqual(found, { message: "SyntaxError: Unexpected token ';'", line: 2, column: 11 });
  assert.deepEqual(ended, ["terminated"]);
});

test("an error on the appended line means the js parses: no finding", async () => {
  const script = "bridge\nlet a = 1;";
  const { make } = reporting({ message: "SyntaxError: Invalid or unexpected token", lineno: 3, colno: 1 });
  assert.equal(await findSyntaxError(script, 2, make), null);
});

test("no workers: no finding, nothing thrown", async () => {
  const found = await findSyntaxError("x", 1, () => {
    throw new Error("no Worker here");
  });
  assert.equal(found, null);
});
