// A saved notebook keeps the picture of its lineup views (issue 24, "Reopened notebooks";
// docs/architecture.md "When the kernel is gone").
//
// JupyterLab saves the widgets' state into the notebook only when the user turned on the
// widget manager's `saveState` setting (off by default). Without it a notebook reopened with
// a new kernel shows "Error displaying widget: model not found" where a lineup view was. So,
// when the notebook is saved, a view writes the state of the page's live lineup models (the
// host view, the inspector, the waiting lines: `_anywidget_id` names them) into the notebook's
// widget-state metadata, where the manager restores models from on open; a restored view then
// draws the saved picture, read-only, and says so (kernel_link.js "unsynced"). With
// `saveState` on, the manager already saves every widget: nothing is added.

const WIDGET_STATE = "application/vnd.jupyter.widget-state+json";
/** The lineup widgets whose picture a reopened notebook draws (widgets/_widget.py). */
export const KEPT = new Set([
  "lineup_jupyter.widgets._widget.HostWidget",
  "lineup_jupyter.widgets._widget.InspectorWidget",
  "lineup_jupyter.widgets._widget.WaitingWidget",
]);

/**
 * The lineup models' entries of a manager's state (`get_state_sync`) with the models they
 * refer to (`IPY_MODEL_<id>`: each DOM widget's layout, which the manager restores first), or
 * null when none is live (a kernel gone: what the notebook kept stays as it is).
 * @param {{ version_major?: number, version_minor?: number, state?: Record<string, any> }} full
 */
export function lineupState(full) {
  const all = full.state ?? {};
  /** @type {Record<string, any>} */
  const state = {};
  /** @param {string} id */
  const keep = (id) => {
    if (id in state || !(id in all)) return;
    state[id] = all[id];
    for (const [, ref] of JSON.stringify(all[id].state ?? {}).matchAll(/"IPY_MODEL_([^"]+)"/g)) keep(ref);
  };
  for (const [id, entry] of Object.entries(all)) {
    if (KEPT.has(String(entry?.state?._anywidget_id))) keep(id);
  }
  if (Object.keys(state).length === 0) return null;
  return { version_major: full.version_major, version_minor: full.version_minor, state };
}

/**
 * While `signal` lives, each save of the notebook that holds `model`'s view keeps the lineup
 * models' state in it (nothing where the manager has no notebook: Voilà, another host).
 * @param {{ widget_manager?: any }} model @param {AbortSignal} signal
 */
export function keepInNotebook(model, signal) {
  const manager = model.widget_manager;
  const context = manager?.context;
  const saving = context?.saveState;
  if (!saving || typeof saving.connect !== "function" || typeof manager.get_state_sync !== "function") return;
  const onSave = (/** @type {unknown} */ _sender, /** @type {string} */ phase) => {
    if (phase !== "started" || manager._settings?.saveState === true) return;
    const kept = lineupState(manager.get_state_sync({ drop_defaults: true }));
    if (kept) context.model.setMetadata("widgets", { [WIDGET_STATE]: kept });
  };
  saving.connect(onSave);
  signal.addEventListener("abort", () => saving.disconnect(onSave));
}
