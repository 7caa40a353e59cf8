/**
 * Real broker: a group moves between bindings. A consumer through binding X finishes a
 * partition's records out of order (two held: the head and one in the middle), shuts down
 * (its last commit: the head's offset, the completed set in the metadata), and a consumer
 * through binding Y joins the same group: Y must run exactly the two unfinished records and
 * skip every finished one (its `claim` event verifies the set), then commit the end.
 *
 * For every ordered pair of the bindings this runtime runs (test/kafka/bindings.ts) with at
 * least one of them selected: KafkaJS ↔ Confluent on Node 20, KafkaJS ↔ @platformatic/kafka
 * on Bun, Deno and the Node 24 run (`run-kafka-tests node24`, whose OFFSET_FRONTIER_BINDINGS
 * selects platformatic: KafkaJS is still its partner here).
 *
 * Confluent's client appends a NUL to the metadata it commits and drops the last byte of
 * what it reads (adapters/shared/stored_metadata.ts): without the other bindings storing
 * the same NUL, both Confluent pairs failed here (Y redid all 20 records; its claim was
 * ignored). The stored bytes are checked too: the metadata ends with one NUL whoever wrote it.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ClaimEvent } from "../../core/mod.ts";
import { committedOffsets, createTopic, produce, withBroker } from "../broker/broker.ts";
import { type Binding, bindingPartners, bindings } from "./bindings.ts";
import { kafka, runtime, sleep, unique, waitFor } from "./helpers.ts";

const RECORDS = 20;
const HELD = [0, 7]; // never finished by the first consumer

/** The metadata the group stores for partition 0 of `topic`, as KafkaJS's admin reads it (bytes as they are). */
async function storedMetadata(brokers: string, groupId: string, topic: string): Promise<string | null> {
  const admin = kafka(brokers).admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return t.partitions.find((p) => p.partition === 0)?.metadata ?? null;
  } finally {
    await admin.disconnect();
  }
}

const selected = new Set(bindings().map((b) => b.name));
const partners = bindingPartners();
const pairs: Array<[Binding, Binding]> = [];
for (const x of partners) {
  for (const y of partners) if (x !== y && (selected.has(x.name) || selected.has(y.name))) pairs.push([x, y]);
}

describe(`a group moves between bindings (${runtime()})`, () => {
  if (pairs.length === 0) {
    test("no second binding runs here", () => {});
    return;
  }
  for (const [x, y] of pairs) {
    test(`${x.name} → ${y.name}: the completed set is read back, only the unfinished records run again`, { timeout: 180_000 }, async () => {
      await withBroker(async (brokers) => {
        const topic = unique(`handover-${x.name}-${y.name}`);
        const groupId = unique(`handover-${x.name}-${y.name}-group`);
        await createTopic(brokers, topic, 1);
        await produce(brokers, topic, Array.from({ length: RECORDS }, (_, i) => ({ key: `k${i}`, value: `${i}` })));

        // X: finishes every record but the held ones, then shuts down with them unfinished.
        const finishedByX = new Set<number>();
        let release: () => void = () => {};
        const gate = new Promise<void>((r) => (release = r));
        const controllerX = new AbortController();
        const first = x.create({
          brokers,
          groupId,
          topics: [topic],
          fromBeginning: true,
          ordering: "unordered",
          concurrency: 32,
          shutdownGraceMs: 300, // the held records stay unfinished
          signal: controllerX.signal,
          handler: async (_m, { offset }) => {
            if (HELD.includes(offset)) return await gate;
            finishedByX.add(offset);
          },
        });
        await first.start();
        await waitFor(() => finishedByX.size === RECORDS - HELD.length, 60_000, `${x.name} finishing ${RECORDS - HELD.length} records`);
        controllerX.abort();
        await first.done;
        release();
        const committed = await committedOffsets(brokers, groupId, topic);
        assert.equal(committed.get(0), String(HELD[0]), `${x.name} committed the held head's offset`);
        const stored = await storedMetadata(brokers, groupId, topic);
        assert.ok(stored && stored.length > 1 && stored.endsWith("\u0000"), `${x.name} stored the completed set and one NUL: ${JSON.stringify(stored)}`);
        assert.ok(!stored.slice(0, -1).includes("\u0000"), "one NUL, at the end");

        // Y: same group, another binding.
        const ranByY: number[] = [];
        const claims: ClaimEvent[] = [];
        const controllerY = new AbortController();
        const second = y.create({
          brokers,
          groupId,
          topics: [topic],
          fromBeginning: true,
          ordering: "unordered",
          concurrency: 32,
          signal: controllerY.signal,
          handler: (_m, { offset }) => void ranByY.push(offset),
        });
        second.on("claim", (c) => void claims.push(c));
        await second.start();
        await waitFor(() => ranByY.length >= HELD.length, 60_000, `${y.name} running the unfinished records`);
        await waitFor(() => second.metrics().skipped >= RECORDS - HELD.length, 30_000, `${y.name} skipping the finished records`);
        await sleep(300); // a record run twice would show up here
        controllerY.abort();
        await second.done;

        assert.deepEqual(claims.map((c) => ({ partition: c.partition, offset: c.offset, finished: c.finished, ignored: c.ignored })), [
          { partition: 0, offset: HELD[0], finished: RECORDS - HELD.length, ignored: undefined },
        ], `${y.name} verified ${x.name}'s completed set`);
        assert.deepEqual([...ranByY].sort((a, b) => a - b), HELD, `${y.name} ran exactly the records ${x.name} left unfinished`);
        assert.equal(second.metrics().skipped, RECORDS - HELD.length, "and skipped the finished ones");
        assert.equal((await committedOffsets(brokers, groupId, topic)).get(0), String(RECORDS), `${y.name} committed the end`);
        const after = await storedMetadata(brokers, groupId, topic);
        assert.ok(after === null || after === "" || after.endsWith("\u0000"), `${y.name}'s last metadata ends with the NUL: ${JSON.stringify(after)}`);
      });
    });
  }
});
