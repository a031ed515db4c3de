// How the host's bundle policy (H37, docs/apps.md) reads in the notebook: one sentence, shown
// by the host's view and the app center's view, so the user always knows which code may run.

/** @typedef {{ mode: string, allowed: number, keys: string[] }} TrustSummary */

/** @param {TrustSummary | undefined} trust @returns {string} */
export function trustText(trust) {
  if (trust?.mode !== "strict") {
    return "Dev mode: any inline bundle that passes the protocol's checks opens.";
  }
  const count = (/** @type {number} */ n, /** @type {string} */ what) => `${n} ${what}${n === 1 ? "" : "s"}`;
  return (
    "Strict mode: inline bundles open only if allowlisted or signed " +
    `(${count(trust.allowed, "allowlisted digest")}, ${count(trust.keys.length, "trusted key")}).`
  );
}
