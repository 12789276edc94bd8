-- What /improve spent on the operator's LLM keys per UTC day, for RUNWATCH_IMPROVE_DAILY_BUDGET_USD
-- (web/pages/improve.ts checks it before each call and adds each call's cost after it).
CREATE TABLE improve_spend (
    day      date           PRIMARY KEY,
    cost_usd numeric(14, 6) NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
    calls    integer        NOT NULL DEFAULT 0
);
