/**
 * Dead letters, the feature (docs/PIPELINE.md, "Failure isolation"): what an operator does with the acknowledged
 * events the pipeline could not store. Replaying them appends them to the event log again; listing, counting and
 * purging are rows only (stores/dead-letters.ts), as is adding them (the pipeline's record handler).
 *
 *   replay.ts   pending dead letters back into the event log, as the events (or export records) they were
 */
export { replayDeadLetters, type ReplayResult } from "./replay.js";
