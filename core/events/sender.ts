/**
 * Who sent an event: the project its API key belongs to (the tenant every read is scoped by) and the user who
 * created that key (recorded as the event's user_id, and the `user.{id}` channel it is broadcast on).
 */
export interface Sender {
  readonly projectId: number;
  readonly userId: number;
}

/**
 * An event or OTLP export record logged before projects existed names no project: it is its user's, in the user's
 * personal project, which has the user's id. Sets `project_id` from `user_id` on such a record, in place.
 */
export function fillLegacyProject(record: { project_id?: unknown; user_id?: unknown }): void {
  if (record.project_id === undefined) record.project_id = record.user_id;
}
