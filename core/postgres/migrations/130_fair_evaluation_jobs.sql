-- Claiming evaluation jobs fairly across projects (stores/evaluation/jobs.ts claimJobs): the projects with waiting
-- jobs are walked one index probe each, and each project's first due jobs are read in order, from the first index;
-- the jobs a project has running now (leased: finishing or retrying a job clears its lease) from the second.
CREATE INDEX IF NOT EXISTS evaluation_jobs_waiting_idx ON evaluation_jobs (project_id, next_attempt_at, id) WHERE status IN ('pending', 'retrying');
CREATE INDEX IF NOT EXISTS evaluation_jobs_leased_idx ON evaluation_jobs (project_id, locked_until) WHERE locked_until IS NOT NULL;
