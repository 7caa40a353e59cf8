/**
 * Real broker, KafkaJS: a shutdown that lands while the consumer joins its group (inside
 * KafkaJS's join, which emits GROUP_JOIN) leaves the group once the join completes. KafkaJS
 * ignores a stop issued inside its own join, so a member stopped there used to stay in the
 * group, heartbeating and owning partitions nobody processed, until its process was killed
 * (the chaos suite's SIGTERMed members that needed a SIGKILL 20 s later, `termForced`).
 * Runs unchanged under `node --import tsx --test`, `bun test` and `deno test -A`.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createKafkaJSConsumer } from "../../adapters/kafkajs/mod.ts";
import { StartInterruptedError } from "../../core/errors.ts";
import { createTopic, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { consumerConfig, kafka, runtime, sleep, unique } from "./helpers.ts";

const kafkajsTest: typeof test = bindings().some((b) => b.name === "kafkajs") ? test : ((() => {}) as unknown as typeof test);

/** Where in KafkaJS's join the shutdown lands: a request it sends (the answer not come yet), or the GROUP_JOIN it emits. */
const MOMENTS = ["JoinGroup", "SyncGroup", "GROUP_JOIN"] as const;

for (const moment of MOMENTS) kafkajsTest(`(${runtime()}) a shutdown while the KafkaJS consumer joins its group (at ${moment}): the member leaves the group once the join completes`, { timeout: 60_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("start-abort");
    const groupId = unique("start-abort-group");
    await createTopic(brokers, topic, 2);
    const consumer = kafka(brokers).consumer(consumerConfig(groupId));
    const controller = new AbortController();
    // Registered before the binding's own listener, as an application's would be: the
    // shutdown lands inside KafkaJS's join (GROUP_JOIN is emitted from within it), where the
    // binding then closes, as a member SIGTERMed while it joins does.
    let joins = 0;
    consumer.on(consumer.events.GROUP_JOIN, () => {
      joins++;
      if (moment === "GROUP_JOIN") controller.abort();
    });
    consumer.on(consumer.events.REQUEST, (e) => {
      if (e.payload.apiName === moment) controller.abort();
    });
    const pc = createKafkaJSConsumer({ consumer, topics: [topic], fromBeginning: true, signal: controller.signal, handler: () => {} });
    const started = pc.start().then(() => "started", (e: unknown) => e);
    await pc.closed;
    const outcome = await started;
    if (moment === "GROUP_JOIN") assert.ok(joins >= 1, "the abort came with the join");
    assert.ok(outcome === "started" || outcome instanceof StartInterruptedError, `start() resolved or was interrupted: ${String(outcome)}`);

    // The member must be gone from the group: no members, within a few seconds of the join.
    const admin = kafka(brokers).admin();
    await admin.connect();
    try {
      let members = -1;
      const t0 = Date.now();
      for (;;) {
        const { groups } = await admin.describeGroups([groupId]);
        members = groups[0]?.members.length ?? 0;
        if (members === 0 && Date.now() - t0 > 2_000) break; // and it stays gone (no rejoin)
        if (members !== 0 && Date.now() - t0 > 10_000) break;
        await sleep(200);
      }
      assert.equal(members, 0, `the stopped consumer left the group (joins seen: ${joins})`);
    } finally {
      await admin.disconnect();
      await consumer.disconnect().catch(() => {});
    }
  });
});
