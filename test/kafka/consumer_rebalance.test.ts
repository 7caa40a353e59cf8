/**
 * Real broker: a rebalance mid-run. Consumer A works alone on 4 partitions; consumer B
 * joins the group, so KafkaJS rebalances A (REBALANCING, then GROUP_JOIN with half the
 * partitions). A commits what is safe at once, drains, and starts fresh trackers for
 * its new assignment; B starts from the committed offsets. Nothing is lost, the end
 * commit reaches the end offsets, and records processed twice are at most those in
 * flight at the rebalance (bounded by the concurrency).
 *
 * Through every binding of this runtime (test/kafka/bindings.ts); the Confluent binding
 * under the classic eager protocol (A gives up everything, then gets half back), the
 * cooperative-sticky and the KIP-848 protocol, and the @platformatic/kafka binding under
 * eager (roundrobin) and cooperative-sticky: incremental ones, where A gives up only the partitions that
 * move (never left with none in between). Eager once stalled here: the drain's commit,
 * sent inside the awaited rebalance callback, waited for librdkafka's outcome event,
 * which the client serves only when it polls again (after the callback), so every revoke
 * held the group for the revoke bound; the binding now reads such a commit back.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`;
 * uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ParallelConsumer } from "../../adapters/kafkajs/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { type Binding, bindings, type ConfluentProtocol, type TestMessage } from "./bindings.ts";
import { asObject, sleep, unique, waitFor } from "./helpers.ts";

const RECORDS = 8_000;
const CONCURRENCY = 8;

const protocols: Partial<Record<string, ConfluentProtocol[]>> = { confluent: ["eager", "cooperative", "consumer"], platformatic: ["eager", "cooperative"] };
const cases = bindings().flatMap((binding): Array<{ binding: Binding; protocol: ConfluentProtocol | undefined }> =>
  protocols[binding.name]?.map((protocol) => ({ binding, protocol })) ?? [{ binding, protocol: undefined }]
);

for (const { binding, protocol } of cases) {
  const label = protocol ? `${binding.name}, ${protocol}` : binding.name;
  test(`rebalance (${label}): a second member joins mid-run; nothing lost, duplicates bounded by what was in flight`, { timeout: 180_000 }, async () => {
    await withBroker(async (brokers) => {
      const topic = unique("rebalance");
      const groupId = unique("rebalance-group");
      await createTopic(brokers, topic, 4);
      await produce(brokers, topic, Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i % 400}`, value: `${i}` })));
      const ends = asObject(await endOffsets(brokers, topic));

      const times = new Map<string, number>();
      const processedBy = { A: 0, B: 0 };
      const assignments: Record<string, number[][]> = { A: [], B: [] };
      let waitingForB = false;
      const start = (name: "A" | "B"): { consumer: ParallelConsumer<TestMessage>; controller: AbortController } => {
        const controller = new AbortController();
        const consumer = binding.create({
          brokers,
          groupId,
          ...(protocol ? { protocol } : {}),
          onAssignment: (partitions) => assignments[name].push(partitions),
          topics: [topic],
          fromBeginning: true,
          ordering: "unordered",
          concurrency: CONCURRENCY,
          signal: controller.signal,
          handler: async (_m, { partition, offset }) => {
            // Until B has partitions, A slows down: a KIP-848 assignment takes a few heartbeats.
            await sleep(waitingForB ? 20 : 2 + Math.random() * 4);
            const id = `${partition}:${offset}`;
            times.set(id, (times.get(id) ?? 0) + 1);
            processedBy[name]++;
          },
        });
        return { consumer, controller };
      };

      const a = start("A");
      await a.consumer.start();
      await waitFor(() => processedBy.A >= 1_500, 60_000, "A's first 1,500 records");
      const b = start("B");
      waitingForB = true;
      await b.consumer.start(); // KafkaJS: resolves once B joined (A was rebalanced); Confluent: once B runs
      await waitFor(() => assignments.B.some((ps) => ps.length > 0), 60_000, "B's first partitions");
      waitingForB = false;
      await waitFor(() => times.size >= RECORDS, 120_000, `every record (have ${times.size})`);
      // the assignments while both ran (the shutdown below rebalances once more)
      const whileBoth = { A: [...assignments.A], B: [...assignments.B] };
      a.controller.abort();
      b.controller.abort();
      await Promise.all([a.consumer.done, b.consumer.done]);

      assert.ok(whileBoth.A.length >= 2, "A was rebalanced (joined twice)");
      assert.equal(whileBoth.A[0].length, 4, "A had all 4 partitions first");
      // each member's latest partitions (an eager member may be between a revoke and its next join here)
      const latest = (xs: number[][]): number[] => [...xs].reverse().find((ps) => ps.length > 0) ?? [];
      const split = [...latest(whileBoth.A), ...latest(whileBoth.B)].sort();
      assert.deepEqual(split, [0, 1, 2, 3], "then A and B split them");
      assert.ok(processedBy.B > 0, "B processed records");

      assert.equal(times.size, RECORDS, "nothing lost");
      const dups = [...times.values()].filter((n) => n > 1).length;
      assert.ok(dups <= 2 * CONCURRENCY, `records processed twice (${dups}) bounded by what was in flight`);
      assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
      if (protocol === "cooperative" || protocol === "consumer") {
        // Incremental: A gives up only the partitions that move, so it is never left with none.
        assert.ok(whileBoth.A.every((ps) => ps.length > 0), `A kept partitions throughout: ${JSON.stringify(whileBoth.A)}`);
      }
      console.log(`# rebalance (${label}): A ${processedBy.A}, B ${processedBy.B}, processed twice ${dups}, A's joins ${JSON.stringify(whileBoth.A)}`);
    });
  });
}
