/**
 * A newcomer's slips get a typed error that names them, at construction, before anything
 * connects: a misspelled option anywhere (with the nearest known name), one KafkaJS or
 * `@platformatic/kafka` consumer given to two offset-frontier consumers, a Confluent consumer given to the
 * KafkaJS binding, a KafkaJS client given to the Confluent binding. No broker: the
 * clients are real but never connect.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { createKafkaJSConsumer } from "../../adapters/kafkajs/mod.ts";
import { ConfluentClient } from "../../adapters/confluent/client.ts";
import type { ConfluentKafka } from "../../adapters/confluent/types.ts";
import { InvalidArgumentError, ParallelConsumer } from "../../core/mod.ts";
import { checkKnownOptions } from "../../core/consumer/known_options.ts";
import { MemoryClient } from "./runner_client.ts";

/** Whether @platformatic/kafka runs here (Bun, Deno, Node >= 22.22). */
function platformaticRuns(): boolean {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  if (g.Bun !== undefined || g.Deno !== undefined) return true;
  const [major, minor] = process.versions.node.split(".").map(Number);
  return major > 24 || (major === 24 && minor >= 6) || (major === 22 && minor >= 22) || major === 23;
}

const kafka = (): Kafka => new Kafka({ brokers: ["127.0.0.1:1"], logLevel: logLevel.NOTHING });
const handler = (): Promise<void> => Promise.resolve();

/** Asserts an InvalidArgumentError whose message matches every pattern. */
function refused(f: () => unknown, ...patterns: RegExp[]): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof InvalidArgumentError, `an InvalidArgumentError, got ${String(e)}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

test("a misspelled option is refused, naming it and the nearest known name, at every level", () => {
  const k = kafka();
  const base = { kafka: k, topics: ["t"], handler };
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), concurency: 10 } as never), /"concurency"/, /did you mean "concurrency"/);
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), fromBeggining: true } as never), /did you mean "fromBeginning"/);
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), retry: { retires: 3 } } as never), /options\.retry/, /did you mean "retries"/);
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), commit: { intervallMs: 5 } } as never), /options\.commit/, /"intervalMs"/);
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), commit: { completedSet: { budgt: 100 } } } as never), /completedSet/, /"budget"/);
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), on: { comit: () => {} } } as never), /options\.on/, /"commit"/);
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), cluster: { maxUnavailable: 5 } } as never), /"maxUnavailableMs"/);
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), deadLetter: { producer: k.producer(), topik: "x" } } as never), /options\.deadLetter/, /"topic"/);
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), transactional: { timeOutMs: 5 } } as never), /options\.transactional/, /"timeoutMs"/);
  // far from every name: the known ones are listed instead of a guess
  refused(() => createKafkaJSConsumer({ ...base, consumer: k.consumer({ groupId: "g" }), zzzzzzzzzz: 1 } as never), /"zzzzzzzzzz"/, /known: .*concurrency/);
  // the runner checks its own options whatever the binding
  refused(() => new ParallelConsumer(new MemoryClient(), { handler, ordering: "key", concurrencyy: 2 } as never), /did you mean "concurrency"/);
  // every documented name passes
  createKafkaJSConsumer({
    ...base,
    consumer: k.consumer({ groupId: "g" }),
    fromBeginning: true,
    ordering: "key",
    concurrency: 4,
    maxInFlightPerPartition: 4,
    retry: { retries: 1, initialDelayMs: 1, maxDelayMs: 2, multiplier: 2, jitter: 0 },
    commit: { intervalMs: 100, completedSet: { budget: 100 } },
    cluster: { maxUnavailableMs: 1_000 },
    on: { commit: () => {} },
    drainTimeoutMs: 10,
    shutdownGraceMs: 10,
  });
});

test("a misspelled option of the platformatic binding is refused, naming the nearest of its own names", { skip: !platformaticRuns() && "@platformatic/kafka needs Node >= 22.22" }, async () => {
  const { createPlatformaticConsumer } = await import("../../adapters/platformatic/mod.ts");
  const { Consumer, Producer } = await import("@platformatic/kafka");
  const consumer = (): InstanceType<typeof Consumer> => new Consumer({ groupId: "g", clientId: "c", bootstrapBrokers: ["127.0.0.1:1"] });
  const base = { topics: ["t"], handler };
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), maxWaitTim: 100 } as never), /"maxWaitTim"/, /did you mean "maxWaitTime"/);
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), concurency: 4 } as never), /did you mean "concurrency"/);
  const producer = new Producer({ clientId: "p", bootstrapBrokers: ["127.0.0.1:1"] });
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), deadLetter: { producer, topik: "x" } } as never), /options\.deadLetter/, /"topic"/);
  createPlatformaticConsumer({ ...base, consumer: consumer(), fromBeginning: true, maxWaitTime: 100, maxBytes: 1 << 20, readCommitted: true, concurrency: 4 });
  // Exactly-once: its own option names, a prefix the client's ids accept, and read_committed.
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), transactional: { idPrefx: "x" } } as never), /options\.transactional/, /did you mean "idPrefix"/);
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), transactional: { idPrefix: "a b" } }), /transactional\.idPrefix/, /"a b"/);
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), transactional: { transactionTimeoutMs: 0 } }), /transactionTimeoutMs/);
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), readCommitted: false, transactional: {} }), /needs readCommitted/);
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), transactional: { producers: "topic" as never } }), /transactional\.producers/, /"topic"/);
  // One producer per member: removed after a chaos round lost outputs through it; a typed refusal that says so.
  refused(() => createPlatformaticConsumer({ ...base, consumer: consumer(), transactional: { producers: "member" as never } }), /"member" \(one producer per member\) is not supported/, /docs\/exactly-once\.md/);
  createPlatformaticConsumer({ ...base, consumer: consumer(), transactional: { producers: "partition" } });
  const eos = createPlatformaticConsumer({ ...base, consumer: consumer(), transactional: { idPrefix: "p", timeoutMs: 5_000, transactionTimeoutMs: 30_000 } });
  assert.ok(eos.metrics().transactions, "the exactly-once metrics are there");
  await producer.close();
});

test("the platformatic binding runs eager or cooperative-sticky groups, and refuses group options it cannot run, naming them", { skip: !platformaticRuns() && "@platformatic/kafka needs Node >= 22.22" }, async () => {
  const { PlatformaticClient } = await import("../../adapters/platformatic/mod.ts");
  const { Consumer } = await import("@platformatic/kafka");
  const consumer = (extra: Record<string, unknown>): InstanceType<typeof Consumer> =>
    new Consumer({ groupId: "g", clientId: "c", bootstrapBrokers: ["127.0.0.1:1"], ...extra });
  new PlatformaticClient(consumer({}), ["t"]);
  new PlatformaticClient(consumer({ protocols: [{ name: "roundrobin", version: 1 }] }), ["t"]);
  new PlatformaticClient(consumer({ protocols: [{ name: "cooperative-sticky", version: 3 }] }), ["t"]);
  refused(() => new PlatformaticClient(consumer({ groupProtocol: "consumer" }), ["t"]), /groupProtocol must be "classic"/, /"consumer"/);
  refused(
    () => new PlatformaticClient(consumer({ protocols: [{ name: "cooperative-sticky", version: 3 }, { name: "roundrobin", version: 1 }] }), ["t"]),
    /protocols must be either \[\{ name: "cooperative-sticky" \}\] alone or eager assignors only/,
    /roundrobin/,
  );
  refused(() => new PlatformaticClient(consumer({ protocolsMetadata: () => undefined }), ["t"]), /protocolsMetadata must not be set/);
  new PlatformaticClient(consumer({}), ["t"], { transactional: true });
  refused(
    () => new PlatformaticClient(consumer({ protocols: [{ name: "cooperative-sticky", version: 3 }] }), ["t"], { transactional: true }),
    /transactional \(exactly-once\) runs with eager assignors only/,
    /cooperative-sticky/,
  );
});

test("checkKnownOptions leaves non-objects to the caller's own checks and takes exact names", () => {
  checkKnownOptions("x", undefined, { a: true });
  checkKnownOptions("x", null, { a: true });
  checkKnownOptions("x", 5, { a: true });
  checkKnownOptions("x", { a: 1 }, { a: true });
  refused(() => checkKnownOptions("x", { A: 1 }, { a: true }), /x has an unknown option "A" \(did you mean "a"\?\)/);
});

test("one KafkaJS consumer given to a second offset-frontier consumer is refused; a refused construction takes nothing", () => {
  const k = kafka();
  const consumer = k.consumer({ groupId: "g" });
  // refused for another reason first: the consumer stays free
  refused(() => createKafkaJSConsumer({ consumer, kafka: k, topics: [], handler }), /topics/);
  // … or by the runner, after the binding was built around it
  refused(() => createKafkaJSConsumer({ consumer, kafka: k, topics: ["t"], handler, concurrency: -1 }), /concurrency/);
  refused(() => createKafkaJSConsumer({ consumer, kafka: k, topics: ["t"], handler, transactional: { timeoutMs: -1 } }), /timeoutMs/);
  createKafkaJSConsumer({ consumer, kafka: k, topics: ["t"], handler });
  refused(() => createKafkaJSConsumer({ consumer, kafka: k, topics: ["t"], handler }), /already driven by another offset-frontier consumer/, /kafka\.consumer/);
  createKafkaJSConsumer({ consumer: k.consumer({ groupId: "g" }), kafka: k, topics: ["t"], handler }); // a new one is fine
});

test("one @platformatic/kafka Consumer given to a second offset-frontier consumer is refused; a refused construction takes nothing", { skip: !platformaticRuns() && "@platformatic/kafka needs Node >= 22.22" }, async () => {
  const { createPlatformaticConsumer } = await import("../../adapters/platformatic/mod.ts");
  const { Consumer } = await import("@platformatic/kafka");
  const make = () => new Consumer({ groupId: "g", clientId: "c", bootstrapBrokers: ["127.0.0.1:1"] });
  const consumer = make();
  try {
    // refused for other reasons first: the consumer stays free
    refused(() => createPlatformaticConsumer({ consumer, topics: [], handler }), /topics/);
    refused(() => createPlatformaticConsumer({ consumer, topics: ["t"], handler, transactional: { producers: "member" as "partition" } }), /"member" \(one producer per member\) is not supported/);
    createPlatformaticConsumer({ consumer, topics: ["t"], handler });
    // the issue-42 slip: consume() twice with one Consumer handled every record twice
    refused(() => createPlatformaticConsumer({ consumer, topics: ["t"], handler }), /already driven by another offset-frontier consumer/, /new Consumer\(/);
    refused(() => createPlatformaticConsumer({ consumer, topics: ["t"], handler, transactional: {} }), /already driven/);
    const other = make();
    createPlatformaticConsumer({ consumer: other, topics: ["t"], handler }); // a new one is fine
    await other.close(true);
  } finally {
    await consumer.close(true);
  }
});

test("a consumer without KafkaJS's events (Confluent's KafkaJS-style one) is refused by the KafkaJS binding, naming the other binding", () => {
  const confluentLike = {
    run: () => Promise.resolve(),
    commitOffsets: () => Promise.resolve(),
    get events(): never {
      throw new Error("Not implemented");
    },
  };
  refused(() => createKafkaJSConsumer({ consumer: confluentLike as never, topics: ["t"], handler }), /not a KafkaJS consumer/, /offset-frontier\/confluent/);
});

test("a KafkaJS client given to the Confluent binding is refused, naming what it is", () => {
  refused(() => new ConfluentClient(kafka() as unknown as ConfluentKafka, { "group.id": "g" }, ["t"]), /is a KafkaJS client/, /offset-frontier\/node/);
});
