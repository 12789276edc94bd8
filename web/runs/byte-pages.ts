/**
 * Pages bounded by bytes as well as by count: one event may carry up to a megabyte of payload, so 1,000 events
 * can be a gigabyte of JSON or HTML. A page stops before the item that would pass `maxBytes` (it always holds
 * at least one item), and the caller's cursor continues from the last item it holds.
 */

/** The API's largest events page (GET /api/runs/{id}), in bytes of JSON. */
export const MAX_EVENTS_PAGE_BYTES = 8 * 1024 * 1024;

/** How many of `items` fit in `maxBytes`, measuring each with `size` (at least one when there are any). */
export function countWithinBytes<T>(items: readonly T[], maxBytes: number, size: (item: T) => number): number {
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += size(items[i]!);
    if (total > maxBytes && i > 0) return i;
  }
  return items.length;
}

/** Bytes of a value as JSON (UTF-16 length: close enough for a bound, and cheap). */
export const jsonSize = (v: unknown): number => JSON.stringify(v)?.length ?? 4;
