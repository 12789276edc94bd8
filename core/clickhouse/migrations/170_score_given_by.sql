-- Who gave a score, as the server saw it (stores/scores.ts SCORE_GIVERS): evaluator, reviewer, member_key, key or
-- event. The activation gate counts only scores of evaluators, reviewers and members' read+ingest keys
-- (docs/EVALUATION.md). A row stored before this column keeps "evaluator" when an evaluator gave it, else '' (not
-- known): the gate does not count it.
ALTER TABLE scores ADD COLUMN IF NOT EXISTS given_by LowCardinality(String) DEFAULT if(evaluator_id != '', 'evaluator', '');
