/**
 * Real broker, @platformatic/kafka binding: its transactional port against a zombie. A
 * member's port opens a partition (InitProducerId) and commits a transaction whose offset
 * and metadata read back exactly. Then:
 * - a new owner's port opens the partition (its producer takes the transactional id over):
 *   the old port's next transactions are refused as `fenced`, their outputs never become
 *   visible to a `read_committed` reader, and the new owner commits;
 * - a member whose generation is not the group's sends its offsets (KIP-447): refused as
 *   `fenced`, the transaction aborted, its output invisible.
 * The committed offset is the legitimate owners' throughout.
 *
 * Runs on Bun, Deno and Node >= 22.22 (scripts/run-kafka-tests.mjs runs it on Node 24 there);
 * uses KAFKA_BROKERS when set, else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { committedOffsets, createTopic, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { asObject, sleep, unique } from "./helpers.ts";
import { readCommitted } from "./read_committed.ts";

for (const binding of bindings().filter((b) => b.name === "platformatic")) {
  test(`exactly-once (${binding.name}): a zombie's transactions are fenced by the new owner's producer and by the group generation`, { timeout: 120_000 }, async () => {
    const { Consumer } = await import("@platformatic/kafka");
    const { PlatformaticTransactions } = await import("../../adapters/platformatic/mod.ts");
    const { readCommitted: readOffsets } = await import("../../adapters/platformatic/group_requests.ts");
    type ClientConsumer = import("../../adapters/platformatic/types.ts").ClientConsumer;
    await withBroker(async (brokers) => {
      const topic = unique("plt-fence");
      const groupId = unique("plt-fence-group");
      await createTopic(brokers, topic, 1);
      await createTopic(brokers, `${topic}.out`, 1);
      const bootstrapBrokers = brokers.split(",");
      const consumer = new Consumer({ groupId, clientId: unique("plt-fence"), bootstrapBrokers, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
      consumer.topics.track(topic);
      await consumer.joinGroup({});
      const c = consumer as unknown as ClientConsumer;
      let generation = (): number => consumer.generationId;
      const seeks: Array<[string, number]> = [];
      const port = (prefix: string) =>
        new PlatformaticTransactions({
          consumer: c,
          membership: () => ({ generationId: generation(), memberId: consumer.memberId! }),
          seek: (positions) => seeks.push(...positions),
          fromBeginning: true,
        }, { idPrefix: prefix });
      const tx = (offset: number, value: string) => ({ topic, partition: 0, offset, metadata: `set-${offset}`, outputs: [{ topic: `${topic}.out`, partition: 0, value }] });
      const prefix = unique("zombie");
      const old = port(prefix);
      const newOwner = port(prefix);
      const other = port(unique("stale"));
      try {
        await old.open([{ topic, partition: 0, kept: false }], new AbortController().signal);
        assert.deepEqual(seeks, [[`${topic}\u00000`, 0]], "nothing committed yet: the earliest offset");
        assert.deepEqual(await old.commit([tx(3, "legit")], 10_000), [{ ok: true }]);
        // Require-stable: until the coordinator wrote the commit's markers, the answer is UNSTABLE_OFFSET_COMMIT.
        let read;
        for (let i = 0; ; i++) {
          try {
            read = await readOffsets(c, [{ topic, partition: 0 }]);
            break;
          } catch (error) {
            if (i >= 50) throw error;
            await sleep(100);
          }
        }
        assert.deepEqual(read, [{ topic, partition: 0, offset: 3, metadata: "set-3" }], "offset and metadata read back exactly (the stored NUL dropped)");

        // The new owner's port opens the partition (its InitProducerId takes the id over): the old producer's epoch is stale now.
        await newOwner.open([{ topic, partition: 0, kept: false }], AbortSignal.timeout(20_000));
        assert.deepEqual(seeks.at(-1), [`${topic}\u00000`, 3], "the new owner seeks to the committed offset");
        const [fenced] = await old.commit([tx(7, "zombie-epoch")], 10_000);
        assert.equal(fenced.ok, false);
        assert.equal(!fenced.ok && fenced.fenced, true, `fenced by the epoch: ${!fenced.ok && (fenced.error as Error)?.message}`);
        const [again] = await old.commit([tx(8, "zombie-again")], 10_000);
        assert.equal(!again.ok && again.fenced, true, "a fenced producer never begins again");
        assert.deepEqual(await newOwner.commit([tx(5, "new-owner")], 10_000), [{ ok: true }]);

        // A member outside the group's generation (KIP-447): its offsets are refused, its transaction aborted.
        await other.open([{ topic, partition: 0, kept: false }], new AbortController().signal);
        generation = () => consumer.generationId + 1;
        const [stale] = await other.commit([tx(9, "zombie-generation")], 10_000);
        assert.equal(!stale.ok && stale.fenced, true, `fenced by the generation: ${!stale.ok && (stale.error as Error)?.message}`);

        assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), { 0: "5" });
        const out = await readCommitted(brokers, `${topic}.out`);
        assert.deepEqual(out.map((r) => r.value), ["legit", "new-owner"], "only the legitimate outputs are visible");
      } finally {
        await Promise.allSettled([old.close(), other.close(), newOwner.close()]);
        await consumer.close(true).catch(() => {});
      }
    });
  });
}
