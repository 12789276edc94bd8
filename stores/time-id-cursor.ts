/**
 * The opaque cursor of a list read newest (or oldest) first by (time, UUID): the last row's time and id as
 * base64url JSON. Decoding checks both, so a made-up cursor is a 422 naming `cursor`, never a query.
 */
import { ValidationError } from "../core/errors.js";
import { isStorableTime } from "../core/events/schema.js";
import { toChTime } from "./runs/event-store.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The cursor after a row with this time (ISO 8601 or ClickHouse time text) and id. */
export const timeIdCursor = (time: string, id: string): string => Buffer.from(JSON.stringify([time, id])).toString("base64url");

/** The time (as ClickHouse time text) and id a cursor holds; a ValidationError on `cursor` when it is not one. */
export function decodeTimeIdCursor(c: string): [time: string, id: string] {
  try {
    const v = JSON.parse(Buffer.from(c, "base64url").toString("utf8")) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && isStorableTime(Date.parse(v[0])) && typeof v[1] === "string" && UUID.test(v[1])) {
      return [toChTime(v[0]), v[1]];
    }
  } catch { /* fall through */ }
  throw new ValidationError({ message: "cursor is not a cursor returned by this API", field: "cursor" });
}
