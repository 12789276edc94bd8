-- Scores given by an evaluator (docs/EVALUATION.md) name it and its version, and link the judge call's own run
-- (its sdk_run_id, in the project's "runwatch-judge" agent): its tokens and cost are counted there, apart from the
-- judged agent's. Empty / 0 for scores from elsewhere.
ALTER TABLE scores ADD COLUMN IF NOT EXISTS evaluator_id String DEFAULT '';
ALTER TABLE scores ADD COLUMN IF NOT EXISTS evaluator_version UInt32 DEFAULT 0;
ALTER TABLE scores ADD COLUMN IF NOT EXISTS judge_run String DEFAULT '';
