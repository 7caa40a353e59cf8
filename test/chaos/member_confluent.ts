/**
 * One member of the chaos suite's consumer group through the Confluent binding
 * (`--client confluent`, Node only; spawned by test/chaos/harness.ts as
 * `node --import tsx member_confluent.ts '<MemberConfig as JSON>'`). The workload, the
 * handler and the log are member.ts's; the group protocol comes from CONFLUENT_PROTOCOL
 * (`eager`, `cooperative` or `consumer`, default `consumer`), set by run.ts's `--protocol`.
 *
 * Log lines as member.ts's, with these client events:
 * - `J … assignment partitions memberId` a new assignment: the whole set after the
 *   change (an incremental one counts as a new assignment id; memberId is `-`);
 * - `R … assignment` an orderly revoke begins (the awaited rebalance callback);
 * - `X … assignment true lost` partitions were lost (a rejoin follows).
 *
 * @module
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import process from "node:process";
import { clearInterval, setInterval } from "node:timers";
import { ConfluentClient, type ConfluentKafka, type ConfluentMessage, type ConfluentProducer } from "../../adapters/confluent/mod.ts";
import type { BatchContext, ClientSink, ConsumerClient, RecordContext } from "../../core/mod.ts";
import { ParallelConsumer } from "../../core/mod.ts";
import { CONFLUENT_PREFIX } from "../../scripts/install-confluent.mjs";
import { confluentConfig, type ConfluentProtocol } from "../kafka/bindings.ts";
import { FsyncLog } from "./fsync_log.ts";
import type { MemberConfig } from "./member.ts";
import { BATCH_RECORDS, BATCH_WAIT_MS, failsAttempt, POISON_KEY, sleepMs } from "./workload.ts";

interface KafkaJSNamespace {
  Kafka: new (config: { kafkaJS: { brokers: string[]; logLevel?: number; clientId?: string; logger?: unknown } }) => ConfluentKafka & {
    producer(config?: Record<string, unknown>): ConfluentProducer;
  };
  logLevel: { NOTHING: number };
}

const START_RETRY_MS = 180_000;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const oneLine = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).replace(/\s+/g, " ").slice(0, 300);

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? "") as MemberConfig;
  const protocol = (process.env.CONFLUENT_PROTOCOL as ConfluentProtocol | undefined) ?? "consumer";
  const { KafkaJS } = createRequire(join(CONFLUENT_PREFIX, "node_modules", "x.js"))("@confluentinc/kafka-javascript") as {
    KafkaJS: KafkaJSNamespace;
  };
  const log = new FsyncLog(cfg.log);
  const who = `${cfg.member}\t${process.pid}`;
  let joins = 0;
  const assignment = (): string => `${cfg.member}.${joins}`;
  const event = (kind: string, ...fields: Array<string | number | boolean>): void =>
    log.note([kind, Date.now(), who, assignment(), ...fields].join("\t") + "\n");
  let terminated = false;
  const orphanCheck = setInterval(() => {
    try {
      process.kill(cfg.parent, 0);
    } catch {
      process.exit(0);
    }
  }, 1_000);
  orphanCheck.unref();
  process.once("SIGTERM", () => {
    terminated = true;
    event("T");
  });

  // CHAOS_CLIENT_LOG=error|warn|info|debug: the client's own log lines go to the member's log as `L` lines.
  const clientLog = process.env.CHAOS_CLIENT_LOG;
  const levels: Record<string, number> = { error: 1, warn: 2, info: 3, debug: 4 };
  const clientLevel = clientLog !== undefined ? levels[clientLog] : undefined;
  const line = (level: string) => (message: unknown, extra?: unknown): void => {
    if ((levels[level] ?? 0) > (clientLevel ?? 0)) return;
    event("L", level, oneLine(`${String(message)} ${extra === undefined ? "" : JSON.stringify(extra)}`));
  };
  const logger = clientLevel === undefined ? undefined : {
    error: line("error"),
    warn: line("warn"),
    info: line("info"),
    debug: line("debug"),
    setLogLevel: () => {},
    namespace: () => logger,
  };
  const kafka = new KafkaJS.Kafka({
    kafkaJS: {
      brokers: [cfg.brokers],
      clientId: `chaos-${cfg.member}-${process.pid}`,
      logLevel: clientLevel ?? KafkaJS.logLevel.NOTHING,
      ...(logger !== undefined ? { logger } : {}),
    },
  });
  const config = confluentConfig(cfg.group, protocol);
  if (protocol !== "consumer") config["session.timeout.ms"] = 6_000; // like member.ts: a SIGKILLed member's partitions move after ~6 s
  if (protocol !== "consumer") config["heartbeat.interval.ms"] = 500;
  config["max.poll.interval.ms"] = 15_000;

  /** Logs the client's group events (what member.ts logs from KafkaJS's). */
  const observed = (client: ConsumerClient<ConfluentMessage>): ConsumerClient<ConfluentMessage> => {
    const now = new Set<string>();
    const join_ = (): void => {
      joins++;
      event("J", [...now].sort().join(","), "-");
      process.stdout.write(`${JSON.stringify({ event: "joined", assignment: assignment(), partitions: now.size })}\n`);
    };
    return new Proxy(client, {
      get(target, prop) {
        if (prop !== "start") {
          const v = Reflect.get(target, prop, target);
          return typeof v === "function" ? v.bind(target) : v;
        }
        return (sink: ClientSink<ConfluentMessage>) =>
          target.start({
            unavailable: (error, brokers) => sink.unavailable(error, brokers),
            available: () => sink.available(),
            signal: sink.signal,
            assigned: (partitions, committed, incremental) => {
              if (!incremental) now.clear();
              for (const p of partitions) now.add(`${p.topic}-${p.partition}`);
              if (!incremental || partitions.length > 0) join_(); // before the runner: records of it start under the new id
              sink.assigned(partitions, committed, incremental);
            },
            revoking: (partitions) => {
              event("R");
              for (const p of partitions ?? []) now.delete(`${p.topic}-${p.partition}`);
              return sink.revoking(partitions);
            },
            lost: (partitions) => {
              event("X", true, "lost");
              if (partitions) for (const p of partitions) now.delete(`${p.topic}-${p.partition}`);
              else now.clear();
              sink.lost(partitions);
            },
            deliver: (batch) => sink.deliver(batch),
            failed: (error) => sink.failed(error),
          });
      },
    });
  };

  /** One record's attempt in assignment `id` (member.ts's): an Error when it fails, else nothing once its line is in the log. */
  const one = async (message: ConfluentMessage, { topic, partition, offset, attempt }: RecordContext, id: string): Promise<Error | undefined> => {
    const key = message.key?.toString() ?? "";
    await sleep(sleepMs(cfg.seed, partition, offset));
    if (key === POISON_KEY) return new Error(`poison record ${topic}-${partition}@${offset}`);
    if (failsAttempt(cfg.seed, partition, offset, attempt)) {
      return new Error(`transient failure of ${topic}-${partition}@${offset}, attempt ${attempt}`);
    }
    const seq = message.value?.toString() ?? "";
    await log.append(`F\t${Date.now()}\t${who}\t${topic}-${partition}\t${offset}\t${key}\t${seq}\t${id}\n`);
    return undefined;
  };

  const start = (): { consumer: ParallelConsumer<ConfluentMessage>; started: Promise<void> } => {
    const client = new ConfluentClient(kafka, config, [cfg.topic], {
      fromBeginning: true,
      deadLetter: { producer: kafka.producer() },
      revokeTimeoutMs: 10_000,
    });
    const consumer = new ParallelConsumer<ConfluentMessage>(observed(client), {
      ordering: "key",
      concurrency: cfg.concurrency,
      retry: { retries: 3, initialDelayMs: 10, maxDelayMs: 200 },
      ...(cfg.handler === "batch"
        ? {
          batch: {
            maxRecords: BATCH_RECORDS,
            maxWaitMs: BATCH_WAIT_MS,
            // Per-record results (member.ts): a failed record is an Error at its index; only it runs again.
            handler: (messages: ConfluentMessage[], { records }: BatchContext) => {
              const id = assignment();
              event("B", messages.length);
              return Promise.all(messages.map((m, i) => one(m, records[i], id)));
            },
          },
        }
        : {
          handler: async (message: ConfluentMessage, context: RecordContext) => {
            const failed = await one(message, context, assignment());
            if (failed) throw failed;
          },
        }),
      on: {
        error: (e) => event("E", e.kind, oneLine(e.error)),
        commit: (e) => event("K", e.offsets.map((o) => `${o.partition}:${o.offset}`).join(",")),
      },
    });
    return { consumer, started: consumer.start() };
  };

  let failingSince: number | undefined;
  let state = "stopped";
  for (;;) {
    if (terminated) break;
    const attempt = start();
    const onTerm = (): void => void attempt.consumer.shutdown();
    process.once("SIGTERM", onTerm);
    try {
      await attempt.started;
    } catch (e) {
      process.off("SIGTERM", onTerm);
      event("S", oneLine(e));
      failingSince ??= Date.now();
      if (Date.now() - failingSince > START_RETRY_MS) throw e;
      await sleep(1_000);
      continue;
    }
    failingSince = undefined;
    if (terminated) void attempt.consumer.shutdown();
    try {
      await attempt.consumer.done;
      state = attempt.consumer.state;
      break;
    } catch (e) {
      event("C", oneLine(e));
      await attempt.consumer.shutdown().catch(() => {});
      await sleep(1_000);
    } finally {
      process.off("SIGTERM", onTerm);
    }
  }
  event("D", state);
  clearInterval(orphanCheck);
}

main().catch((e) => {
  process.stderr.write(`member: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
