/**
 * A partition assigner that gives partition p to the same process in every consumer group that uses it with the
 * same `instance` (kafkajs' round robin sorts members by their broker-made member ids, which differ per group).
 * The two lanes of the log (lanes.ts) are two topics with the same partition count and the same keys: with this
 * assigner a log key's main- and bulk-lane partitions belong to one pipeline process, which therefore owns all of
 * a run's state, as with one topic.
 */
import { AssignerProtocol, type PartitionAssigner } from "kafkajs";

const NAME = "RunwatchCoPartitioned";
const VERSION = 1;

export const coPartitionedAssigner = (instance: string): PartitionAssigner => ({ cluster }) => ({
  name: NAME,
  version: VERSION,
  async assign({ members, topics }) {
    const instanceOf = (metadata: Buffer) => AssignerProtocol.MemberMetadata.decode(metadata)?.userData?.toString("utf8") ?? "";
    const sorted = members
      .map((m) => ({ memberId: m.memberId, instance: instanceOf(m.memberMetadata) }))
      .sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : a.memberId < b.memberId ? -1 : 1));
    const assignment = new Map<string, Record<string, number[]>>(sorted.map((m) => [m.memberId, Object.create(null) as Record<string, number[]>]));
    for (const topic of topics) {
      for (const { partitionId } of cluster.findTopicPartitionMetadata(topic)) {
        const owner = assignment.get(sorted[partitionId % sorted.length]!.memberId)!;
        (owner[topic] ??= []).push(partitionId);
      }
    }
    return [...assignment].map(([memberId, topicsOf]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: VERSION, assignment: topicsOf, userData: Buffer.alloc(0) }),
    }));
  },
  protocol({ topics }) {
    return { name: NAME, metadata: AssignerProtocol.MemberMetadata.encode({ version: VERSION, topics, userData: Buffer.from(instance, "utf8") }) };
  },
});
