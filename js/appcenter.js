// The anywidget view of the app center (`host.apps` in a cell): a table of the installed apps
// drawn from the kernel's synced traits, with buttons that ask the kernel to act. The registry
// in the kernel is the truth; this view never changes anything by itself.
//
// Synced:      apps [{id, name, version, enabled, previous, versions, surfaces, source}],
//              trust {mode, allowed, keys}, verification {app_id: [problem, ...]},
//              available [{id, name}]  (shipped apps not installed)
// Messages:    view_protocol.js AppCenterViewMessage (enable, disable, rollback, remove,
//              install, verify, refresh) and AppCenterKernelMessage (a notice: an action the
//              kernel refused, said in a sentence).

import { guardDecision } from "./decision_input.js";
import { ACCEPT, button, element, STYLED } from "./dom.js";
import { KERNEL_LINK_STYLE, KernelLine, viewSignal, watchKernel } from "./kernel_link.js";
import { trustText } from "./trust.js";

/**
 * @typedef {{ id: string, name: string, version: string, enabled: boolean,
 *   previous: string | null, versions: string[], surfaces: string[], source: string }} AppRow
 * @typedef {import("./trust.js").TrustSummary} TrustSummary
 * @typedef {import("./view_protocol.js").Model<import("./view_protocol.js").AppCenterViewMessage>} Model
 */

const STYLE = `
.lineup-apps { font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px; color: var(--jp-ui-font-color1, #222); }
.lineup-apps-bar { display: flex; align-items: center; gap: 8px; margin-bottom: 6px; flex-wrap: wrap; }
.lineup-apps-trust { font-size: 12px; color: var(--jp-ui-font-color2, #666); }
.lineup-apps-trust[data-mode="strict"] { color: var(--jp-success-color1, #2e7d32); }
.lineup-apps table { border-collapse: collapse; width: 100%; }
.lineup-apps th, .lineup-apps td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--jp-border-color2, #ddd); vertical-align: top; }
.lineup-apps th { font-weight: 600; color: var(--jp-ui-font-color2, #666); }
.lineup-apps-id { font-family: var(--jp-code-font-family, monospace); font-size: 12px; color: var(--jp-ui-font-color2, #666); }
.lineup-apps-bad { color: var(--jp-error-color1, #c62828); }
.lineup-apps-good { color: var(--jp-success-color1, #2e7d32); }
.lineup-apps-notice { color: var(--jp-error-color1, #c62828); }
.lineup-apps button { margin-right: 4px; }
.lineup-apps td button:not([data-armed]) { opacity: 0.6; }
.lineup-apps button:focus-visible { outline: 2px solid var(--jp-brand-color1, #1976d2); }
`;

const REMOVE_CONFIRM_MS = 5000;

/** The installed versions above the current one (after a rollback), oldest first: `versions`
 * comes sorted by SemVer. @param {AppRow} app */
export function newerVersions(app) {
  const at = app.versions.indexOf(app.version);
  return at < 0 ? [] : app.versions.slice(at + 1);
}

/** @param {{ model: Model, el: HTMLElement, signal?: AbortSignal }} context */
function render({ model, el, signal }) {
  const stop = viewSignal(signal);
  const style = document.createElement("style");
  style.textContent = STYLE + KERNEL_LINK_STYLE;
  const root = element("div", "lineup-apps");
  const bar = element("div", "lineup-apps-bar");
  const trust = element("span", "lineup-apps-trust");
  const verify = button(`lineup-apps-verify ${STYLED}`, "Verify all");
  verify.title = "Re-hash every cached bundle of every installed version";
  const refresh = button(`lineup-apps-refresh ${STYLED}`, "Refresh");
  refresh.title = "Read the registry again (another kernel or the CLI may have changed it)";
  const notice = element("div", "lineup-apps-notice");
  notice.setAttribute("role", "alert");
  bar.append(trust, verify, refresh);
  const table = element("table", "");
  root.append(bar, notice, table);
  el.append(style, root);
  const line = new KernelLine(root, stop.signal);
  watchKernel(model, (gone) => line.set(gone), stop.signal);

  const send = (/** @type {import("./view_protocol.js").AppCenterViewMessage} */ content) => {
    notice.textContent = "";
    if (line.gone) {
      line.refuse();
      return;
    }
    try {
      model.send(content);
    } catch (error) {
      notice.textContent = "The kernel is not reachable: run the cell again to reconnect.";
      console.warn("[lineup] the kernel is not reachable:", error);
    }
  };
  verify.addEventListener("click", () => send({ kind: "verify" }));
  // What installs, enables, rolls back or removes takes only a click the user meant
  // (js/decision_input.js): a row redrawn under the pointer takes none.
  const guard = (/** @type {HTMLElement} */ node) => {
    guardDecision(node, {
      say: (text) => {
        notice.textContent = text;
      },
    });
    return node;
  };
  refresh.addEventListener("click", () => send({ kind: "refresh" }));

  /**
   * @param {string} label @param {import("./view_protocol.js").AppAction["kind"]} kind
   * @param {AppRow} app @param {string} title
   */
  const action = (label, kind, app, title) => {
    const node = button(`lineup-apps-${kind} ${STYLED}`, label);
    node.title = title;
    node.setAttribute("aria-label", `${label} ${app.name}`);
    node.addEventListener("click", () => send({ kind, app_id: app.id }));
    return guard(node);
  };

  /** Remove cannot be undone: the first click asks, a second within a few seconds removes.
   * @param {AppRow} app */
  const removeButton = (app) => {
    const node = button(`lineup-apps-remove ${STYLED}`, "Remove");
    node.setAttribute("aria-label", `Remove ${app.name}`);
    node.title = "Uninstall every version (cannot be undone)";
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let asking;
    node.addEventListener("click", () => {
      if (asking === undefined) {
        node.textContent = `Remove ${app.name} for good?`;
        asking = setTimeout(() => {
          asking = undefined;
          node.textContent = "Remove";
        }, REMOVE_CONFIRM_MS);
        return;
      }
      clearTimeout(asking);
      send({ kind: "remove", app_id: app.id });
    });
    return guard(node);
  };

  const draw = () => {
    const summary = /** @type {TrustSummary | undefined} */ (model.get("trust"));
    trust.textContent = trustText(summary);
    trust.dataset.mode = summary?.mode ?? "dev";
    const apps = /** @type {AppRow[]} */ (model.get("apps") ?? []);
    const verification = /** @type {Record<string, string[]>} */ (model.get("verification") ?? {});
    const head = element("tr", "");
    for (const name of ["App", "Version", "State", "Verified", ""]) head.append(element("th", "", name));
    const rows = [head];
    for (const app of apps) {
      const row = element("tr", "");
      row.dataset.appId = app.id;
      const name = element("td", "");
      name.append(element("div", "", app.name), element("div", "lineup-apps-id", app.id));
      name.title = `surfaces: ${app.surfaces.join(", ")}\nfrom: ${app.source}`;
      const version = element("td", "", app.version);
      if (app.versions.length > 1) version.title = `installed: ${app.versions.join(", ")}`;
      const newer = newerVersions(app);
      if (newer.length) {
        // After a rollback the newer version is still installed: say so, and how to return.
        version.append(element("div", "lineup-apps-id", `newer installed: ${newer.join(", ")} (host.apps.upgrade)`));
      }
      const state = element("td", app.enabled ? "lineup-apps-good" : "", app.enabled ? "enabled" : "disabled");
      const problems = verification[app.id];
      const verified = element(
        "td",
        problems === undefined ? "" : problems.length ? "lineup-apps-bad" : "lineup-apps-good",
        problems === undefined ? "not checked" : problems.length ? problems.join("\n") : "ok",
      );
      verified.style.whiteSpace = "pre-wrap";
      const actions = element("td", "");
      actions.append(
        app.enabled
          ? action("Disable", "disable", app, "Withdraw it: its surfaces close, agents are told")
          : action("Enable", "enable", app, "Let agents see and open it"),
      );
      if (app.previous) {
        actions.append(action(`Roll back to ${app.previous}`, "rollback", app, `Make ${app.previous} current again`));
      }
      actions.append(removeButton(app));
      row.append(name, version, state, verified, actions);
      rows.push(row);
    }
    const available = /** @type {{ id: string, name: string }[]} */ (model.get("available") ?? []);
    for (const shipped of available) {
      const row = element("tr", "lineup-apps-available");
      row.dataset.appId = shipped.id;
      const name = element("td", "");
      name.append(element("div", "", shipped.name), element("div", "lineup-apps-id", shipped.id));
      const install = button(`lineup-apps-install ${ACCEPT}`, "Install");
      install.setAttribute("aria-label", `Install ${shipped.id}`);
      install.title = "Install this app shipped with lineup-jupyter";
      install.addEventListener("click", () => send({ kind: "install", app_id: shipped.id }));
      guard(install);
      const cell = element("td", "");
      cell.append(install);
      row.append(name, element("td", "", ""), element("td", "", "not installed"), element("td", "", ""), cell);
      rows.push(row);
    }
    if (!apps.length && !available.length) {
      const empty = element("td", "", "No app is installed. host.apps.install(...) or `lineup app install` adds one.");
      empty.setAttribute("colspan", "5");
      const row = element("tr", "");
      row.append(empty);
      rows.push(row);
    }
    table.replaceChildren(...rows);
  };

  /** @param {any} content */
  const onCustom = (content) => {
    if (content?.kind === "notice") notice.textContent = String(content.text);
  };
  model.on("change:apps", draw);
  model.on("change:trust", draw);
  model.on("change:verification", draw);
  model.on("change:available", draw);
  model.on("msg:custom", onCustom);
  draw();

  const cleanup = () => {
    stop.abort();
    model.off("change:apps", draw);
    model.off("change:trust", draw);
    model.off("change:verification", draw);
    model.off("change:available", draw);
    model.off("msg:custom", onCustom);
    style.remove();
    root.remove();
  };
  signal?.addEventListener("abort", cleanup);
  return cleanup;
}

export default { render };
