/**
 * The client bindings the real-broker suites run through (not a test file): KafkaJS on
 * every runtime, Confluent's `@confluentinc/kafka-javascript` on Node (installed into
 * .cache/confluent by scripts/install-confluent.mjs; Bun and Deno cannot load its
 * addon), `@platformatic/kafka` on Bun, Deno and Node >= 22.22 / >= 24.6 (it crashes on
 * Node 20: scripts/run-kafka-tests.mjs runs its Node side on the Node 24 of
 * scripts/install-node.mjs). A suite loops over {@link bindings} and builds its consumers
 * with {@link Binding.create}, which also observes what the client reports to the runner
 * (assignments, batch sizes) the same way for each.
 *
 * `OFFSET_FRONTIER_BINDINGS=kafkajs` (or `confluent`, `platformatic`, a comma list) limits the loop;
 * `CONFLUENT_PROTOCOL=eager|cooperative|consumer` picks the Confluent group protocol
 * (default `consumer`, KIP-848); `@platformatic/kafka` runs `eager` (roundrobin) unless a
 * suite asks for `cooperative` (cooperative-sticky).
 */
import type { Buffer } from "node:buffer";
import { createRequire } from "node:module";
import { join } from "node:path";
import process from "node:process";
import { KafkaJSClient, KafkaJSTransactions } from "../../adapters/kafkajs/mod.ts";
import { transactionalDeadLetter as kafkaJSTransactionalDeadLetter } from "../../adapters/kafkajs/dead_letter.ts";
import type { ClientConsumer } from "../../adapters/platformatic/types.ts";
import type { TransactionalOptions } from "../../core/consumer/port/transactions.ts";
import type { ConfluentClient, ConfluentConsumerConfig, ConfluentKafka, ConfluentProducer } from "../../adapters/confluent/mod.ts";
import { type ConsumerClient, type Handler, ParallelConsumer, type ParallelConsumerOptions } from "../../core/mod.ts";
import { tapClient } from "./tap_client.ts";
import { CONFLUENT_PREFIX, ensureConfluent } from "../../scripts/install-confluent.mjs";
import { consumerConfig, kafka, runtime } from "./helpers.ts";

/** What a handler may read of a record: the fields both clients' messages share. */
export interface TestMessage {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly offset: string;
  readonly headers?: Record<string, unknown>;
}

/** A Confluent group protocol: classic eager, classic cooperative-sticky, or KIP-848. */
export type ConfluentProtocol = "eager" | "cooperative" | "consumer";

/** How a suite asks for a consumer, whichever the binding. */
export interface CreateOptions extends Omit<ParallelConsumerOptions<TestMessage>, "handler" | "transactional"> {
  brokers: string;
  groupId: string;
  topics: string[];
  fromBeginning?: boolean;
  handler?: Handler<TestMessage>;
  /** Dead letters through the binding's own producer (topic `<topic>.DLT`). */
  deadLetter?: boolean;
  /** Fetch at most this many bytes per partition (small batches). */
  maxBytesPerPartition?: number;
  /** Every assignment change: the partitions assigned now. */
  onAssignment?: (partitions: number[]) => void;
  /** Every delivered batch. */
  onBatch?: (partition: number, size: number) => void;
  /** The group protocol: Confluent (default from CONFLUENT_PROTOCOL, else `consumer`); platformatic `eager` (default) or `cooperative`. */
  protocol?: ConfluentProtocol;
  /** KafkaJS only: the binding without the KafkaJS client (`kafka`), as the README calls it. */
  withoutKafka?: boolean;
  /** Exactly-once mode through the binding's transactional port (not the Confluent binding: it has none); dead letters then go in the transactions. */
  transactional?: TransactionalOptions;
}

/** The bindings the suites know. */
export type BindingName = "kafkajs" | "confluent" | "platformatic";

/** One binding under test. */
export interface Binding {
  readonly name: BindingName;
  /** A parallel consumer through this binding, not started. */
  create(options: CreateOptions): ParallelConsumer<TestMessage>;
}

/** The Confluent package's KafkaJS namespace (the parts the tests use). */
export interface ConfluentKafkaJS {
  Kafka: new (config: { kafkaJS: { brokers: string[]; logLevel?: number } }) => ConfluentKafka & {
    producer(config?: Record<string, unknown>): ConfluentProducer;
  };
  logLevel: { NOTHING: number; ERROR: number };
}

/** `@confluentinc/kafka-javascript`, installed on first use (Node only). */
export function loadConfluent(): { KafkaJS: ConfluentKafkaJS } {
  ensureConfluent();
  const require = createRequire(join(CONFLUENT_PREFIX, "node_modules", "resolve-from-here.js"));
  return require("@confluentinc/kafka-javascript") as { KafkaJS: ConfluentKafkaJS };
}

/** Wraps a client so that what it reports to the runner is observed. */
function observed<M>(client: ConsumerClient<M>, options: CreateOptions): ConsumerClient<M> {
  const { onAssignment, onBatch } = options;
  if (!onAssignment && !onBatch) return client;
  const now = new Set<number>();
  const report = (): void => onAssignment?.([...now].sort((a, b) => a - b));
  return tapClient(client, {
    assigned: (partitions, incremental) => {
      if (!incremental) now.clear();
      for (const p of partitions) now.add(p.partition);
      if (!incremental || partitions.length > 0) report();
    },
    revoked: (partitions) => {
      // a revoke of everything (eager) shows as an empty assignment: incremental protocols never show one
      if (partitions) for (const p of partitions) now.delete(p.partition);
      else now.clear();
      report();
    },
    lost: (partitions) => {
      if (partitions) for (const p of partitions) now.delete(p.partition);
      else now.clear();
      report();
    },
    deliver: (batch) => onBatch?.(batch.partition, batch.messages.length),
  });
}

function runnerOptions(o: CreateOptions): Omit<ParallelConsumerOptions<TestMessage>, "handler"> {
  const {
    brokers: _b,
    groupId: _g,
    topics: _t,
    fromBeginning: _f,
    handler: _h,
    deadLetter: _d,
    maxBytesPerPartition: _m,
    onAssignment: _a,
    onBatch: _o,
    protocol: _p,
    transactional: _x,
    withoutKafka: _k,
    ...rest
  } = o;
  return rest;
}

const KAFKAJS: Binding = {
  name: "kafkajs",
  create(o) {
    const k = kafka(o.brokers);
    const consumer = k.consumer({
      ...consumerConfig(o.groupId),
      ...(o.maxBytesPerPartition !== undefined ? { maxBytesPerPartition: o.maxBytesPerPartition } : {}),
    });
    if (o.transactional) {
      // As createKafkaJSConsumer does: the port opens (fences) each partition, then reads and seeks.
      const client = new KafkaJSClient(consumer, o.topics, { probe: k, readsCommitted: false, ...(o.fromBeginning !== undefined ? { fromBeginning: o.fromBeginning } : {}) });
      const port = new KafkaJSTransactions(k, consumer, o.transactional, {
        ...(o.fromBeginning !== undefined ? { fromBeginning: o.fromBeginning } : {}),
        ...(o.deadLetter ? { deadLetter: kafkaJSTransactionalDeadLetter({ producer: k.producer() }) } : {}),
      });
      return new ParallelConsumer<TestMessage>(observed(client, o), { ...runnerOptions(o), handler: o.handler, transactional: { ...o.transactional, port } });
    }
    const client = new KafkaJSClient(consumer, o.topics, {
      ...(o.withoutKafka ? {} : { kafka: k }),
      ...(o.fromBeginning !== undefined ? { fromBeginning: o.fromBeginning } : {}),
      ...(o.deadLetter ? { deadLetter: { producer: k.producer() } } : {}),
    });
    return new ParallelConsumer<TestMessage>(observed(client, o), { ...runnerOptions(o), handler: o.handler });
  },
};

/** The Confluent consumer config for a protocol (short waits so pauses and resumes act quickly). */
export function confluentConfig(groupId: string, protocol: ConfluentProtocol): ConfluentConsumerConfig {
  const common: ConfluentConsumerConfig = { "group.id": groupId, "fetch.wait.max.ms": 100, "js.consumer.max.batch.size": -1 };
  if (process.env.CONFLUENT_DEBUG) common.debug = process.env.CONFLUENT_DEBUG;
  if (protocol === "consumer") return { ...common, "group.protocol": "consumer" };
  return {
    ...common,
    "session.timeout.ms": 10_000,
    "heartbeat.interval.ms": 1_000,
    "partition.assignment.strategy": protocol === "cooperative" ? "cooperative-sticky" : "range",
  };
}

/** The Confluent binding, or `undefined` where it cannot run. */
async function confluentBinding(): Promise<Binding | undefined> {
  if (runtime() !== "node") return undefined;
  const { ConfluentClient: Client } = await import("../../adapters/confluent/mod.ts") as { ConfluentClient: typeof ConfluentClient };
  const { KafkaJS } = loadConfluent();
  return {
    name: "confluent",
    create(o) {
      const k = new KafkaJS.Kafka({ kafkaJS: { brokers: o.brokers.split(","), logLevel: KafkaJS.logLevel.ERROR } });
      const protocol = o.protocol ?? (process.env.CONFLUENT_PROTOCOL as ConfluentProtocol | undefined) ?? "consumer";
      const config = confluentConfig(o.groupId, protocol);
      if (o.maxBytesPerPartition !== undefined) {
        // Small batches: librdkafka prefetches far ahead, so the batch size is what bounds them.
        config["max.partition.fetch.bytes"] = o.maxBytesPerPartition;
        config["js.consumer.max.batch.size"] = 500; // about what KafkaJS fetches per partition here
      }
      const client = new Client(k, config, o.topics, {
        revokeTimeoutMs: (o.drainTimeoutMs ?? 5_000) + 5_000,
        ...(o.fromBeginning !== undefined ? { fromBeginning: o.fromBeginning } : {}),
        ...(o.deadLetter ? { deadLetter: { producer: k.producer() } } : {}),
      });
      return new ParallelConsumer<TestMessage>(observed(client, o), { ...runnerOptions(o), handler: o.handler });
    },
  };
}

/** Whether this runtime can run `@platformatic/kafka` (Bun, Deno, Node >= 22.22 or >= 24.6). */
export function platformaticRuns(): boolean {
  if (runtime() !== "node") return true;
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 24 || (major === 24 && minor >= 6) || (major === 22 && minor >= 22) || major === 23;
}

/** The `@platformatic/kafka` binding, or `undefined` where it cannot run. */
async function platformaticBinding(): Promise<Binding | undefined> {
  if (!platformaticRuns()) return undefined;
  const { PlatformaticClient, PlatformaticTransactions } = await import("../../adapters/platformatic/mod.ts");
  const { transactionalDeadLetter: platformaticTransactionalDeadLetter } = await import("../../adapters/platformatic/dead_letter.ts");
  const { Consumer, Producer } = await import("@platformatic/kafka");
  return {
    name: "platformatic",
    create(o) {
      const bootstrapBrokers = o.brokers.split(",");
      const clientId = `${o.groupId}-${Math.random().toString(36).slice(2, 8)}`;
      // Short session and heartbeat: a rebalance is noticed within a second, as with the KafkaJS config.
      if (o.protocol === "consumer") throw new Error("@platformatic/kafka: the binding runs the classic protocol only (see docs/platformatic.md)");
      const consumer = new Consumer({
        groupId: o.groupId,
        clientId,
        bootstrapBrokers,
        sessionTimeout: 10_000,
        heartbeatInterval: 1_000,
        rebalanceTimeout: 30_000,
        ...(o.protocol === "cooperative" ? { protocols: [{ name: "cooperative-sticky", version: 3 }] } : {}),
      });
      if (o.transactional) {
        // As createPlatformaticConsumer does: the port opens (fences) each partition, then reads and seeks.
        const client = new PlatformaticClient(consumer, o.topics, {
          maxWaitTime: 100,
          transactional: true,
          ...(o.fromBeginning !== undefined ? { fromBeginning: o.fromBeginning } : {}),
          ...(o.maxBytesPerPartition !== undefined ? { maxBytesPerPartition: o.maxBytesPerPartition } : {}),
        });
        const port = new PlatformaticTransactions({
          consumer: consumer as unknown as ClientConsumer,
          membership: () => client.membership(),
          seek: (positions, unknownOnly) => client.seek(positions, unknownOnly),
          fromBeginning: o.fromBeginning ?? false,
          ...(o.deadLetter ? { deadLetter: platformaticTransactionalDeadLetter({ producer: new Producer({ clientId: `${clientId}-dlq`, bootstrapBrokers }) }) } : {}),
        }, o.transactional);
        return new ParallelConsumer<TestMessage>(observed(client, o), { ...runnerOptions(o), handler: o.handler, transactional: { ...o.transactional, port } });
      }
      const client = new PlatformaticClient(consumer, o.topics, {
        maxWaitTime: 100,
        ...(o.fromBeginning !== undefined ? { fromBeginning: o.fromBeginning } : {}),
        ...(o.maxBytesPerPartition !== undefined ? { maxBytesPerPartition: o.maxBytesPerPartition } : {}),
        ...(o.deadLetter ? { deadLetter: { producer: new Producer({ clientId: `${clientId}-dlq`, bootstrapBrokers }) } } : {}),
      });
      return new ParallelConsumer<TestMessage>(observed(client, o), { ...runnerOptions(o), handler: o.handler });
    },
  };
}

const wanted = process.env.OFFSET_FRONTIER_BINDINGS?.split(",").map((s) => s.trim()).filter(Boolean);
const all: Binding[] = [KAFKAJS];
if (!wanted || wanted.includes("confluent")) {
  const c = await confluentBinding();
  if (c) all.push(c);
}
if (!wanted || wanted.includes("platformatic")) {
  const p = await platformaticBinding();
  if (p) all.push(p);
}

/** The bindings this runtime runs the suites through. */
export function bindings(): Binding[] {
  return all.filter((b) => !wanted || wanted.includes(b.name));
}

/**
 * Every binding this runtime loaded, selected or not: KafkaJS always, Confluent and
 * @platformatic/kafka where they run and OFFSET_FRONTIER_BINDINGS (if set) names them. The
 * handover suite pairs a selected binding with these (so the Node 24 run, which selects
 * platformatic only, still hands over to and from KafkaJS).
 */
export function bindingPartners(): Binding[] {
  return [...all];
}

/**
 * {@link bindings} without the named ones: a suite that cannot pass through a binding yet
 * excludes it explicitly, with a comment saying why.
 */
export function bindingsExcept(...names: BindingName[]): Binding[] {
  return bindings().filter((b) => !names.includes(b.name));
}
