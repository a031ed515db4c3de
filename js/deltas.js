// The kernel's feed (lineup_jupyter/widgets/_view_feed.py) applied to what a view shows: each change
// alone, numbered. The picture is the model's own `surfaces` and `components` lists, edited
// in place, so a notebook saved with its widget state keeps what the view last showed (the
// widget manager saves the model's attributes), and nothing goes back to the kernel.
//
// Two views of one model in a page share those lists and both get every message, so applying
// an op is idempotent: an op a list already has (its revision, its rev) changes nothing.
// An op that does not follow from what the list has means a message was lost: "gap", and
// the view asks for the whole picture again.

/**
 * @typedef {{ instance_id: string, generation: number, revision: number, state: object,
 *   [field: string]: any }} Spec
 * @typedef {{ component_id: string, kind: string, rev: number, order: number,
 *   [field: string]: any }} View
 * @typedef {{ surfaces: Spec[], components: View[] }} Picture
 * @typedef {{ surface: string } | { component: string } | { gap: string } | null} Applied
 */

/**
 * RFC 7396 JSON Merge Patch, as the kernel applies it (_surfaces.merge_patch): objects merge
 * key by key, null deletes, anything else replaces. The target is not changed: the result
 * shares what the patch left alone.
 * @param {any} target @param {any} patch @returns {any}
 */
export function mergePatch(target, patch) {
  if (patch === null || typeof patch !== "object" || Array.isArray(patch)) return patch;
  /** @type {Record<string, any>} */
  const result = target !== null && typeof target === "object" && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

/**
 * The merge patches that took each surface's state to the revision it has now, step by step
 * (one step per feed op: from `base` to `revision`), kept beside the model's list (never in
 * it: the list is saved with the notebook). A frame that holds one of those revisions gets
 * the patches after it instead of the whole state: a one-field patch of a 250 KiB state then
 * costs the page its own size, not a 250 KiB structured clone.
 * @typedef {{ base: number, revision: number, patches: object[] }} Step
 * @type {WeakMap<Spec, Step[]>}
 */
const chains = new WeakMap();

/** At most this many steps are kept; a frame further behind gets the whole state. */
const MAX_STEPS = 16;

/**
 * The patches that take `spec`'s state from revision `from` to its own, or undefined when
 * the view does not know them (then the whole state goes).
 * @param {Spec} spec @param {number} from @returns {object[] | undefined}
 */
export function patchesSince(spec, from) {
  const steps = chains.get(spec);
  if (!steps || steps.at(-1)?.revision !== spec.revision) return undefined;
  if (from === spec.revision) return [];
  const first = steps.findIndex((step) => step.base === from);
  if (first < 0) return undefined;
  return steps.slice(first).flatMap((step) => step.patches);
}

/** @template {{ [key: string]: any }} T @param {T[]} list @param {string} key @param {string} id */
function indexOf(list, key, id) {
  for (let i = list.length - 1; i >= 0; i--) if (list[i][key] === id) return i;
  return -1;
}

/**
 * Replace the content of `list` with `items`, keeping the list itself (the model's).
 * @template T @param {T[]} list @param {T[]} items
 */
export function replaceAll(list, items) {
  list.length = 0;
  for (const item of items) list.push(item);
}

/**
 * Apply one op of a `feed` message. Returns what to redraw, `{gap}` when the op does not
 * follow from the picture, or null for an op the view does not know (a newer kernel).
 * @param {Picture} picture @param {any} op @returns {Applied}
 */
export function applyOp(picture, op) {
  switch (op?.op) {
    case "open": {
      const spec = /** @type {Spec} */ (op.spec);
      const at = indexOf(picture.surfaces, "instance_id", spec.instance_id);
      const shown = at >= 0 ? picture.surfaces[at] : undefined;
      const newer =
        !shown ||
        shown.generation < spec.generation ||
        (shown.generation === spec.generation && shown.revision < spec.revision);
      if (newer && shown)
        picture.surfaces[at] = spec; // a replace keeps its place
      else if (newer) picture.surfaces.push(spec);
      return { surface: spec.instance_id };
    }
    case "close": {
      const at = indexOf(picture.surfaces, "instance_id", op.instance_id);
      if (at >= 0) picture.surfaces.splice(at, 1);
      return { surface: op.instance_id };
    }
    case "state":
    case "patch": {
      const shown = picture.surfaces[indexOf(picture.surfaces, "instance_id", op.instance_id)];
      if (!shown || shown.generation !== op.generation) {
        // a state of a frame already replaced is old news; any other is a message we missed
        return shown && shown.generation > op.generation ? null : { gap: `surface ${op.instance_id}` };
      }
      if (shown.revision >= op.revision) return { surface: op.instance_id }; // applied already
      if (op.op === "state") {
        shown.state = op.state;
        chains.delete(shown);
      } else {
        if (shown.revision !== op.base) return { gap: `surface ${op.instance_id}` };
        let state = shown.state;
        for (const patch of op.patches) state = mergePatch(state, patch);
        shown.state = state;
        const steps = chains.get(shown)?.filter((step) => step.revision <= op.base) ?? [];
        if (steps.at(-1) !== undefined && steps.at(-1)?.revision !== op.base) steps.length = 0;
        steps.push({ base: op.base, revision: op.revision, patches: op.patches });
        chains.set(shown, steps.slice(-MAX_STEPS));
      }
      shown.revision = op.revision;
      return { surface: op.instance_id };
    }
    case "component": {
      const view = /** @type {View} */ (op.view);
      const list = picture.components;
      const at = indexOf(list, "component_id", view.component_id);
      if (at >= 0 && list[at].rev >= view.rev) return { component: view.component_id };
      if (at >= 0 && list[at].order === view.order) {
        list[at] = view;
      } else {
        if (at >= 0) list.splice(at, 1);
        let place = list.length; // in the kernel's order (first shown first): nearly always last
        while (place > 0 && list[place - 1].order > view.order) place--;
        list.splice(place, 0, view);
      }
      return { component: view.component_id };
    }
    case "splice": {
      const shown = picture.components[indexOf(picture.components, "component_id", op.component_id)];
      if (shown && shown.rev >= op.rev) return { component: op.component_id };
      if (!shown || shown.rev !== op.rev - 1) return { gap: `component ${op.component_id}` };
      const old = String(shown[op.field] ?? "");
      shown[op.field] = old.slice(0, old.length - op.cut) + op.add;
      shown.rev = op.rev;
      return { component: op.component_id };
    }
    case "removed": {
      const at = indexOf(picture.components, "component_id", op.component_id);
      if (at >= 0) picture.components.splice(at, 1);
      return { component: op.component_id };
    }
    default:
      return null;
  }
}

/**
 * The numbering of the feed as one view sees it: a view takes a `feed` message only when it
 * directly follows the last one it took (or the last snapshot), and otherwise asks again.
 */
export class FeedSequence {
  constructor() {
    /** @type {number | null} the last message taken; null: waiting for a snapshot */
    this.seq = null;
  }

  /** @param {number} seq */
  snapshot(seq) {
    this.seq = seq;
  }

  /**
   * "take" the message, "skip" it (before the first snapshot, or already taken), or "gap":
   * one was lost, and until the next snapshot every message is skipped.
   * @param {number} seq @returns {"take" | "skip" | "gap"}
   */
  next(seq) {
    if (this.seq === null || seq <= this.seq) return "skip";
    if (seq !== this.seq + 1) {
      this.seq = null;
      return "gap";
    }
    this.seq = seq;
    return "take";
  }

  /** A message did not apply: wait for a snapshot. */
  lost() {
    this.seq = null;
  }
}
