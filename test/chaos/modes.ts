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
 * - `exactly-once`: the member runs `consume()` with `transactional` and its handler
 *   sends one output record per input to `<topic>.out` (keyed and hashed over its
 *   {@link OUT_PARTITIONS} partitions, not the input's 6, so each output partition
 *   interleaves several input partitions' transactional producers, aborts included;
 *   header `from: <partition>:<offset>`); `topics` adds `<topic>.out`, and `count` reads
 *   it twice. First with a `read_committed` KafkaJS reader (to a sentinel produced after
 *   the round: transaction markers take offsets, so end offsets cannot be counted to):
 *   `outputDuplicates` (output records beyond the first per input), `outputMissing`
 *   (non-poison inputs below the committed offsets without an output), `outputStrays`
 *   (outputs naming no input) and `outputRecords`. Then the **second stage**
 *   (test/chaos/second_stage.ts, on the members' runtime): a new group reads `.out` with
 *   `consume()`, as a downstream stage would, and the same counts are taken of what its
 *   handler saw: `secondStageDuplicates`, `secondStageMissing`, `secondStageStrays`,
 *   `secondStageRecords`.
 *
 * A {@link ClientSpec} names the Kafka client a member runs: `kafkajs`
 * (test/chaos/member.ts), `confluent` (`@confluentinc/kafka-javascript` through
 * adapters/confluent/mod.ts, Node only: test/chaos/member_confluent.ts) and `platformatic`
 * (`@platformatic/kafka` through adapters/platformatic/mod.ts; on Node, the pinned Node 24:
 * test/chaos/member_platformatic.ts). Confluent at least once only; platformatic both modes.
 *
 * @module
 */

import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel } from "kafkajs";
import { committedOffsets } from "../broker/broker.ts";
import { readCommitted } from "../kafka/read_committed.ts";
import type { SecondStageConfig } from "./second_stage.ts";

/** Partitions of the exactly-once output topic (the input has 6). */
export const OUT_PARTITIONS = 4;

/** Names of the delivery modes. */
export type ModeName = "at-least-once" | "exactly-once";

/** Names of the client bindings. */
export type ClientName = "kafkajs" | "confluent" | "platformatic";

/** What the mode's `count` hook gets after a round. */
export interface ModeRoundContext {
  /** Direct bootstrap address (not through the proxy). */
  brokers: string;
  topic: string;
  group: string;
  /** The round's input records as read back from the topic. */
  inputs: ReadonlyArray<{ partition: number; offset: number; poison: boolean }>;
  /** The members' runtime. */
  runtime: "node" | "bun" | "deno";
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
  /** On Node, the members run on this pinned Node line (scripts/install-node.mjs): the client needs it. */
  newerNode?: 22 | 24;
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
    topics: (topic) => [{ name: `${topic}.out`, partitions: OUT_PARTITIONS }],
    count: countOutputs,
  },
};

/** Every client binding, implemented or not. */
export const CLIENTS: Record<ClientName, ClientSpec> = {
  kafkajs: { name: "kafkajs", implemented: true, member: "member.ts" },
  confluent: { name: "confluent", implemented: true, member: "member_confluent.ts" },
  platformatic: { name: "platformatic", implemented: true, member: "member_platformatic.ts", newerNode: 24 },
};

/** The exactly-once counts: `<topic>.out` read committed, and read by a second stage, against the round's inputs. */
async function countOutputs(ctx: ModeRoundContext): Promise<Record<string, number>> {
  const outputs = await readCommitted(ctx.brokers, `${ctx.topic}.out`, 180_000);
  const committed = await committedOffsets(ctx.brokers, ctx.group, ctx.topic);
  const first = tally(ctx, committed, outputs.map((o) => o.headers.from ?? ""));
  const second = tally(ctx, committed, await secondStage(ctx));
  return {
    outputDuplicates: first.duplicates,
    outputMissing: first.missing,
    outputStrays: first.strays,
    outputRecords: first.records,
    secondStageDuplicates: second.duplicates,
    secondStageMissing: second.missing,
    secondStageStrays: second.strays,
    secondStageRecords: second.records,
  };
}

/** Outputs (by their `from` header) against the inputs: repeats, inputs without one, outputs naming no input. */
function tally(ctx: ModeRoundContext, committed: Map<number, string>, froms: readonly string[]) {
  const seen = new Map<string, number>();
  for (const f of froms) seen.set(f, (seen.get(f) ?? 0) + 1);
  let duplicates = 0, missing = 0, known = 0;
  for (const i of ctx.inputs) {
    const n = seen.get(`${i.partition}:${i.offset}`) ?? 0;
    known += n;
    if (n > 1) duplicates += n - 1;
    if (n === 0 && !i.poison && i.offset < Number(committed.get(i.partition) ?? 0)) missing++;
  }
  return { duplicates, missing, strays: froms.length - known, records: froms.length };
}

const HERE = dirname(fileURLToPath(import.meta.url));

/** Runs test/chaos/second_stage.ts on the members' runtime after a sentinel went to every output partition; the `from` headers its handler saw. */
async function secondStage(ctx: ModeRoundContext): Promise<string[]> {
  const topic = `${ctx.topic}.out`;
  const sentinel = `second-stage-${Date.now()}-${Math.random().toString(36).slice(2)}`;
  const kafka = new Kafka({ clientId: "chaos-second-stage-sentinel", brokers: [ctx.brokers], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages: Array.from({ length: OUT_PARTITIONS }, (_, partition) => ({ partition, key: "sentinel", value: sentinel })) });
  } finally {
    await producer.disconnect();
  }
  const dir = mkdtempSync(join(tmpdir(), "offset-frontier-second-stage-"));
  const out = join(dir, "seen.json");
  const cfg: SecondStageConfig = { brokers: ctx.brokers, topic, group: `${ctx.group}-second-stage`, sentinel, partitions: OUT_PARTITIONS, out };
  const file = join(HERE, "second_stage.ts");
  const root = resolve(HERE, "..", "..");
  const bin = (name: string): string => join(root, "node_modules", ".bin", name);
  const [cmd, args] = ctx.runtime === "bun"
    ? [bin("bun"), [file]]
    : ctx.runtime === "deno"
    ? [bin("deno"), ["run", "--allow-all", file]]
    : [process.execPath, ["--import", "tsx", file]];
  const child = spawn(cmd, [...args, JSON.stringify(cfg)], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stdout.resume();
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err = (err + d).slice(-4_000)));
  const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
  if (code !== 0) throw new Error(`the second stage exited ${code}: ${err.trim()}`);
  const result = JSON.parse(readFileSync(out, "utf8")) as { seen: string[]; unfinished: number[] };
  rmSync(dir, { recursive: true, force: true });
  if (result.unfinished.length > 0) throw new Error(`the second stage did not reach the sentinel of partitions ${result.unfinished.join(",")} within 180 s`);
  return result.seen;
}
