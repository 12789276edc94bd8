/**
 * list_agents: the agent registry with each agent's run statistics (the /agents page's list, web/agents/agents-page.ts
 * listAgents), or one agent's config versions with their average scores (its page's detail).
 */
import { z } from "zod";
import { getAgent, listVersions } from "../../../stores/agent-registry.js";
import { averageScores } from "../../../stores/scores.js";
import { listAgents } from "../../agents/agents-page.js";
import { defineTool } from "../tool.js";
import { cursorArg, limitArg, offsetPage } from "./args.js";

const MAX_AGENTS = 100;
const MAX_VERSIONS = 50;

export const listAgentsTool = defineTool({
  name: "list_agents",
  title: "List agents and config versions",
  description:
    "Without `agent`: the project's agents, most recently active first, each with its framework, tags, budget, active config " +
    "version, number of versions, run statistics (runs, running, errors, cost, tokens, last run) and its most given average " +
    "scores. With `agent`: that agent's config versions, newest first, each with its config, changelog, whether it is active, " +
    "and the average scores of its runs. Pages: pass next_cursor back as cursor.",
  input: {
    agent: z.string().min(1).max(200).optional().describe("An agent's name: list its config versions instead of the agents."),
    limit: limitArg(20, MAX_AGENTS, "agents or versions"),
    cursor: cursorArg,
  },
  action: "read",
  async run(args, { deps, key }) {
    const limit = Math.min(args.limit ?? 20, args.agent === undefined ? MAX_AGENTS : MAX_VERSIONS);
    if (args.agent === undefined) {
      const page = offsetPage(await listAgents(deps, key.projectId), args.cursor, limit);
      return { agents: page.items, next_cursor: page.next_cursor };
    }
    const agent = await getAgent(deps.ports.sql, key.projectId, args.agent);
    const [versions, averages] = await Promise.all([
      listVersions(deps.ports.sql, agent.id),
      averageScores(deps.ports.clickhouse, key.projectId, { agentName: agent.name, byVersion: true }),
    ]);
    const page = offsetPage(versions, args.cursor, limit);
    const { id: _id, ...shown } = agent;
    return {
      agent: shown,
      versions: page.items.map((v) => ({
        ...v,
        scores: averages.filter((a) => a.config_version === v.version).map((a) => ({ name: a.name, average: a.average, count: a.count })),
      })),
      // Runs sent without a config version.
      unversioned_scores: averages.filter((a) => a.config_version === null).map((a) => ({ name: a.name, average: a.average, count: a.count })),
      next_cursor: page.next_cursor,
    };
  },
});
