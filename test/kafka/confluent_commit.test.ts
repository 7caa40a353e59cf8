/**
 * Real broker, Confluent binding: a commit the broker refuses is a failed commit. The
 * client's `commitOffsets` resolves once librdkafka queued the commit, so a commit whose
 * metadata exceeds the broker's `offset.metadata.max.bytes` (4,096) used to look like a
 * success while the broker stored nothing. Through the binding it is reported failed
 * (OFFSET_METADATA_TOO_LARGE, code 12), `confirmed` does not move and no commit event
 * fires; once the metadata fits again, the next commit lands and `confirmed` moves.
 *
 * On Bun and Deno, which cannot load the client's addon, importing the binding throws
 * an UnsupportedRuntimeError naming the runtime.
 *
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`;
 * uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type CommitEvent, type ErrorEvent, ParallelConsumer, UnsupportedRuntimeError } from "../../core/mod.ts";
import { committedOffsets, createTopic, produce, withBroker } from "../broker/broker.ts";
import { bindings, confluentConfig, loadConfluent, type TestMessage } from "./bindings.ts";
import { runtime, sleep, unique, waitFor } from "./helpers.ts";

if (runtime() !== "node") {
  test(`the Confluent binding refuses to load on ${runtime()}`, async () => {
    await assert.rejects(import("../../adapters/confluent/mod.ts"), (error: unknown) => {
      assert.ok(error instanceof UnsupportedRuntimeError, `an UnsupportedRuntimeError, got ${String(error)}`);
      assert.equal(error.runtime, runtime());
      assert.match(error.message, /Node only/);
      assert.match(error.message, new RegExp(`offset-frontier/${runtime()}`));
      return true;
    });
  });
} else if (bindings().some((b) => b.name === "confluent")) { // not in a platformatic-only run (on Node 24 the addon, built for the Node of npm test, cannot load)
  test("confluent: a commit whose metadata is over offset.metadata.max.bytes fails and confirmed does not move", { timeout: 120_000 }, async () => {
    const { ConfluentClient } = await import("../../adapters/confluent/mod.ts");
    const { KafkaJS } = loadConfluent();
    await withBroker(async (brokers) => {
      const topic = unique("confluent-metadata");
      const groupId = unique("confluent-metadata-group");
      await createTopic(brokers, topic, 1);
      await produce(brokers, topic, Array.from({ length: 50 }, (_, i) => ({ value: `v${i}` })));

      let big = true;
      const errors: ErrorEvent[] = [];
      const commits: CommitEvent[] = [];
      let processed = 0;
      const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: brokers.split(","), logLevel: KafkaJS.logLevel.ERROR } });
      const client = new ConfluentClient(kafka, confluentConfig(groupId, "consumer"), [topic], { fromBeginning: true });
      const consumer = new ParallelConsumer<TestMessage>(client, {
        commit: { completedSet: false, metadata: () => (big ? "m".repeat(5_000) : "fits"), intervalMs: 200 },
        on: { error: (e) => errors.push(e), commit: (e) => commits.push(e) },
        handler: () => void processed++,
      });
      await consumer.start();
      try {
        await waitFor(() => processed === 50, 30_000, "50 records");
        await waitFor(() => errors.filter((e) => e.kind === "commit").length >= 2, 30_000, "refused commits");
        await sleep(300);
        const refused = errors.find((e) => e.kind === "commit")!;
        assert.equal((refused.error as { code?: unknown }).code, 12, `OFFSET_METADATA_TOO_LARGE: ${String(refused.error)}`);
        assert.match(String(refused.error), /refused the commit/);
        assert.equal(commits.length, 0, "no commit was acknowledged");
        assert.equal(consumer.metrics().partitions[0].safe, 50);
        assert.equal(consumer.metrics().partitions[0].confirmed, undefined, "confirmed did not move");
        assert.equal(consumer.metrics().commits, 0);
        assert.deepEqual(Object.fromEntries(await committedOffsets(brokers, groupId, topic)), {}, "the broker stored nothing");

        big = false; // the next retry fits
        await waitFor(() => commits.length > 0, 30_000, "an acknowledged commit");
        assert.equal(consumer.metrics().partitions[0].confirmed, 50, "confirmed moved once the broker acknowledged");
        assert.equal(String((await committedOffsets(brokers, groupId, topic)).get(0)), "50");
      } finally {
        await consumer.shutdown(1_000);
      }
    });
  });
}
