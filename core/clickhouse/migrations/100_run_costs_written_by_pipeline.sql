-- run_costs is written by the pipeline beside agent_runs (EventStore.upsertRuns), and only for runs whose cost
-- facts (day, agent, model, status, tokens, cost) changed, instead of a materialized view that copied every
-- version of every run: most batches change no run's costs (a tool call, a span), and the view's second part per
-- batch cost as much as the runs' own insert (a small chDB insert is ~5-10 ms of part writing, whatever its
-- size). docs/PIPELINE.md has the measurements. A run that changes is folded to its latest version as before.
DROP VIEW IF EXISTS run_costs_mv;
