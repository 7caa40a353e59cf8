/**
 * Where chaos modes and client bindings plug in.
 *
 * A {@link ModeSpec} says what a mode adds to a round: extra topics to create, and extra
 * per-round counts computed after the members stopped. The harness calls both hooks for
 * every mode; the members receive the mode's name in their config and pick their handler
 * from it.
 *
 * - `at-least-once` (implemented): the counts from the logs, the topic and the
 *   dead-letter topic (test/chaos/analyze.ts).
 * - `exactly-once` (implemented, issue 17): the member runs `consume()` with
 *   `transactional` and its handler sends one output record per input to `<topic>.out`
 *   (same partition, header `from: <partition>:<offset>`); `topics` adds `<topic>.out`,
 *   and `count` reads it with a `read_committed` consumer (to a sentinel produced after
 *   the round: transaction markers take offsets, so end offsets cannot be counted to) and
 *   returns `outputDuplicates` (output records beyond the first per input) and
 *   `outputMissing` (non-poison inputs below the committed offsets without an output),
 *   plus `outputStrays` (outputs naming no input) and `outputRecords`.
 *
 * A {@link ClientSpec} names the Kafka client a member runs: `kafkajs`
 * (test/chaos/member.ts) and `confluent` (`@confluentinc/kafka-javascript` through
 * adapters/confluent.ts, Node only: test/chaos/member_confluent.ts).
 *
 * @module
 */

import { committedOffsets } from "../broker/broker.ts";
import { readCommitted } from "../kafka/read_committed.ts";

/** Names of the delivery modes. */
export type ModeName = "at-least-once" | "exactly-once";

/** Names of the client bindings. */
export type ClientName = "kafkajs" | "confluent";

/** What the mode's `count` hook gets after a round. */
export interface ModeRoundContext {
  /** Direct bootstrap address (not through the proxy). */
  brokers: string;
  topic: string;
  group: string;
  /** The round's input records as read back from the topic. */
  inputs: ReadonlyArray<{ partition: number; offset: number; poison: boolean }>;
}

/** A delivery mode of the chaos suite. */
export interface ModeSpec {
  name: ModeName;
  /** False: the CLI refuses it with a one-line reason. */
  implemented: boolean;
  /** Why it is not implemented (shown by the CLI). */
  missing?: string;
  /** Topics to create besides the round's topic and its `.DLT` (name, partitions). */
  topics(topic: string): Array<{ name: string; partitions: number }>;
  /** Counts added to the round's result (each becomes a per-round array in `--json`). */
  count(ctx: ModeRoundContext): Promise<Record<string, number | boolean>>;
}

/** A Kafka client binding the members can run. */
export interface ClientSpec {
  name: ClientName;
  implemented: boolean;
  missing?: string;
  /** The member program, relative to test/chaos/. */
  member: string;
}

/** Every mode, implemented or not. */
export const MODES: Record<ModeName, ModeSpec> = {
  "at-least-once": {
    name: "at-least-once",
    implemented: true,
    topics: () => [],
    count: () => Promise.resolve({}),
  },
  "exactly-once": {
    name: "exactly-once",
    implemented: true,
    topics: (topic) => [{ name: `${topic}.out`, partitions: 6 }],
    count: countOutputs,
  },
};

/** Every client binding, implemented or not. */
export const CLIENTS: Record<ClientName, ClientSpec> = {
  kafkajs: { name: "kafkajs", implemented: true, member: "member.ts" },
  confluent: { name: "confluent", implemented: true, member: "member_confluent.ts" },
};

/** The exactly-once counts: `<topic>.out` read committed against the round's inputs. */
async function countOutputs(ctx: ModeRoundContext): Promise<Record<string, number>> {
  const outputs = await readCommitted(ctx.brokers, `${ctx.topic}.out`, 180_000);
  const committed = await committedOffsets(ctx.brokers, ctx.group, ctx.topic);
  const seen = new Map<string, number>();
  for (const o of outputs) seen.set(o.headers.from ?? "", (seen.get(o.headers.from ?? "") ?? 0) + 1);
  let outputDuplicates = 0, outputMissing = 0, known = 0;
  for (const i of ctx.inputs) {
    const n = seen.get(`${i.partition}:${i.offset}`) ?? 0;
    known += n;
    if (n > 1) outputDuplicates += n - 1;
    if (n === 0 && !i.poison && i.offset < Number(committed.get(i.partition) ?? 0)) outputMissing++;
  }
  return { outputDuplicates, outputMissing, outputStrays: outputs.length - known, outputRecords: outputs.length };
}
