import { projectChannel, type PubSub } from "../ports/pubsub.js";

/**
 * Tells the project's open dashboards that scores were given to runs of experiments (realtime message
 * `experiment_scores`, docs/REALTIME.md), so a comparison open while an experiment runs shows them: an SDK's
 * evaluators send their scores after the runs, and a server evaluator's after the run ended. Best effort, like every
 * live message: the page's next load reads them anyway.
 */
export async function announceExperimentScores(pubsub: Pick<PubSub, "publish">, projectId: number, runs: Iterable<{ readonly experiment_id: string }>): Promise<void> {
  const ids = [...new Set([...runs].map((r) => r.experiment_id).filter((id) => id !== ""))];
  if (ids.length === 0) return;
  await pubsub.publish(projectChannel(projectId), JSON.stringify({ type: "experiment_scores", experiment_ids: ids })).catch(() => {});
}
