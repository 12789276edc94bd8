/**
 * Which run: its project and the client's run id (`sdk_run_id` on an event, `external_id` on a run record). The one
 * spelling of a run's identity in memory: the pipeline's per-run state, the drafts plugins see, the event store's
 * run look-ups and the log's ordering all key by it. Events of one run share it, so they stay in order (one Kafka
 * partition, one consumer). The run's stored `run_id` is a function of the same two (core/ids.ts runIdFor).
 */
declare const brand: unique symbol;
export type RunKey = string & { readonly [brand]: "RunKey" };

export const runKey = (projectId: number, externalId: string): RunKey => `${projectId}:${externalId}` as RunKey;

/** The run key of an event. */
export const runKeyOfEvent = (e: { readonly project_id: number; readonly sdk_run_id: string }): RunKey => runKey(e.project_id, e.sdk_run_id);

/** The run key of a run record or a run reference. */
export const runKeyOfRun = (r: { readonly project_id: number; readonly external_id: string }): RunKey => runKey(r.project_id, r.external_id);

/**
 * What makes an event the same event: its run and its id together. An event_id alone is not enough: another tenant
 * may send (by accident or on purpose) an id already stored for someone else, and that must not make this
 * tenant's event a duplicate. Event ids are UUIDs, compared in lower case.
 */
export type EventKey = string & { readonly [brand]: "EventKey" };
export const eventKey = (run: RunKey, eventId: string): EventKey => `${run} ${eventId.toLowerCase()}` as EventKey;
