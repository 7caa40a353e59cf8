/**
 * Real broker: `stuck: { maxPendingMs, action: "dead-letter" }`. Under partition ordering
 * one record's handler hangs (a stuck head that blocks its partition). Past the limit its
 * signal is aborted, it is dead-lettered once (to `<topic>.DLT`), the partition goes on
 * behind it, its late completion does not count, and the commits reach the end.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts). Runs unchanged under
 * `node --import tsx --test`, `bun test` and `deno test -A`; uses KAFKA_BROKERS when set,
 * else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type DeadLetterEvent, type StuckEvent, StuckRecordError } from "../../core/mod.ts";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { asObject, sleep, unique, waitFor } from "./helpers.ts";

for (const binding of bindings()) test(`stuck record (${binding.name}): a hung head is dead-lettered once past maxPendingMs and its partition goes on`, { timeout: 120_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("stuck");
    const groupId = unique("stuck-group");
    await createTopic(brokers, topic, 2);
    await createTopic(brokers, `${topic}.DLT`, 1);
    await produce(brokers, topic, Array.from({ length: 100 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
    const ends = asObject(await endOffsets(brokers, topic));

    const stuck: StuckEvent[] = [];
    const dead: DeadLetterEvent[] = [];
    let ok = 0, lateReturned = false, abortedWith: unknown;
    const controller = new AbortController();
    const consumer = binding.create({
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      ordering: "partition",
      deadLetter: true,
      stuck: { maxPendingMs: 1_000, action: "dead-letter" },
      signal: controller.signal,
      on: { stuck: (e) => stuck.push(e), deadLetter: (e) => dead.push(e) },
      handler: async (message, { signal }) => {
        if (message.value!.toString() === "v13") {
          // Hangs until told to stop, then returns late anyway (as a handler ignoring its signal would).
          await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
          abortedWith = signal.reason;
          await sleep(200);
          lateReturned = true;
          return;
        }
        ok++;
      },
    });
    await consumer.start();
    await waitFor(() => ok === 99 && dead.length === 1 && lateReturned, 60_000, `99 records, 1 dead letter, the late return (${ok}, ${dead.length})`);
    await sleep(200);
    const m = consumer.metrics();
    assert.equal(m.completed, 100, "the late return did not count again");
    assert.equal(m.stuck, 1);
    assert.equal(stuck.length, 1);
    assert.equal(stuck[0].action, "dead-letter");
    assert.ok(stuck[0].pendingMs > 1_000);
    assert.ok(abortedWith instanceof StuckRecordError, "its signal was aborted with the reason");
    assert.ok(dead[0].error instanceof StuckRecordError && dead[0].offset === stuck[0].offset);
    controller.abort();
    await consumer.done;
    assert.deepEqual(asObject(await committedOffsets(brokers, groupId, topic)), ends);
  });
});
