// The anywidget view of the inspector (`host.inspector` in a cell): the conversation's
// history as the kernel keeps it (every envelope both ways, refusals with their rule and
// path, CSP violations and floods reported by surfaces), the capability calls, the inventory
// revisions and each surface's states by revision. It only reads; agent strings go in as
// text (dom.js), and JSON is drawn only when a row is opened.
//
// Messages: view_protocol.js InspectorViewMessage (sync, states, export) and
// InspectorKernelMessage (reset, records after a seq, states, export with the JSON lines as
// buffers[0]); the summary's entries are lineup_jupyter/host/_inspector.py's.

import { button, element } from "./dom.js";
import { arrow, clock, gist, matches, plural, problem, RecordLog } from "./inspector_model.js";
import { KERNEL_LINK_STYLE, KernelLine, SYNC_TIMEOUT_MS, viewSignal, watchKernel } from "./kernel_link.js";
import { keepInNotebook } from "./notebook_state.js";

/**
 * @typedef {import("./inspector_model.js").InspectorRecord} InspectorRecord
 * @typedef {{ calls: any[], inventories: any[], surfaces: any[] }} Summary
 * @typedef {import("./view_protocol.js").Model<import("./view_protocol.js").InspectorViewMessage>} Model
 */

const TABS = /** @type {const} */ (["Messages", "Calls", "Inventory", "Surfaces"]);

const STYLE = `
.lineup-inspector { font-family: var(--jp-ui-font-family, sans-serif); font-size: 12px; color: var(--jp-ui-font-color1, #222); }
.lineup-inspector-bar { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; margin-bottom: 6px; }
.lineup-inspector-tab { font: inherit; color: inherit; background: transparent; border: none; border-bottom: 2px solid transparent; padding: 3px 8px; cursor: pointer; }
.lineup-inspector-tab:hover { background: var(--jp-layout-color2, #eee); }
.lineup-inspector-bar [aria-selected="true"] { font-weight: 600; border-bottom: 2px solid var(--jp-brand-color1, #1976d2); }
.lineup-inspector select, .lineup-inspector-export { font: inherit; color: var(--jp-ui-font-color1, #222); background: var(--jp-layout-color1, #fff); border: 1px solid var(--jp-border-color1, #bdbdbd); border-radius: 2px; padding: 2px 6px; }
.lineup-inspector-export { cursor: pointer; }
.lineup-inspector-export:hover { background: var(--jp-layout-color2, #eee); }
.lineup-inspector-bar label { display: inline-flex; align-items: center; gap: 3px; }
.lineup-inspector-count { color: var(--jp-ui-font-color2, #666); margin-left: auto; }
.lineup-inspector-body { max-height: 420px; overflow: auto; border: 1px solid var(--jp-border-color2, #ddd); }
.lineup-inspector-row { border-bottom: 1px solid var(--jp-border-color2, #eee); padding: 2px 6px; }
.lineup-inspector-row summary { cursor: pointer; font-family: var(--jp-code-font-family, monospace); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.lineup-inspector-row[data-kind="refused"], .lineup-inspector-row[data-kind="handler_error"] { background: var(--jp-error-color3, #fdecea); }
.lineup-inspector-problem { display: block; padding-left: 14px; color: var(--jp-error-color1, #c62828); white-space: pre-wrap; font-family: var(--jp-code-font-family, monospace); }
.lineup-inspector pre { margin: 4px 0; white-space: pre-wrap; word-break: break-all; font-family: var(--jp-code-font-family, monospace); font-size: 11px; }
.lineup-inspector table { border-collapse: collapse; width: 100%; }
.lineup-inspector th, .lineup-inspector td { text-align: left; padding: 2px 6px; border-bottom: 1px solid var(--jp-border-color2, #eee); vertical-align: top; }
.lineup-inspector-empty { padding: 8px; color: var(--jp-ui-font-color2, #666); }
.lineup-inspector button:focus-visible, .lineup-inspector select:focus-visible { outline: 2px solid var(--jp-brand-color1, #1976d2); }
`;

/**
 * A row that shows `title` (and `note`, always visible) and draws `detail()` the first time
 * it is opened. @param {string} title @param {() => Node[]} detail @param {string | null} [note]
 */
function expandable(title, detail, note) {
  const row = /** @type {HTMLDetailsElement} */ (element("details", "lineup-inspector-row"));
  const summary = element("summary", "", title);
  if (note) summary.append(element("span", "lineup-inspector-problem", note));
  row.append(summary);
  row.addEventListener("toggle", () => {
    if (row.open && row.childElementCount === 1) row.append(...detail());
  });
  return row;
}

/** @param {unknown} value */
const json = (value) => element("pre", "", JSON.stringify(value, null, 2));

/** @param {HTMLElement} select @param {string} label @param {string[]} values @param {string} current */
function fillSelect(select, label, values, current) {
  const options = [element("option", "", label)];
  /** @type {HTMLOptionElement} */ (options[0]).value = "";
  for (const value of values) {
    const option = /** @type {HTMLOptionElement} */ (element("option", "", value));
    option.value = value;
    options.push(option);
  }
  select.replaceChildren(...options);
  /** @type {HTMLSelectElement} */ (select).value = values.includes(current) ? current : "";
}

/** @param {{ model: Model, el: HTMLElement, signal?: AbortSignal }} context */
function render({ model, el, signal }) {
  const stop = viewSignal(signal);
  const style = document.createElement("style");
  style.textContent = STYLE + KERNEL_LINK_STYLE;
  const root = element("div", "lineup-inspector");
  root.setAttribute("role", "region");
  root.setAttribute("aria-label", "LineUp inspector");
  const bar = element("div", "lineup-inspector-bar");
  bar.setAttribute("role", "tablist");
  /** @type {Record<string, HTMLButtonElement>} */
  const tabs = {};
  for (const name of TABS) {
    const tab = button("lineup-inspector-tab", name);
    tab.setAttribute("role", "tab");
    tab.addEventListener("click", () => show(name));
    tabs[name] = tab;
    bar.append(tab);
  }
  const typeFilter = element("select", "lineup-inspector-type");
  typeFilter.setAttribute("aria-label", "Filter by type");
  const instanceFilter = element("select", "lineup-inspector-instance");
  instanceFilter.setAttribute("aria-label", "Filter by surface instance");
  const problemsLabel = element("label", "", " problems only");
  const problemsOnly = /** @type {HTMLInputElement} */ (element("input", "lineup-inspector-problems"));
  problemsOnly.type = "checkbox";
  problemsLabel.prepend(problemsOnly);
  // Health checks (a watchdog's ping and its answer, every few seconds) are noise unless
  // asked for: hidden by default.
  const healthLabel = element("label", "", " health checks");
  healthLabel.title = "Show the watchdog's pings and their answers";
  const showHealth = /** @type {HTMLInputElement} */ (element("input", "lineup-inspector-health"));
  showHealth.type = "checkbox";
  healthLabel.prepend(showHealth);
  const exportButton = button("lineup-inspector-export", "Export JSON lines");
  exportButton.title = "Download every record the kernel keeps, whole, one JSON object a line";
  const count = element("span", "lineup-inspector-count");
  count.setAttribute("aria-live", "polite");
  bar.append(typeFilter, instanceFilter, problemsLabel, healthLabel, exportButton, count);
  const body = element("div", "lineup-inspector-body");
  body.setAttribute("role", "tabpanel");
  root.append(bar, body);
  el.append(style, root);
  // Reading what already arrived needs no kernel: the tabs and filters keep working without one.
  for (const local of [...Object.values(tabs), typeFilter, instanceFilter, problemsLabel, healthLabel]) {
    local.dataset.offlineOk = "";
  }
  const line = new KernelLine(root, stop.signal);
  let synced = false;
  watchKernel(model, (gone) => line.set(gone), stop.signal);
  keepInNotebook(model, stop.signal);
  // No kernel answers a view restored from a saved notebook: the history is the kernel's.
  const timer = setTimeout(() => {
    if (!synced && line.gone === null) line.set("unsynced");
  }, SYNC_TIMEOUT_MS);

  const log = new RecordLog(1000);
  let dropped = 0;
  /** @type {Summary} */
  let summary = { calls: [], inventories: [], surfaces: [] };
  /** @type {(typeof TABS)[number]} */
  let current = "Messages";
  /** @type {string | null} the surface whose states are shown */
  let openSurface = null;
  /** @type {{ instance_id: string, states: any[] } | null} */
  let states = null;

  const send = (/** @type {import("./view_protocol.js").InspectorViewMessage} */ content) => {
    if (line.gone) {
      line.refuse();
      return;
    }
    try {
      model.send(content);
    } catch (error) {
      count.textContent = "The kernel is not reachable: run the cell again to reconnect.";
      console.warn("[lineup] the kernel is not reachable:", error);
    }
  };

  const filter = () => ({
    type: /** @type {HTMLSelectElement} */ (typeFilter).value,
    instance_id: /** @type {HTMLSelectElement} */ (instanceFilter).value,
    problems_only: problemsOnly.checked,
    hide_health: !showHealth.checked,
  });

  /** @param {InspectorRecord} record */
  const messageRow = (record) => {
    const where = record.instance_id ? `  ${record.instance_id}` : "";
    const what = gist(record);
    const title = `#${record.seq} ${clock(record.time)}  ${arrow(record)}  ${record.type ?? "(no type)"}${what ? `  ${what}` : ""}${where}`;
    const detail = () => [json(record.envelope), ...(record.error ? [json(record.error)] : [])];
    const row = expandable(title, detail, problem(record));
    row.dataset.kind = record.kind;
    row.dataset.seq = String(record.seq);
    return row;
  };

  /** @param {string[]} heads @param {HTMLElement[]} rows @param {string} empty */
  const table = (heads, rows, empty) => {
    if (!rows.length) return [element("div", "lineup-inspector-empty", empty)];
    const head = element("tr", "");
    for (const name of heads) head.append(element("th", "", name));
    const node = element("table", "");
    node.append(head, ...rows);
    return [node];
  };

  /** @param {string[]} cells @param {unknown} [detail] */
  const tableRow = (cells, detail) => {
    const row = element("tr", "");
    for (const text of cells) row.append(element("td", "", text));
    if (detail !== undefined) {
      const cell = element("td", "");
      cell.append(expandable("JSON", () => [json(detail)]));
      row.append(cell);
    }
    return row;
  };

  const drawMessages = () => {
    fillSelect(typeFilter, "every type", log.values("type"), filter().type);
    fillSelect(instanceFilter, "every instance", log.values("instance_id"), filter().instance_id);
    const shown = log.matching(filter());
    body.replaceChildren(
      ...(shown.length ? shown.map(messageRow) : [element("div", "lineup-inspector-empty", "Nothing yet.")]),
    );
    const older = dropped ? ` (${dropped} older fell off the history)` : "";
    count.textContent = `${shown.length} of ${log.records.length} records${older}`;
  };

  const drawCalls = () => {
    const rows = summary.calls.map((call) =>
      tableRow(
        [
          call.call_id,
          call.capability ?? "?",
          call.agent ?? "?",
          call.refused ? `${call.status}: refused, ${call.refused.rule} ${call.refused.path}` : call.status,
          call.requested ? clock(call.requested) : "",
          call.answered ? clock(call.answered) : "",
          call.decided_by ?? "",
        ],
        call,
      ),
    );
    body.replaceChildren(
      ...table(
        ["call", "capability", "agent", "status", "asked", "answered", "decided by", ""],
        rows,
        "No capability call yet.",
      ),
    );
    count.textContent = plural(summary.calls.length, "call");
  };

  const drawInventory = () => {
    const rows = summary.inventories.map((sent) =>
      tableRow(
        [
          sent.revision,
          sent.to ?? "every agent",
          clock(sent.time),
          sent.applications.join(", ") || "none",
          sent.capabilities.join(", ") || "none",
        ],
        sent,
      ),
    );
    body.replaceChildren(
      ...table(["revision", "to", "sent", "applications", "capabilities", ""], rows, "No inventory sent yet."),
    );
    count.textContent = `${plural(summary.inventories.length, "inventory", "inventories")} sent`;
  };

  const drawSurfaces = () => {
    const rows = summary.surfaces.map((surface) => {
      const row = tableRow([
        surface.instance_id,
        surface.open ? `open (${surface.app})` : "closed",
        String(surface.revision),
        String(surface.revisions),
      ]);
      const cell = element("td", "");
      const show = button("lineup-inspector-states", "States");
      show.setAttribute("aria-label", `States of ${surface.instance_id}`);
      show.addEventListener("click", () => {
        openSurface = surface.instance_id;
        send({ kind: "states", instance_id: surface.instance_id });
      });
      cell.append(show);
      row.append(cell);
      return row;
    });
    const parts = table(["instance", "now", "revision", "states kept", ""], rows, "No surface yet.");
    if (states && states.instance_id === openSurface) {
      const heading = element("div", "lineup-inspector-empty", `States of ${states.instance_id}, by revision:`);
      const list = element("div", "lineup-inspector-state-list");
      for (const entry of states.states) {
        list.append(expandable(`revision ${entry.revision}  ${clock(entry.time)}`, () => [json(entry.state)]));
      }
      parts.push(heading, list);
    }
    body.replaceChildren(...parts);
    count.textContent = plural(summary.surfaces.length, "surface");
  };

  const draw = () => {
    for (const name of TABS) tabs[name].setAttribute("aria-selected", String(name === current));
    for (const node of [typeFilter, instanceFilter, problemsLabel]) node.hidden = current !== "Messages";
    ({ Messages: drawMessages, Calls: drawCalls, Inventory: drawInventory, Surfaces: drawSurfaces })[current]();
  };

  /** @param {(typeof TABS)[number]} name */
  function show(name) {
    current = name;
    draw();
  }

  /** @param {InspectorRecord[]} added */
  const appendMessages = (added) => {
    const wanted = filter();
    const known = new Set([...typeFilter.querySelectorAll("option")].map((o) => o.textContent));
    const knownIds = new Set([...instanceFilter.querySelectorAll("option")].map((o) => o.textContent));
    // A new type or instance changes the menus: redraw. Otherwise add rows at the end.
    if (added.some((r) => (r.type && !known.has(r.type)) || (r.instance_id && !knownIds.has(r.instance_id)))) {
      drawMessages();
      return;
    }
    body.querySelector(".lineup-inspector-empty")?.remove();
    body.append(...added.filter((record) => matches(record, wanted)).map(messageRow));
    const oldest = log.records[0]?.seq ?? 0; // rows of records that fell off the log go too
    for (const row of /** @type {HTMLElement[]} */ ([...body.children])) {
      if (Number(row.dataset.seq) >= oldest) break;
      row.remove();
    }
    const older = dropped ? ` (${dropped} older fell off the history)` : "";
    count.textContent = `${log.matching(wanted).length} of ${log.records.length} records${older}`;
  };

  /** @param {any} content @param {DataView<ArrayBuffer>[]} [buffers] */
  const onCustom = (content, buffers) => {
    if (content?.kind === "reset") {
      synced = true;
      if (line.gone === "unsynced") line.set(null);
      log.reset(content.records, content.size, content.health_size);
      dropped = content.dropped;
      summary = content.summary;
      draw();
    } else if (content?.kind === "records") {
      if (!log.append(content.after, content.records)) {
        send({ kind: "sync" }); // a message went missing: start again from the kernel's copy
        return;
      }
      dropped = content.dropped;
      summary = content.summary;
      if (current === "Messages") appendMessages(content.records);
      else {
        if (current === "Surfaces" && openSurface) send({ kind: "states", instance_id: openSurface });
        draw();
      }
    } else if (content?.kind === "states") {
      states = { instance_id: content.instance_id, states: content.states };
      if (current === "Surfaces") draw();
    } else if (content?.kind === "export" && buffers?.length) {
      const blob = new Blob([buffers[0]], { type: "application/x-ndjson" });
      const link = /** @type {HTMLAnchorElement} */ (element("a", ""));
      link.href = URL.createObjectURL(blob);
      link.download = String(content.filename);
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
      count.textContent = `${content.count} records exported`;
    }
  };

  for (const control of [typeFilter, instanceFilter, problemsOnly, showHealth]) {
    control.addEventListener("change", drawMessages);
  }
  exportButton.addEventListener("click", () => send({ kind: "export" }));
  model.on("msg:custom", onCustom);
  draw();
  send({ kind: "sync" }); // each view starts from the kernel's copy (a reload, a second view)

  const cleanup = () => {
    stop.abort();
    clearTimeout(timer);
    model.off("msg:custom", onCustom);
    style.remove();
    root.remove();
  };
  signal?.addEventListener("abort", cleanup);
  return cleanup;
}

export default { render };
