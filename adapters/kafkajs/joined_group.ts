/**
 * The committed offsets and metadata of a new assignment, read through the KafkaJS
 * consumer's own cluster connection, whatever else the user passed.
 *
 * KafkaJS exposes neither its consumer group nor its cluster, and its `GROUP_JOIN` event
 * carries only names. But `ConsumerGroup.prototype.joinAndSync` calls the group's public
 * `assigned()` and, in the same synchronous step, emits `GROUP_JOIN` (KafkaJS 2.2.4,
 * `src/consumer/consumerGroup.js`). So the binding wraps `ConsumerGroup.prototype.assigned`
 * once per process and KafkaJS copy: each call notes its group in a slot shared by every
 * copy of this module, and the binding's `GROUP_JOIN` listener takes the group noted there
 * when its `groupId` and `memberId` are the event's ({@link joinedGroup}). It then reads
 * the partitions' committed offsets as KafkaJS's admin `fetchOffsets` and its own offset
 * manager do: the group coordinator's OffsetFetch, through `group.cluster`
 * ({@link readJoinedCommitted}).
 *
 * Without the wrap (a KafkaJS copy whose internals differ) the completed sets written with
 * the commits could not be read back, and each handover would redo every record above the
 * committed offset: the binding then needs the KafkaJS client (`kafka`, read with its
 * admin client) or refuses ({@link requireReadBack}).
 *
 * @module
 */
import { createRequire } from "node:module";
import type { CommittedPosition, EndOffset, TopicPartition } from "../../core/consumer/port/mod.ts";
import { endOffsetOf } from "../shared/end_offsets.ts";
import { InvalidArgumentError } from "../../core/errors.ts";
import { committedPositions } from "./committed.ts";

/** The OffsetFetch answer of KafkaJS's broker (the fields read). */
interface OffsetFetchAnswer {
  responses: Array<{ topic: string; partitions: Array<{ partition: number; offset: string; metadata: string | null }> }>;
}

/** The parts of KafkaJS's `ConsumerGroup` (and its cluster) the read uses. */
export interface JoinedGroup {
  readonly groupId: string;
  readonly memberId: string | null;
  readonly cluster: {
    findGroupCoordinator(request: { groupId: string }): Promise<{
      offsetFetch(request: { groupId: string; topics: Array<{ topic: string; partitions: Array<{ partition: number }> }> }): Promise<OffsetFetchAnswer>;
    }>;
    /** ListOffsets per leader (latest offsets unless `fromBeginning`), at the consumer's isolation level. */
    fetchTopicsOffset?(
      topics: Array<{ topic: string; partitions: Array<{ partition: number }>; fromBeginning: boolean }>,
    ): Promise<Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>>;
  };
}

type Assigned = (this: JoinedGroup) => unknown;

const WRAPPED = Symbol.for("offset-frontier.kafkajs.joinedGroup");
/** The group whose `assigned()` ran last, shared by every copy of this module (one wrap serves them all). */
const slot: { group: JoinedGroup | undefined } = ((globalThis as Record<symbol, unknown>)[WRAPPED] ??= { group: undefined }) as {
  group: JoinedGroup | undefined;
};
const installs = new Map<string, "yes" | string>();

/**
 * Wraps KafkaJS's `ConsumerGroup.prototype.assigned` (once per process and KafkaJS copy) so
 * that a `GROUP_JOIN` listener can find the group that emitted the event. Returns `"yes"`,
 * or why it could not.
 * @param resolveFrom where to resolve `kafkajs` from (default: this module)
 */
export function installJoinedGroup(resolveFrom: string | URL = import.meta.url): "yes" | string {
  const key = String(resolveFrom);
  const known = installs.get(key);
  if (known !== undefined) return known;
  let result: "yes" | string;
  try {
    const require = createRequire(resolveFrom);
    const ConsumerGroup = require("kafkajs/src/consumer/consumerGroup.js") as {
      prototype: { assigned?: Assigned & { [WRAPPED]?: true }; joinAndSync?: unknown };
    };
    const proto = ConsumerGroup?.prototype;
    const assigned = proto?.assigned;
    if (typeof assigned !== "function" || typeof proto.joinAndSync !== "function") {
      throw new Error("kafkajs's ConsumerGroup has no assigned or joinAndSync method");
    }
    if (!assigned[WRAPPED]) {
      const wrapped = function (this: JoinedGroup): unknown {
        slot.group = this;
        return assigned.call(this);
      };
      Object.defineProperty(wrapped, WRAPPED, { value: true });
      proto.assigned = wrapped;
    }
    result = "yes";
  } catch (error) {
    result = `KafkaJS's consumer group could not be reached (${error instanceof Error ? error.message : String(error)})`;
  }
  installs.set(key, result);
  return result;
}

/**
 * The KafkaJS consumer group that emitted this `GROUP_JOIN` (call it synchronously from the
 * listener), or `undefined` when the group noted last is not this member of this group (its
 * KafkaJS copy is not the one wrapped).
 * @param payload the event's `groupId` and `memberId`
 */
export function joinedGroup(payload: { groupId: string; memberId: string }): JoinedGroup | undefined {
  const group = slot.group;
  slot.group = undefined; // hold no consumer group past its join
  if (group === undefined || group.groupId !== payload.groupId || group.memberId !== payload.memberId) return undefined;
  if (typeof group.cluster?.findGroupCoordinator !== "function") return undefined;
  return group;
}

/**
 * Reads the committed offsets and metadata of `partitions` with the group's own cluster:
 * one FindCoordinator and one OffsetFetch, as KafkaJS's admin `fetchOffsets` does. A
 * partition without a committed offset (KafkaJS answers `-1`) has `offset: undefined`;
 * the stored metadata's trailing NUL is dropped.
 * @param group the group from {@link joinedGroup}
 * @param partitions the partitions to read
 */
export async function readJoinedCommitted(group: JoinedGroup, partitions: readonly TopicPartition[]): Promise<CommittedPosition[]> {
  const byTopic = new Map<string, Array<{ partition: number }>>();
  for (const { topic, partition } of partitions) {
    let ps = byTopic.get(topic);
    if (!ps) byTopic.set(topic, ps = []);
    ps.push({ partition });
  }
  const groupId = group.groupId;
  const coordinator = await group.cluster.findGroupCoordinator({ groupId });
  const { responses } = await coordinator.offsetFetch({ groupId, topics: [...byTopic].map(([topic, ps]) => ({ topic, partitions: ps })) });
  return committedPositions(responses);
}

/**
 * The log end offsets of `partitions` (paused ones: no fetch reports theirs) through the
 * group's own cluster: one ListOffsets per leader, at the consumer's isolation level (with
 * `read_committed`, KafkaJS's default, the last stable offset), as KafkaJS resolves a
 * partition without a committed offset. A partition not answered is left out.
 * @param group the group from {@link joinedGroup}
 * @param partitions the partitions to ask for
 */
export async function readJoinedEndOffsets(group: JoinedGroup, partitions: readonly TopicPartition[]): Promise<EndOffset[]> {
  const fetch = group.cluster.fetchTopicsOffset;
  if (typeof fetch !== "function" || partitions.length === 0) return [];
  const byTopic = new Map<string, Array<{ partition: number }>>();
  for (const { topic, partition } of partitions) {
    let ps = byTopic.get(topic);
    if (!ps) byTopic.set(topic, ps = []);
    ps.push({ partition });
  }
  const answer = await fetch.call(group.cluster, [...byTopic].map(([topic, ps]) => ({ topic, partitions: ps, fromBeginning: false })));
  const out: EndOffset[] = [];
  for (const t of answer) {
    for (const p of t.partitions) {
      const endOffset = endOffsetOf(p.offset);
      if (endOffset !== undefined && byTopic.get(t.topic)?.some((q) => q.partition === p.partition)) out.push({ topic: t.topic, partition: p.partition, endOffset });
    }
  }
  return out;
}

/**
 * Refuses a binding that would write completed sets nobody reads back: without `kafka`
 * when the consumer group could not be wrapped.
 * @param kafka the `kafka` option as given
 * @param installed what {@link installJoinedGroup} returned
 * @throws {InvalidArgumentError} naming `kafka` and why it is needed
 */
export function requireReadBack(kafka: unknown, installed: "yes" | string): void {
  if (installed === "yes" || kafka !== undefined) return;
  throw new InvalidArgumentError(
    `kafka (the KafkaJS client that made consumer, new Kafka(…)) is needed here: ${installed}, so the completed sets committed with the offsets could not be read back at each assignment without it, and every record an earlier owner finished above the committed offset would run again`,
  );
}

/** The error of a join whose consumer group was not found and no `kafka` was given (a second KafkaJS copy). */
export function unreachableGroupError(): InvalidArgumentError {
  return new InvalidArgumentError(
    `kafka (the KafkaJS client that made consumer, new Kafka(…)) is needed here: the consumer's KafkaJS copy is not the one offset-frontier resolves as "kafkajs", so the completed sets committed with the offsets could not be read back (every record an earlier owner finished above the committed offset would run again); pass kafka, or use one KafkaJS copy`,
  );
}
