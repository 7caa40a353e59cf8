/**
 * One member of the chaos suite's consumer group (spawned by test/chaos/harness.ts with
 * the chosen runtime: `node --import tsx`, `bun` or `deno run --allow-all`).
 *
 *   member.ts '<MemberConfig as JSON>'
 *
 * Runs `consume()` from this runtime's adapter (adapters/node.ts, bun.ts or deno.ts) with
 * ordering "key", concurrency 32, a retry policy with backoff and a dead-letter producer
 * (`<topic>.DLT`). The handler sleeps 0–3 ms, throws on some first (and a few second)
 * attempts, always throws for the poison record (key `poison`), and appends a finished
 * record to the member's log, fsynced, BEFORE it returns: a record counts as finished
 * only once it is in the log. Log writes are group-committed: lines appended while an
 * fsync runs go out together in the next one.
 *
 * Log lines (tab separated; every line: kind, time in ms since the epoch, member id, pid):
 * - `F … topic-partition offset key seq assignment` a finished record;
 * - `J … assignment partitions kafkaMemberId` KafkaJS GROUP_JOIN (a new assignment);
 * - `R … assignment` REBALANCING (an orderly revoke begins);
 * - `X … assignment restart error` CRASH (restart true: the partitions are lost, a join follows);
 * - `T … assignment` SIGTERM received (graceful shutdown begins);
 * - `K … assignment partition:offset,…` an acknowledged commit (the `commit` event);
 * - `E … assignment kind error` an `error` event of the consumer (commit failures, …);
 * - `S … assignment error` `consume()` rejected at start: the process exits 1;
 * - `C … assignment error` the consumer failed for good (`done` rejected): the process exits 1;
 * - `D … assignment state` the consumer stopped (`done` settled); the process then exits;
 * - `B … assignment size` a batch of `size` records went to the batch handler (`handler: "batch"`).
 * The assignment id is `<member>.<n>`, n counting this process's joins (KafkaJS does not
 * report the group generation); a record's id is the one current when its successful
 * attempt started.
 *
 * With `mode: "exactly-once"` the consumer is transactional and the handler also sends one
 * output per input to `<topic>.out` (keyed, hashed over its 4 partitions; headers `from` and `by`), committed
 * with the record's completion.
 *
 * With `handler: "batch"` the records go to a batch handler instead (`batch: { maxRecords:
 * 16, maxWaitMs: 20 }`): each record of a batch does what the record handler does (sleep,
 * transient failures, the poison, the output, the log line) concurrently, and a failure is
 * that record's per-record result (an `Error` at its index), so only it runs again (the
 * poison, after its retries, is dead-lettered); the batch returns once every line is
 * fsynced.
 *
 * The process exits when the harness's process is gone.
 *
 * @module
 */
import process from "node:process";
import { clearInterval } from "node:timers";
import { Kafka, logLevel } from "kafkajs";
import type { KafkaJSConsumerOptions, KafkaMessage, ParallelConsumer } from "../../adapters/kafkajs/mod.ts";
import { StartInterruptedError } from "../../core/errors.ts";
import { FsyncLog } from "./fsync_log.ts";
import { exitWithParent, oneLine, recordAttempt, workloadHandler } from "./member_kit.ts";

/** What the harness passes to a member (argv[2], JSON). */
export interface MemberConfig {
  /** Member id in this round, e.g. `m4`. */
  member: string;
  /** Bootstrap address (the proxy). */
  brokers: string;
  topic: string;
  group: string;
  /** The log file (appended). */
  log: string;
  /** Seed of the workload (which attempts fail, how long records sleep). */
  seed: number;
  /** Handler calls at once (32). */
  concurrency: number;
  /** The harness's pid: the member exits when it is gone. */
  parent: number;
  /** `exactly-once`: transactional, one output per input to `<topic>.out`. Default at-least-once. */
  mode?: "at-least-once" | "exactly-once";
  /** `batch`: the batch handler with per-record results. Default `record`. */
  handler?: "record" | "batch";
  /** `with`: `consume()` also gets `kafka` (the KafkaJS client); default only the consumer, as the docs show (exactly-once always passes it). */
  kafka?: "with" | "without";
}

type Runtime = "node" | "bun" | "deno";
type Consume = (options: KafkaJSConsumerOptions) => Promise<ParallelConsumer<KafkaMessage>>;

function runtime(): Runtime {
  const g = globalThis as Record<string, unknown>;
  return g.Deno ? "deno" : g.Bun ? "bun" : "node";
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? "") as MemberConfig;
  const rt = runtime();
  const mod = rt === "deno"
    ? await import("../../adapters/deno.ts")
    : rt === "bun"
    ? await import("../../adapters/bun.ts")
    : await import("../../adapters/node.ts");
  const consume = mod.consume as Consume;
  const eos = cfg.mode === "exactly-once";
  const log = new FsyncLog(cfg.log);
  const who = `${cfg.member}\t${process.pid}`;
  let joins = 0;
  const assignment = (): string => `${cfg.member}.${joins}`;
  const event = (kind: string, ...fields: Array<string | number | boolean>): void =>
    log.note([kind, Date.now(), who, assignment(), ...fields].join("\t") + "\n");

  const kafka = new Kafka({
    clientId: `chaos-${cfg.member}-${process.pid}`,
    brokers: [cfg.brokers],
    logLevel: logLevel.NOTHING,
  });
  let terminated = false;
  // When the harness is gone (SIGKILLed itself), so are we.
  const orphanCheck = exitWithParent(cfg.parent);
  // Once only, like the adapter's own handler: a second SIGTERM keeps its default (exit at once).
  if (rt === "deno") {
    const deno = (globalThis as unknown as {
      Deno: { addSignalListener(s: "SIGTERM", f: () => void): void; removeSignalListener(s: "SIGTERM", f: () => void): void };
    }).Deno;
    const onTerm = (): void => {
      deno.removeSignalListener("SIGTERM", onTerm);
      terminated = true;
      event("T");
    };
    deno.addSignalListener("SIGTERM", onTerm);
  } else {
    process.once("SIGTERM", () => {
      terminated = true;
      event("T");
    });
  }

  const one = recordAttempt<KafkaMessage>(cfg, log, who);

  const start = (): { consumer: Promise<ParallelConsumer<KafkaMessage>>; release(): Promise<void> } => {
    const producer = kafka.producer();
    const consumer = kafka.consumer({
      groupId: cfg.group,
      maxWaitTimeInMs: 100,
      sessionTimeout: 6_000, // the broker's minimum: a SIGKILLed member's partitions move after ~6 s
      heartbeatInterval: 500,
      rebalanceTimeout: 15_000,
    });
    // Registered before consume() adds the adapter's listeners, so they run first: records
    // of the new assignment start under the new id.
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      joins++;
      const parts = Object.entries(e.payload.memberAssignment).flatMap(([t, ps]) => ps.map((p) => `${t}-${p}`));
      event("J", parts.join(","), e.payload.memberId);
      process.stdout.write(`${JSON.stringify({ event: "joined", assignment: assignment(), partitions: parts.length })}\n`);
    });
    consumer.on(consumer.events.REBALANCING, () => event("R"));
    consumer.on(consumer.events.CRASH, (e) => event("X", e.payload.restart, oneLine(e.payload.error)));
    const started = consume({
      // As the docs show: the consumer alone reads the completed sets back at each assignment;
      // exactly-once needs the client (its producers), and --kafkajs-kafka with passes it anyway.
      ...(eos || cfg.kafka === "with" ? { kafka } : {}),
      consumer,
      topics: [cfg.topic],
      fromBeginning: true,
      ordering: "key",
      concurrency: cfg.concurrency,
      retry: { retries: 3, initialDelayMs: 10, maxDelayMs: 200 },
      deadLetter: { producer },
      ...(eos ? { transactional: { timeoutMs: 5_000, transactionTimeoutMs: 20_000 } } : {}),
      ...workloadHandler(cfg, one, assignment, event),
      on: {
        error: (e) => event("E", e.kind, oneLine(e.error)),
        commit: (e) => event("K", e.offsets.map((o) => `${o.partition}:${o.offset}`).join(",")),
        // Outages as the runner sees them (as member_port.ts logs them).
        unavailable: (e) => event("U", e.attempts, e.sinceMs, oneLine(e.lastError)),
        available: () => event("A"),
      },
    });
    const release = async (): Promise<void> => {
      await consumer.disconnect().catch(() => {});
      await producer.disconnect().catch(() => {});
    };
    return { consumer: started, release };
  };

  // Not supervised: the consumer itself rides out broker outages (it waits for the cluster
  // at start and restarts KafkaJS after a crash). A rejected start (`S`) or a failed
  // consumer (`C`) ends the process with exit code 1, which the harness counts as a
  // member that exited on its own.
  let state = "stopped";
  if (!terminated) {
    const attempt = start();
    let running: ParallelConsumer<KafkaMessage> | undefined;
    try {
      running = await attempt.consumer;
    } catch (e) {
      await attempt.release();
      // A SIGTERM before the first join ends the start with a StartInterruptedError: stopped, as asked.
      if (!(e instanceof StartInterruptedError)) {
        event("S", oneLine(e));
        throw e;
      }
    }
    try {
      await running?.done;
      state = running?.state ?? "stopped";
    } catch (e) {
      event("C", oneLine(e));
      await attempt.release();
      throw e;
    }
  }
  event("D", state);
  clearInterval(orphanCheck);
  // Nothing else holds the process now: it must exit once KafkaJS's sockets and timers are gone.
}

main().catch((e) => {
  process.stderr.write(`member: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
