/**
 * One consumer process of the crash demo (spawned by demo/run.ts, killed with SIGKILL).
 *
 *   node --import tsx demo/consumer.ts --strategy naive|frontier --brokers H:P --topic T
 *     --group G --log FILE [--state FILE] [--workers 4] [--work-ms 5] [--commit-ms 100]
 *
 * Both strategies run the same work: `--workers` concurrent workers, each record takes
 * `--work-ms`, and a finished record is appended to `--log` (one offset per line) and
 * fsynced *before* its completion is reported to the queue or the runner. The log is
 * the ground truth the harness counts lost and duplicated records from.
 *
 * - `naive`: the common pattern this library replaces. KafkaJS with auto-commit every
 *   `--commit-ms`; `eachMessage` pushes the record onto an in-memory queue and returns at
 *   once, so KafkaJS resolves and auto-commits offsets that were only *fetched*.
 * - `frontier`: offset-frontier's ParallelConsumer through the KafkaJS binding,
 *   unordered, concurrency `--workers`, with the library's default commits (auto-commit
 *   off; safe positions only, eagerly, each with the completed set above it in its
 *   metadata, read back by the replacement so it skips what the victim finished).
 *
 * The frontier child also appends the runner's own view to `--state` (JSON lines): on
 * every acknowledged commit, and for every finished record just *before* its log line
 * (that record is still counted as running), so the last line at a crash bounds what
 * can be redone: running + (safe − confirmed) + blocked (blocked records the last commit
 * claimed finished are not redone).
 *
 * Stdout carries one JSON event per line for the harness: `joined` (group joined),
 * `consuming` (first record received), `error`.
 *
 * @module
 */
import { fdatasync, openSync, writeSync } from "node:fs";
import process from "node:process";
import { intFlag, parseCli, usageError } from "../scripts/cli.mjs";
import { Kafka, logLevel } from "kafkajs";
import { createKafkaJSConsumer } from "../adapters/kafkajs/mod.ts";

/** Group timing for both strategies: a SIGKILLed member's session ends after 6 s (the broker minimum). */
export const GROUP_TIMING = { sessionTimeout: 6_000, heartbeatInterval: 500, rebalanceTimeout: 10_000 } as const;

/** One snapshot of the frontier runner's view of the partition (a line of the state file). */
export interface RunnerState {
  /** `finish`: taken just before a finished record is logged (that record counts as running); `commit`: a commit was acknowledged. */
  kind: "finish" | "commit";
  /** The record about to be logged (`finish` only). */
  offset?: number;
  /** Handler calls running, the finishing record included. */
  running: number;
  /** The partition's safe position (the resume position justified by completed work). */
  safe: number | undefined;
  /** The last position the broker acknowledged in this assignment (undefined before the first commit). */
  confirmed: number | undefined;
  /** Completed records held behind an unfinished earlier one. */
  blocked: number;
  /** Where delivery has reached. */
  delivered: number | undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function say(event: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ event, ...extra })}\n`);
}

/** Append-only finished log: write the offset, fsync, only then return. */
function finishedLog(path: string): (offset: number) => Promise<void> {
  const fd = openSync(path, "a");
  return (offset) => {
    writeSync(fd, `${offset}\n`);
    return new Promise((resolve, reject) => fdatasync(fd, (e) => (e ? reject(e) : resolve())));
  };
}

async function main(): Promise<void> {
  const usage = "usage: node --import tsx demo/consumer.ts --strategy naive|frontier --brokers H:P --topic T\n" +
    "  --group G --log FILE [--state FILE] [--workers 4] [--work-ms 5] [--commit-ms 100]\n\n" +
    "One consumer process of the crash demo (demo/run.ts spawns it and SIGKILLs it).";
  const { values } = parseCli({
    name: "demo/consumer",
    usage,
    options: {
      strategy: { type: "string" },
      brokers: { type: "string" },
      topic: { type: "string" },
      group: { type: "string" },
      log: { type: "string" },
      state: { type: "string" },
      workers: { type: "string", default: "4" },
      "work-ms": { type: "string", default: "5" },
      "commit-ms": { type: "string", default: "100" },
    },
  });
  const { strategy, brokers, topic, group, log } = values;
  if (!strategy || !brokers || !topic || !group || !log) {
    usageError("demo/consumer", "--strategy, --brokers, --topic, --group and --log are required");
  }
  if (strategy !== "naive" && strategy !== "frontier") {
    usageError("demo/consumer", `--strategy must be naive or frontier; got ${JSON.stringify(strategy)}`);
  }
  const workers = intFlag("demo/consumer", "workers", values.workers, 1);
  const workMs = intFlag("demo/consumer", "work-ms", values["work-ms"], 0);
  const commitMs = intFlag("demo/consumer", "commit-ms", values["commit-ms"], 1);
  const finished = finishedLog(log);

  const kafka = new Kafka({
    clientId: `demo-${strategy}-${process.pid}`,
    brokers: brokers.split(","),
    logLevel: logLevel.NOTHING,
  });
  const consumer = kafka.consumer({ groupId: group, ...GROUP_TIMING });
  consumer.on(consumer.events.GROUP_JOIN, (e) => say("joined", { memberId: e.payload.memberId }));
  consumer.on(consumer.events.CRASH, (e) => say("error", { error: String(e.payload.error) }));
  let consuming = false;
  const firstRecord = (): void => {
    if (!consuming) (consuming = true), say("consuming");
  };

  if (strategy === "naive") {
    await runNaive(consumer, topic, { workers, workMs, commitMs, finished, firstRecord });
  } else if (strategy === "frontier") {
    if (!values.state) throw new Error("--state is required for the frontier strategy");
    await runFrontier(consumer, topic, { workers, workMs, kafka, finished, firstRecord, state: values.state });
  } else {
    throw new Error(`unknown strategy ${JSON.stringify(strategy)}: naive or frontier`);
  }
}

interface Work {
  workers: number;
  workMs: number;
  finished: (offset: number) => Promise<void>;
  firstRecord: () => void;
}

type KafkaConsumer = ReturnType<Kafka["consumer"]>;

/** Auto-commit + an in-memory work queue: `eachMessage` only enqueues. */
async function runNaive(consumer: KafkaConsumer, topic: string, w: Work & { commitMs: number }): Promise<void> {
  const queue: number[] = [];
  let head = 0;
  const idle: Array<() => void> = []; // workers waiting for a record
  const worker = async (): Promise<void> => {
    for (;;) {
      while (head >= queue.length) await new Promise<void>((r) => idle.push(r));
      const offset = queue[head++];
      await sleep(w.workMs);
      await w.finished(offset);
    }
  };
  for (let i = 0; i < w.workers; i++) {
    void worker().catch((e) => (say("error", { error: String(e) }), process.exit(1)));
  }
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: true,
    autoCommitInterval: w.commitMs,
    // Returns at once: KafkaJS resolves the offset and auto-commits it, finished or not.
    eachMessage: ({ message }) => {
      w.firstRecord();
      queue.push(Number(message.offset));
      idle.shift()?.();
      return Promise.resolve();
    },
  });
}

/** offset-frontier's runner through the KafkaJS binding: auto-commit off, commits safe positions. */
async function runFrontier(
  consumer: KafkaConsumer,
  topic: string,
  w: Work & { state: string; kafka: Kafka },
): Promise<void> {
  const stateFd = openSync(w.state, "a");
  // The runner's view of the partition, one JSON line; a single write, so a SIGKILL never tears it.
  const snapshot = (kind: RunnerState["kind"], offset?: number): void => {
    const m = runner.metrics();
    const p = m.partitions.find((x) => x.topic === topic && x.partition === 0);
    const state: RunnerState = {
      kind,
      ...(offset !== undefined ? { offset } : {}),
      running: m.running,
      safe: p?.safe,
      confirmed: p?.confirmed,
      blocked: p?.blocked ?? 0,
      delivered: p?.delivered,
    };
    writeSync(stateFd, `${JSON.stringify(state)}\n`);
  };
  const runner = createKafkaJSConsumer({
    consumer,
    topics: [topic],
    fromBeginning: true,
    ordering: "unordered",
    concurrency: w.workers,
    kafka: w.kafka, // optional: the completed set is read back at assignment with or without it
    // the library's default commits (eager: the next one leaves as soon as the previous returned)
    handler: async (_message, { offset }) => {
      w.firstRecord();
      await sleep(w.workMs);
      snapshot("finish", offset); // this record still counts as running
      await w.finished(offset); // logged and fsynced; returning reports the completion
    },
    on: {
      commit: () => snapshot("commit"),
      error: (e) => say("error", { kind: e.kind, error: String(e.error) }),
    },
  });
  await runner.start();
}

// The harness holds our stdin open: when it goes away, so do we.
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
process.stdin.resume();

main().catch((e) => {
  say("error", { error: e instanceof Error ? e.stack ?? e.message : String(e) });
  process.exit(1);
});
