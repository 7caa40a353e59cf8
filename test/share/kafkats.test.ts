/**
 * `@kafkats/client` 0.12.0's share consumer against the real broker: what the evaluation
 * (test/share/eval.ts, test/share/README.md) found wrong, as a small deterministic case.
 *
 * NOT part of `npm test` (no package.json script runs it): it fails with 0.12.0.
 * Run it alone: `node --import tsx --test test/share/kafkats.test.ts` (starts its own broker).
 *
 * `runEach` gives up for good when the broker is unreachable for a heartbeat: the
 * heartbeat loop drops the coordinator on the NetworkError and looks it up again;
 * `Cluster.getAnyBroker` then throws a plain `Error("No brokers available")`
 * (dist/index.js, about line 7978), which `getCoordinatorWithRetry` does not retry and
 * `isTransientShareError` (about line 12621) does not count as transient, so
 * `heartbeatLoop` rethrows it, `runEach` rejects and the member leaves. Every member of
 * every chaos round did so within about a second of the broker's SIGKILL.
 *
 * @module
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { KafkaClient } from "@kafkats/client";
import { type Broker, createTopic, produce, startBroker } from "../broker/broker.ts";
import { setGroupConfig } from "./admin.ts";

let broker: Broker;
before(async () => {
  broker = await startBroker();
});
after(async () => {
  await broker?.stop();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test("a share consumer rides out a broker restart and consumes what is produced after it", async () => {
  const topic = `restart-${Date.now()}`;
  const group = `${topic}-g`;
  await createTopic(broker.brokers, topic, 1);
  await setGroupConfig(broker.brokers, group, { "share.auto.offset.reset": "earliest" });
  await produce(broker.brokers, topic, [{ value: "before" }]);

  const client = new KafkaClient({ brokers: [broker.brokers], clientId: "restart-test" });
  await client.connect();
  const consumer = client.shareConsumer({ groupId: group });
  const seen: string[] = [];
  let failure: unknown;
  const run = consumer.runEach(topic, async (m) => {
    seen.push(m.value!.toString());
    await m.ack();
  }).catch((e) => {
    failure = e;
  });
  try {
    for (let i = 0; i < 60 && !seen.includes("before"); i++) await sleep(500);
    assert.deepEqual(seen, ["before"], "consumed before the restart");

    await broker.kill();
    await sleep(3_000); // a few heartbeats while the broker is down
    await broker.restart();
    await produce(broker.brokers, topic, [{ value: "after" }]);
    for (let i = 0; i < 120 && !seen.includes("after") && failure === undefined; i++) await sleep(500);
    // With 0.12.0: runEach rejected with "No brokers available" while the broker was down.
    assert.equal(failure, undefined, `runEach rejected: ${String(failure)}`);
    assert.deepEqual(seen, ["before", "after"], "consumed after the restart");
  } finally {
    await consumer.stop();
    await run;
    await client.disconnect();
  }
});
