// The agents outside the kernel as the host's view lists them (H42): one line each, its
// status, and the last thing that went wrong (an exit code and the end of its stderr), so a
// crash is seen where the surfaces are, not only in a log. Strings go in as text (dom.js).

import { element } from "./dom.js";

/**
 * @typedef {{ agent_id: string | null, via: string, status: string, problem: string | null }} AgentView
 * @typedef {import("./view_protocol.js").Model} Model
 */

/** The line for one agent. @param {AgentView} agent */
export function agentText(agent) {
  const who = agent.agent_id ? `Agent ${agent.agent_id}` : "An agent not named yet";
  return `${who} (${agent.via}): ${agent.status}`;
}

/** Whether the line should draw the eye: it ended badly or lost its connection. @param {AgentView} agent */
export function troubled(agent) {
  return agent.problem !== null || agent.status === "disconnected";
}

/** @param {{ model: Model, container: HTMLElement }} context */
export function mountAgents({ model, container }) {
  const draw = () => {
    const agents = /** @type {AgentView[]} */ (model.get("agents") ?? []);
    container.replaceChildren(
      ...agents.map((agent) => {
        const line = element("div", "lineup-agent", agentText(agent));
        line.dataset.status = agent.status;
        if (troubled(agent)) line.dataset.troubled = "true";
        if (agent.problem) line.append(element("div", "lineup-agent-problem", agent.problem));
        return line;
      }),
    );
    container.hidden = agents.length === 0;
  };
  model.on("change:agents", draw);
  draw();
  return () => model.off("change:agents", draw);
}

export const AGENTS_STYLE = `
.lineup-agents { font-size: 11px; color: var(--jp-ui-font-color2, #666); }
.lineup-agent[data-troubled] { color: var(--jp-error-color1, #c62828); }
.lineup-agent-problem { white-space: pre-wrap; font-family: var(--jp-code-font-family, monospace); padding-left: 12px; }
`;
