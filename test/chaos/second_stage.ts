/**
 * The exactly-once chaos mode's second stage (a child process on the members' runtime):
 * a new consumer group reads the round's output topic with this runtime's `consume()`
 * (`ordering: "partition"`, so a partition's sentinel arriving means every record before
 * it was handled) and prints, as one JSON line, the `from` header of every record its
 * handler saw, repeats included. The outputs were written by one transactional producer
 * per input partition, keyed and hashed over a topic with another partition count, so the
 * transactions of several producers (aborted ones included) interleave in every output
 * partition: what the handler sees is what a downstream stage of a user's pipeline sees.
 *
 * argv[2]: JSON `{ brokers, topic, group, sentinel, partitions, out }`; the sentinel value was
 * produced (without a transaction) to every partition after the round.
 */
import { writeFileSync } from "node:fs";
import process from "node:process";
import { Kafka, type KafkaMessage, logLevel } from "kafkajs";
import type { KafkaJSConsumerOptions, ParallelConsumer } from "../../adapters/kafkajs/mod.ts";
import { SENTINEL_KEY } from "../kafka/read_committed.ts";

/** What the harness passes. */
export interface SecondStageConfig {
  brokers: string;
  topic: string;
  group: string;
  sentinel: string;
  partitions: number;
  /** Where the result goes. */
  out: string;
}

type Consume = (options: KafkaJSConsumerOptions) => Promise<ParallelConsumer<KafkaMessage>>;

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2]!) as SecondStageConfig;
  const g = globalThis as Record<string, unknown>;
  const mod = g.Deno ? await import("../../adapters/deno.ts") : g.Bun ? await import("../../adapters/bun.ts") : await import("../../adapters/node.ts");
  const consume = mod.consume as Consume;
  const kafka = new Kafka({ clientId: "chaos-second-stage", brokers: [cfg.brokers], logLevel: logLevel.NOTHING });
  const seen: string[] = [];
  const waiting = new Set(Array.from({ length: cfg.partitions }, (_, p) => p));
  const controller = new AbortController();
  const consumer = await consume({
    kafka,
    consumer: kafka.consumer({ groupId: cfg.group, maxWaitTimeInMs: 100 }),
    topics: [cfg.topic],
    fromBeginning: true,
    ordering: "partition",
    concurrency: 64,
    signal: controller.signal,
    handler: (message, { partition }) => {
      if (message.value?.toString() === cfg.sentinel) {
        waiting.delete(partition);
        if (waiting.size === 0) controller.abort();
      } else if (message.key?.toString() !== SENTINEL_KEY) { // the first count's own sentinels
        seen.push(String(message.headers?.from ?? ""));
      }
      return Promise.resolve();
    },
  });
  const timer = setTimeout(() => controller.abort(), 180_000);
  await consumer.done;
  clearTimeout(timer);
  writeFileSync(cfg.out, JSON.stringify({ seen, unfinished: [...waiting] }));
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`second stage: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});
