/**
 * add_to_queue: runs (or spans) into an annotation queue for people to review (POST /api/annotation-queues/{id}/items:
 * evaluation's addRunsToQueue). Needs what the API's route needs: the `review` action.
 */
import { z } from "zod";
import { MAX_SPAN_ID_CHARS } from "../../../core/events/schema.js";
import * as evaluation from "../../../evaluation/index.js";
import { listQueues, queueJson, queueWithId } from "../../../stores/evaluation/annotation-queues.js";
import { defineTool } from "../tool.js";
import { sdkRunIdArg } from "./args.js";

const MAX_RUNS = 100;

export const addToQueue = defineTool({
  name: "add_to_queue",
  title: "Add runs to an annotation queue",
  description:
    "Adds runs (or single spans of them) to an annotation queue, where people review and score them. Without queue_id it " +
    "adds nothing and lists the project's queues (id, name, score configs) to choose from. A run already pending in the " +
    "queue is not added twice. Needs a key whose owner may review (member or above).",
  input: {
    queue_id: z.string().min(1).max(64).optional().describe("The queue's id (leave out to list the queues)."),
    runs: z.array(z.object({
      sdk_run_id: sdkRunIdArg,
      span_id: z.string().min(1).max(MAX_SPAN_ID_CHARS).optional().describe("One span of the run to review instead of the whole run."),
    })).min(1).max(MAX_RUNS).optional().describe(`The runs to add (1 to ${MAX_RUNS}).`),
  },
  action: "review",
  async run(args, { deps, key }) {
    const { sql } = deps.ports;
    if (args.queue_id === undefined) return { queues: (await listQueues(sql, key.projectId)).map(queueJson) };
    const queue = await queueWithId(sql, key.projectId, args.queue_id);
    const added = await evaluation.addRunsToQueue({ sql, events: deps.events }, queue, { items: args.runs ?? [] }, "api");
    return { queue: queue.name, queue_id: queue.id, ...added };
  },
});
