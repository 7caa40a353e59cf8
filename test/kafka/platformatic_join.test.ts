/**
 * Real broker, @platformatic/kafka binding: a join the group coordinator turns down is not an
 * outage. The consumer is created with `retries: 0` (the client hands the first turned-down
 * join to the binding instead of retrying it itself after its `retryDelay`) and with a
 * member id the group never gave out, as a member whose session expired while it was away:
 * the coordinator answers the first JoinGroup with UNKNOWN_MEMBER_ID (the path a
 * REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION answer takes too). The binding joins again at
 * once: the consumer is assigned and processes every record, and no `unavailable` event
 * reports the group's answer as the cluster being unreachable (before the fix it did, and
 * the join waited the runner's outage backoff: 500 ms growing to 5 s on repeated answers,
 * counted against `cluster.maxUnavailableMs`).
 *
 * Runs on Bun, Deno and Node >= 22.22 (scripts/run-kafka-tests.mjs runs it on the pinned
 * Node 24 where the default Node is older); uses KAFKA_BROKERS when set, else starts its
 * own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createTopic, produce, withBroker } from "../broker/broker.ts";
import { ParallelConsumer } from "../../core/mod.ts";
import { bindings } from "./bindings.ts";
import { unique, waitFor } from "./helpers.ts";

/** The protocol error names (`apiId`) in an error, its causes and its aggregated errors. */
function apiIds(error: unknown, depth = 0): string[] {
  if (error === null || typeof error !== "object" || depth > 20) return [];
  const e = error as { apiId?: unknown; cause?: unknown; errors?: unknown };
  const own = typeof e.apiId === "string" ? [e.apiId] : [];
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => apiIds(x, depth + 1)) : [];
  return [...own, ...nested, ...apiIds(e.cause, depth + 1)];
}

const GROUP_ANSWERS = ["REBALANCE_IN_PROGRESS", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "MEMBER_ID_REQUIRED"];

for (const _binding of bindings().filter((b) => b.name === "platformatic")) {
  test("join (platformatic): a join the group turns down is joined again at once, not reported as an outage", { timeout: 120_000 }, async () => {
    const { Consumer } = await import("@platformatic/kafka");
    const { PlatformaticClient } = await import("../../adapters/platformatic/mod.ts");
    await withBroker(async (brokers) => {
      const topic = unique("platformatic-join");
      const groupId = unique("platformatic-join-group");
      await createTopic(brokers, topic, 2);
      await produce(brokers, topic, [{ value: "r0", partition: 0 }, { value: "r1", partition: 1 }, { value: "r2", partition: 0 }]);

      const consumer = new Consumer({
        groupId,
        clientId: groupId,
        bootstrapBrokers: brokers.split(","),
        sessionTimeout: 10_000,
        heartbeatInterval: 1_000,
        rebalanceTimeout: 30_000,
        retries: 0,
      });
      consumer.memberId = `${groupId}-expired-member`; // a member id this group never gave out
      const answers: string[][] = [];
      const seen: string[] = [];
      const controller = new AbortController();
      const runner = new ParallelConsumer(new PlatformaticClient(consumer, [topic], { fromBeginning: true, maxWaitTime: 100 }), {
        signal: controller.signal,
        handler: (message) => void seen.push(message.value!.toString()),
        on: { unavailable: (e) => answers.push(apiIds(e.lastError)) },
      });
      try {
        await runner.start();
        await waitFor(() => seen.length >= 3, 60_000, `the three records (${seen.join(",")})`);
      } finally {
        controller.abort();
        await runner.done;
      }
      assert.deepEqual(seen.sort(), ["r0", "r1", "r2"]);
      // Reaching the coordinator may fail on a fresh broker (COORDINATOR_NOT_AVAILABLE): an
      // outage, rightly. The group's own answers must not be one.
      const reported = answers.filter((ids) => ids.some((id) => GROUP_ANSWERS.includes(id)));
      assert.deepEqual(reported, [], `the group's answers were reported as outages: ${JSON.stringify(answers)}`);
    });
  });
}
