/**
 * The agent the LLM judge's own calls are reported under (evaluation/judging/judge-trace.ts). Its runs are
 * evaluation, not production: they are never judged online (a judge judging itself), and the views and totals of a
 * project's runs leave them out unless the agent is asked for by name (`?agent=runwatch-judge`, docs/DASHBOARD.md);
 * /costs shows their spend apart, as evaluation spend. A score's judge_run still links to its run.
 */
export const JUDGE_AGENT = "runwatch-judge";

/**
 * The ClickHouse condition that leaves the judge's runs out of a query over agent_runs, run_costs or llm_calls (the
 * same SQL for chDB and a server); its parameter is in NOT_JUDGE_PARAMS.
 */
export const NOT_JUDGE = "agent_name != {judge_agent:String}";
export const NOT_JUDGE_PARAMS = { judge_agent: JUDGE_AGENT } as const;
