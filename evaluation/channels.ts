/** The evaluation feature's PubSub channels (docs/REALTIME.md lists every channel). */
/** PubSub channel that wakes idle evaluation workers when jobs were queued (best effort; workers also poll). */
export const EVALUATION_JOBS_CHANNEL = "evaluation.jobs";
/** PubSub channel naming a project whose rules changed: pipelines drop their cached rules of it at once. */
export const EVALUATION_RULES_CHANNEL = "evaluation.rules";
