/**
 * Real broker, @platformatic/kafka binding through its entry point (`consume()` of
 * adapters/platformatic/mod.ts): the traps a new user met in issue 42, each now a loud,
 * typed failure.
 * - A topic that does not exist (auto-creation is off): `consume()` rejects with a
 *   `ClusterRefusedError` of kind `unknown-topic` naming it, within seconds (it came after
 *   6.8 s as kind `configuration` naming no topic).
 * - A dead-letter topic that does not exist: the start refuses it the same way, naming it
 *   (it showed only as `dead-letter` errors, record after record, until the partition stopped).
 * - An unreachable broker (127.0.0.1 on a closed port), default options but a capturing
 *   logger: the outage is logged once, at once (it waited without a word), and an abort
 *   then rejects `consume()` with a `StartInterruptedError` (it resolved).
 *
 * Runs on Bun, Deno and Node >= 22.22 (scripts/run-kafka-tests.mjs runs it on the pinned
 * Node 24 where the default Node is older); uses KAFKA_BROKERS when set, else starts its
 * own broker.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { createTopic, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { unique, waitFor } from "./helpers.ts";

/** An address nothing listens on: 127.0.0.1 on a port just closed. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

for (const _binding of bindings().filter((b) => b.name === "platformatic")) {
  test("traps (platformatic): an unknown topic and an unknown dead-letter topic are refused at the start, naming them", { timeout: 120_000 }, async () => {
    const { Consumer, Producer } = await import("@platformatic/kafka");
    const { consume, ClusterRefusedError } = await import("../../adapters/platformatic/mod.ts");
    await withBroker(async (brokers) => {
      const bootstrapBrokers = brokers.split(",");
      const consumer = (group: string) => new Consumer({ groupId: group, clientId: group, bootstrapBrokers });
      const handler = (): void => {};

      const nowhere = unique("traps-no-such-topic");
      const t0 = Date.now();
      await assert.rejects(consume({ consumer: consumer(unique("traps-g")), topics: [nowhere], handler, signals: [], logger: false }), (e: unknown) => {
        assert.ok(e instanceof ClusterRefusedError, `a ClusterRefusedError, got ${String(e)}`);
        assert.equal(e.kind, "unknown-topic", e.message);
        assert.deepEqual(e.topics, [nowhere]);
        assert.match(e.message, new RegExp(`topic "${nowhere}" does not exist`));
        return true;
      });
      assert.ok(Date.now() - t0 < 5_000, `refused, not retried for seconds (${Date.now() - t0} ms)`);

      const topic = unique("traps-dlt");
      await createTopic(brokers, topic, 1); // its dead-letter topic is not created
      const producer = new Producer({ clientId: unique("traps-dlt-producer"), bootstrapBrokers });
      await assert.rejects(
        consume({ consumer: consumer(unique("traps-dlt-g")), topics: [topic], handler, deadLetter: { producer }, signals: [], logger: false }),
        (e: unknown) => {
          assert.ok(e instanceof ClusterRefusedError, `a ClusterRefusedError, got ${String(e)}`);
          assert.equal(e.kind, "unknown-topic", e.message);
          assert.deepEqual(e.topics, [`${topic}.DLT`]);
          assert.match(e.message, new RegExp(`dead-letter topic "${topic}\\.DLT" does not exist`));
          return true;
        },
      );
      // With the topic there, the same start succeeds.
      await createTopic(brokers, `${topic}.DLT`, 1);
      const controller = new AbortController();
      const running = await consume({
        consumer: consumer(unique("traps-dlt-g")),
        topics: [topic],
        handler,
        deadLetter: { producer: new Producer({ clientId: unique("traps-dlt-producer"), bootstrapBrokers }) },
        signals: [],
        signal: controller.signal,
        logger: false,
      });
      assert.equal(running.state, "running");
      controller.abort();
      await running.done;
    });
  });

  test("traps (platformatic): an unreachable broker is logged at once, and an abort rejects consume(): it never connected", { timeout: 60_000 }, async () => {
    const { Consumer } = await import("@platformatic/kafka");
    const { consume, StartInterruptedError } = await import("../../adapters/platformatic/mod.ts");
    const address = await closedPort();
    const lines: string[] = [];
    const log = (m: string): void => void lines.push(m);
    const controller = new AbortController();
    const group = unique("traps-unreachable");
    const t0 = Date.now();
    const starting = consume({
      consumer: new Consumer({ groupId: group, clientId: group, bootstrapBrokers: [address] }),
      topics: [unique("traps-unreachable-topic")],
      handler: () => {},
      signals: [],
      signal: controller.signal,
      logger: { warn: log, error: log },
    });
    let settled = false;
    void starting.then(() => (settled = true), () => (settled = true));
    await waitFor(() => lines.length > 0, 10_000, "a logged line about the outage");
    const loggedMs = Date.now() - t0;
    assert.match(lines[0], new RegExp(`the Kafka cluster at ${address.replace(/\./g, "\\.")} is unavailable \\(.*\\); retrying until it answers`));
    await new Promise((r) => setTimeout(r, 2_500)); // more attempts fail meanwhile (500 ms, 1 s, …)
    assert.equal(lines.length, 1, `one line for the outage, not one per attempt: ${JSON.stringify(lines)}`);
    assert.equal(settled, false, "consume() waits for the cluster");
    controller.abort();
    await assert.rejects(starting, (e: unknown) => {
      assert.ok(e instanceof StartInterruptedError, `a StartInterruptedError, got ${String(e)}`);
      assert.ok(e.attempts >= 2, e.message);
      assert.match(e.message, /before it consumed anything: it never reached the Kafka cluster/);
      return true;
    });
    console.error(`# traps: the outage logged ${loggedMs} ms after the start`);
  });
}
