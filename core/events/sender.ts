/**
 * Who sent an event: the project its API key belongs to (the tenant every read is scoped by) and the user who
 * created that key (recorded as the event's user_id, and the `user.{id}` channel it is broadcast on).
 */
export interface Sender {
  readonly projectId: number;
  readonly userId: number;
}

/**
 * Whether a decoded event or OTLP export record names its project validly. One logged before projects existed names
 * none: it is its user's, in the user's personal project, which has the user's id; its `project_id` is set from
 * `user_id` in place.
 */
export function namesProject(record: { project_id?: unknown; user_id?: unknown }): boolean {
  if (record.project_id !== undefined) return Number.isSafeInteger(record.project_id);
  record.project_id = record.user_id;
  return true;
}
