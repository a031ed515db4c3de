// What a surface's card header says (issue 15): which surface this is and who is behind it, so
// two surfaces of the same app, or of two agents, are told apart at a glance.

/**
 * @param {{ instance_id: string, app: { id: string, version?: string, name?: string | null },
 *   owner?: string }} spec
 * @returns {{ title: string, detail: string, tooltip: string }}
 */
export function surfaceHeading(spec) {
  const inline = spec.app.id === "local.notebook.surface"; // agent.open's default: no app named
  const title = spec.app.name || (inline ? spec.instance_id : spec.app.id);
  const parts = [];
  if (title !== spec.instance_id) parts.push(spec.instance_id);
  if (spec.owner) parts.push(`agent ${spec.owner}`);
  const tooltip = `${spec.app.id} ${spec.app.version ?? ""}`.trim();
  return { title, detail: parts.join(" · "), tooltip: `${tooltip} · ${spec.instance_id}` };
}
