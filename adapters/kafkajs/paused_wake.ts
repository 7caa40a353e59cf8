/**
 * KafkaJS's fetcher, woken by a resume. When none of the partitions a KafkaJS fetcher reads
 * (those its broker leads) can be fetched because every one is paused, KafkaJS's
 * `ConsumerGroup.fetch` sleeps `maxWaitTimeInMs` (5 s by default) and a resume does not
 * wake it. The runner pauses partitions for backpressure, and every new partition while it
 * reads its committed offset after a join: each such pause of a whole broker's partitions
 * stalled their fetching for up to that long, and every join delayed the first record by it.
 *
 * So the binding wraps `ConsumerGroup.prototype.fetch` and `.resume` (once per process and
 * KafkaJS copy, as read_committed.ts wraps the broker's fetch): while none of the node's
 * assigned partitions is active, the fetch waits for a resume of its consumer group, at
 * most `maxWaitTime` as before, and returns no batches; otherwise KafkaJS's own fetch runs.
 * KafkaJS's other sleep, for partitions whose offsets are not resolved yet, is left as is.
 *
 * @module
 */
import { createRequire } from "node:module";

/** The parts of KafkaJS's `ConsumerGroup` the wrapper reads. */
interface ConsumerGroupLike {
  maxWaitTime: number;
  subscriptionState: { active(): Array<{ topic: string; partitions: number[] }> };
  filterPartitionsByNode(nodeId: unknown, topicPartitions: Array<{ topic: string; partitions: number[] }>): Array<{ topic: string; partitions: number[] }>;
}
type Fetch = (this: ConsumerGroupLike, nodeId: unknown) => Promise<unknown[]>;
type Resume = (this: ConsumerGroupLike, topicPartitions: unknown) => void;

const WRAPPED = Symbol.for("offset-frontier.pausedWake");
// Per consumer group: the fetches waiting for a resume.
const waiting = new WeakMap<object, Set<() => void>>();
let installed: "yes" | string | undefined;

/** Whether none of `nodeId`'s assigned partitions is active (every one paused); false when KafkaJS cannot tell. */
export function nothingToFetch(group: ConsumerGroupLike, nodeId: unknown): boolean {
  try {
    return group.filterPartitionsByNode(nodeId, group.subscriptionState.active()).every((t) => t.partitions.length === 0);
  } catch {
    return false; // metadata not there yet: KafkaJS's own fetch decides
  }
}

/** Waits for a resume of `group`, at most `ms`. */
function untilResumed(group: object, ms: number): Promise<void> {
  return new Promise((resolve) => {
    let set = waiting.get(group);
    if (!set) waiting.set(group, set = new Set());
    const waiters = set;
    const done = (): void => {
      clearTimeout(timer);
      waiters.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    waiters.add(done);
  });
}

/**
 * Wraps KafkaJS's `ConsumerGroup.prototype.fetch` and `.resume` (see the module doc).
 * Returns `"yes"`, or why it could not (fetching then works as KafkaJS's own).
 * @param resolveFrom where to resolve `kafkajs` from (default: this module)
 */
export function installPausedWake(resolveFrom: string | URL = import.meta.url): "yes" | string {
  if (installed !== undefined) return installed;
  try {
    const require = createRequire(resolveFrom);
    const ConsumerGroup = require("kafkajs/src/consumer/consumerGroup.js") as {
      prototype: { fetch: Fetch & { [WRAPPED]?: true }; resume: Resume };
    };
    const proto = ConsumerGroup.prototype;
    const fetch = proto.fetch, resume = proto.resume;
    if (typeof fetch !== "function" || typeof resume !== "function") throw new Error("kafkajs's ConsumerGroup has no fetch or resume");
    if (!fetch[WRAPPED]) {
      const wrapped = async function (this: ConsumerGroupLike, nodeId: unknown): Promise<unknown[]> {
        if (!nothingToFetch(this, nodeId)) return await fetch.call(this, nodeId);
        await untilResumed(this, this.maxWaitTime);
        return [];
      };
      Object.defineProperty(wrapped, WRAPPED, { value: true });
      proto.fetch = wrapped as Fetch;
      proto.resume = function (this: ConsumerGroupLike, topicPartitions: unknown): void {
        resume.call(this, topicPartitions);
        const set = waiting.get(this);
        if (set) for (const done of [...set]) done();
      };
    }
    installed = "yes";
  } catch (error) {
    installed = `KafkaJS's fetch could not be woken by resumes (${error instanceof Error ? error.message : String(error)})`;
  }
  return installed;
}
