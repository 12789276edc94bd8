/**
 * Publishes many messages in order, in time slices: in-process pub/sub runs the gateway's handlers synchronously
 * on the publishing thread, which in the embedded default also serves ingest. Resolves once every publish has;
 * rejects with the first failure.
 */
import type { PubSub } from "../ports/pubsub.js";
import { TimeSlice } from "../time-slice.js";

export async function publishAll(pubsub: PubSub, messages: readonly (readonly [channel: string, message: string])[], slice = new TimeSlice()): Promise<void> {
  const sent: Promise<void>[] = [];
  for (let i = 0; i < messages.length; i++) {
    const p = pubsub.publish(messages[i]![0], messages[i]![1]);
    p.catch(() => {}); // awaited below; no unhandled rejection while we yield
    sent.push(p);
    if ((i & 15) === 15 && slice.due()) await slice.next();
  }
  await Promise.all(sent);
}
