-- Rules that only route to an annotation queue (stores/evaluation/rules.ts): no evaluator, a queue action —
-- every matching run that ends ({queue_id}), or every run given a matching score ({queue_id, score_name,
-- below? | equals?}: thumbs down, a low rating). A rule judges, routes, or both.
ALTER TABLE evaluation_rules ALTER COLUMN evaluator_id DROP NOT NULL;
ALTER TABLE evaluation_rules ADD CONSTRAINT evaluation_rules_has_work CHECK (evaluator_id IS NOT NULL OR queue_action IS NOT NULL);
