-- SLOs on a score's mean (docs/ALERTS.md, SLOs; stores/slos.ts): objective 'score_mean' names the score whose mean
-- must stay at or above the target over the window. The column checks are replaced, not added to, so an old row
-- (success_rate, latency) stays valid as it is.
ALTER TABLE slos DROP CONSTRAINT slos_objective_check;
ALTER TABLE slos ADD CONSTRAINT slos_objective_check CHECK (objective IN ('success_rate', 'latency', 'score_mean'));
ALTER TABLE slos ADD COLUMN score_name text CHECK (score_name IS NULL OR char_length(score_name) BETWEEN 1 AND 200);
ALTER TABLE slos ADD CONSTRAINT slos_score_name_with_score_mean CHECK ((objective = 'score_mean') = (score_name IS NOT NULL));
