/**
 * Where later chaos modes and client bindings plug in.
 *
 * A {@link ModeSpec} says what a mode adds to a round: extra topics to create, and extra
 * per-round counts computed after the members stopped. The harness calls both hooks for
 * every mode; the members receive the mode's name in their config and pick their handler
 * from it.
 *
 * - `at-least-once` (implemented): the counts from the logs, the topic and the
 *   dead-letter topic (test/chaos/analyze.ts).
 * - `exactly-once` (to do, issue 17/18): the member's handler produces one output record
 *   per input to `<topic>.out` inside the runner's transaction; `topics` adds
 *   `<topic>.out`, and `count` reads it with a `read_committed` consumer (isolation level
 *   READ_COMMITTED, from the beginning to its end offsets) and returns `outputDuplicates`
 *   (output records beyond the first per input partition/offset, read from the output's
 *   headers) and `outputMissing` (inputs below the committed offsets without an output).
 *
 * A {@link ClientSpec} names the Kafka client a member runs: `kafkajs`
 * (test/chaos/member.ts) and `confluent` (`@confluentinc/kafka-javascript` through
 * adapters/confluent.ts, Node only: test/chaos/member_confluent.ts).
 *
 * @module
 */

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
    implemented: false,
    missing: "--mode exactly-once is not implemented yet (needs the runner's transactional mode)",
    topics: (topic) => [{ name: `${topic}.out`, partitions: 6 }],
    count: () => Promise.reject(new Error("exactly-once counts are not implemented")),
  },
};

/** Every client binding, implemented or not. */
export const CLIENTS: Record<ClientName, ClientSpec> = {
  kafkajs: { name: "kafkajs", implemented: true, member: "member.ts" },
  confluent: { name: "confluent", implemented: true, member: "member_confluent.ts" },
};
