/**
 * Real broker: shutdown mid-run through the AbortSignal, then a restart in the same
 * group. Nothing is lost (the two consumers together process every record) and nothing
 * completed before the shutdown is processed again (the sets are disjoint): the
 * shutdown lets running records finish, commits, and only then leaves the group.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts): for KafkaJS this
 * runtime's adapter (`adapters/node.ts`, `bun.ts` or `deno.ts`) and its `consume()`, for
 * Confluent `consumeConfluent()`, for @platformatic/kafka its entry's `consume()`. Runs unchanged under `node --import tsx --test`, `bun test` and
 * `deno test -A`; uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import process from "node:process";
import type { KafkaJSConsumerOptions, Ordering, ParallelConsumer } from "../../adapters/kafkajs/mod.ts";
import type { Handler } from "../../core/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { type BindingName, bindings, type ConfluentProtocol, confluentConfig, loadConfluent, type TestMessage } from "./bindings.ts";
import { asObject, consumerConfig, kafka, runtime, sleep, unique, waitFor } from "./helpers.ts";

const RECORDS = 6_000;
const STOP_AFTER = 2_000;

interface Run {
  brokers: string;
  groupId: string;
  topic: string;
  ordering: Ordering;
  signal: AbortSignal;
  handler: Handler<TestMessage>;
}
type Consume = (run: Run) => Promise<ParallelConsumer<TestMessage>>;

/**
 * The binding's signal-aware entry point: this runtime's adapter's consume() for KafkaJS,
 * consumeConfluent() for Confluent, offset-frontier/platformatic's consume() for @platformatic/kafka.
 */
async function adapter(binding: BindingName): Promise<Consume> {
  if (binding === "platformatic") {
    const { consume } = await import("../../adapters/platformatic/mod.ts");
    const { Consumer } = await import("@platformatic/kafka");
    return (r) =>
      consume({
        consumer: new Consumer({ groupId: r.groupId, clientId: unique("shutdown"), bootstrapBrokers: r.brokers.split(",") }),
        topics: [r.topic],
        fromBeginning: true,
        ordering: r.ordering,
        concurrency: 32,
        maxWaitTime: 100,
        signal: r.signal,
        handler: r.handler,
      }) as unknown as Promise<ParallelConsumer<TestMessage>>;
  }
  if (binding === "confluent") {
    const { consumeConfluent } = await import("../../adapters/confluent/mod.ts");
    const { KafkaJS } = loadConfluent();
    const protocol = (process.env.CONFLUENT_PROTOCOL as ConfluentProtocol | undefined) ?? "consumer";
    return (r) =>
      consumeConfluent({
        kafka: new KafkaJS.Kafka({ kafkaJS: { brokers: r.brokers.split(","), logLevel: KafkaJS.logLevel.ERROR } }),
        config: confluentConfig(r.groupId, protocol),
        topics: [r.topic],
        fromBeginning: true,
        ordering: r.ordering,
        concurrency: 32,
        signal: r.signal,
        handler: r.handler,
      }) as unknown as Promise<ParallelConsumer<TestMessage>>;
  }
  const rt = runtime();
  const mod = rt === "deno"
    ? await import("../../adapters/deno.ts")
    : rt === "bun"
    ? await import("../../adapters/bun.ts")
    : await import("../../adapters/node.ts");
  const consume = mod.consume as unknown as (options: KafkaJSConsumerOptions) => Promise<ParallelConsumer<TestMessage>>;
  return (r) =>
    consume({
      consumer: kafka(r.brokers).consumer(consumerConfig(r.groupId)),
      topics: [r.topic],
      fromBeginning: true,
      ordering: r.ordering,
      concurrency: 32,
      signal: r.signal,
      handler: r.handler,
    });
}

describe(`shutdown and restart (${runtime()} adapter)`, () => {
  for (const { name } of bindings()) for (const ordering of ["unordered", "key"] as Ordering[]) {
    test(`${ordering} (${name}): nothing lost, nothing completed before the shutdown processed again`, { timeout: 180_000 }, async () => {
      const consume = await adapter(name);
      await withBroker(async (brokers) => {
        const topic = unique(`shutdown-${ordering}`);
        const groupId = unique(`shutdown-${ordering}-group`);
        await createTopic(brokers, topic, 3);
        await produce(brokers, topic, Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i % 1000}`, value: `${i}` })));
        const ends = asObject(await endOffsets(brokers, topic));

        const run = async (processed: Set<string>, stopWhen: () => boolean) => {
          const controller = new AbortController();
          const firstOffset = new Map<number, number>();
          const consumer = await consume({
            brokers,
            groupId,
            topic,
            ordering,
            signal: controller.signal,
            handler: async (_m, { partition, offset }) => {
              if (!firstOffset.has(partition) || offset < firstOffset.get(partition)!) firstOffset.set(partition, offset);
              await sleep(1 + Math.random() * 4);
              processed.add(`${partition}:${offset}`);
            },
          });
          await waitFor(stopWhen, 120_000, "enough records");
          controller.abort(); // mid-run: hundreds of records queued, dozens running
          await consumer.done;
          assert.equal(consumer.state, "stopped");
          return firstOffset;
        };

        const first = new Set<string>();
        await run(first, () => first.size >= STOP_AFTER);
        const afterFirst = asObject(await committedOffsets(brokers, groupId, topic));
        assert.ok(first.size >= STOP_AFTER && first.size < RECORDS, `stopped mid-run (${first.size} processed)`);
        // everything the first consumer completed is below its final commit, and nothing else is
        for (const id of first) {
          const [p, o] = id.split(":").map(Number);
          assert.ok(o < Number(afterFirst[p] ?? 0), `${id} is covered by the commit ${afterFirst[p]}`);
        }
        let covered = 0;
        for (const p of Object.keys(afterFirst)) covered += Number(afterFirst[p]);
        assert.equal(covered, first.size, "the commit covers exactly what was completed");

        const second = new Set<string>();
        const secondFirst = await run(second, () => first.size + second.size >= RECORDS);
        await sleep(200); // a duplicate would show up here
        for (const [p, o] of secondFirst) assert.equal(o, Number(afterFirst[p] ?? 0), `partition ${p} resumed at the commit`);

        const dup = [...second].filter((id) => first.has(id));
        assert.deepEqual(dup, [], "nothing completed before the shutdown was processed again");
        assert.equal(first.size + second.size, RECORDS, "nothing lost");
        assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
        console.log(`# shutdown (${ordering}, ${name}): first consumer ${first.size}, second ${second.size}, commit after the first ${JSON.stringify(afterFirst)}`);
      });
    });
  }
});
