// Where a surface's script fails to parse (issue 24): a surface whose one script (bridge and
// bundle js) has a syntax error never runs, so nothing inside it can say why; the page finds
// the message, line and column itself, without running the script.
//
// How: the same text, with "\n@" appended, as a classic worker's script. A worker reports a
// script's syntax error on the Worker object (an ErrorEvent with message, lineno, colno).
// Nothing of it ever runs: no JavaScript program can end with a lone "@" (a decorator needs a
// class after it, and inside a string, template, comment or regex the text is unterminated),
// so the whole script fails to parse, at the bundle's own first error if it has one, else at
// the appended line. The worker is ended at once either way.

/** Appended to the script: makes sure it never parses, so never runs. */
export const NEVER_PARSES = "\n@";
/** How long the browser may take to report (a loaded page parses a large bundle slowly). */
export const CHECK_TIMEOUT_MS = 5000;

/**
 * @typedef {{ message: string, line: number, column: number }} SyntaxProblem
 * @typedef {{ addEventListener(type: "error", listener: (event: ErrorEvent) => void): void,
 *   terminate(): void }} WorkerLike
 */

/**
 * The first syntax error of the bundle's js in `script` (which starts it at line `jsLine`), or
 * null when it has none (the script parses up to the appended line) or the browser did not say.
 * @param {string} script
 * @param {number} jsLine
 * @param {(url: string) => WorkerLike} [makeWorker]
 * @returns {Promise<SyntaxProblem | null>}
 */
export function findSyntaxError(script, jsLine, makeWorker = (url) => new Worker(url)) {
  const lastLine = script.split("\n").length;
  const url = URL.createObjectURL(new Blob([script + NEVER_PARSES], { type: "text/javascript" }));
  return new Promise((resolve) => {
    /** @type {WorkerLike | null} */
    let worker = null;
    /** @param {SyntaxProblem | null} found */
    const done = (found) => {
      clearTimeout(timer);
      worker?.terminate();
      URL.revokeObjectURL(url);
      resolve(found);
    };
    const timer = setTimeout(() => done(null), CHECK_TIMEOUT_MS);
    try {
      worker = makeWorker(url);
    } catch {
      done(null); // no workers here: the old sentence stands
      return;
    }
    worker.addEventListener("error", (event) => {
      event.preventDefault?.(); // not also in the page's console as an uncaught error
      const line = Number(event.lineno);
      if (!Number.isFinite(line) || line < jsLine || line > lastLine) {
        done(null); // the appended line: the bundle's js parses
        return;
      }
      done({
        message: String(event.message ?? "").slice(0, 300),
        line: line - jsLine + 1,
        column: Number(event.colno) || 0,
      });
    });
  });
}
