// Retry when the handler says: RetryAfterError / retryAfterMs / retryAt, capped by the
// policy's maxDelayMs, counted as retries; the wait holds only its record and key.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { InvalidArgumentError, ParallelConsumer, parseRetryAfter, RetryAfterError, type RetryEvent } from "../../core/mod.ts";
import { requestedDelay, retryDelay } from "../../core/consumer/records/retry_after.ts";
import { resolveRetryPolicy } from "../../core/consumer/records/retry.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

const one = [{ topic: "t", partition: 0 }];

describe("retry after: the handler chooses the delay", () => {
  test("RetryAfterError takes a delay or a date; bad ones are typed errors naming the value", () => {
    assert.equal(new RetryAfterError(250).retryAfterMs, 250);
    const at = new Date(Date.now() + 1_000);
    assert.equal(new RetryAfterError(at).retryAt, at);
    for (const bad of [-1, NaN, Infinity, "5", null]) {
      assert.throws(() => new RetryAfterError(bad as number), (e: unknown) => e instanceof InvalidArgumentError && /delay/.test((e as Error).message));
    }
    assert.throws(() => new RetryAfterError(new Date("nope")), InvalidArgumentError);
    const cause = new Error("HTTP 429");
    assert.equal(new RetryAfterError(1, { cause }).cause, cause);
  });

  test("requestedDelay reads retryAfterMs or retryAt from any thrown object; retryDelay caps it", () => {
    assert.equal(requestedDelay({ retryAfterMs: 30 }), 30);
    assert.equal(requestedDelay({ retryAfterMs: -5 }), 0);
    assert.equal(requestedDelay({ retryAt: 1_500 }, 1_000), 500);
    assert.equal(requestedDelay({ retryAt: new Date(900) }, 1_000), 0, "a past date asks for no wait");
    assert.equal(requestedDelay({ retryAfterMs: NaN }), undefined);
    assert.equal(requestedDelay({ retryAfterMs: "30" }), undefined);
    assert.equal(requestedDelay(new Error("plain")), undefined);
    assert.equal(requestedDelay("text"), undefined);
    const p = resolveRetryPolicy({ initialDelayMs: 7, maxDelayMs: 100, jitter: 0 });
    assert.deepEqual(retryDelay(p, 1, new RetryAfterError(40)), { delayMs: 40, requested: true });
    assert.deepEqual(retryDelay(p, 1, new RetryAfterError(60_000)), { delayMs: 100, requested: true });
    assert.deepEqual(retryDelay(p, 2, new Error("x")), { delayMs: 14, requested: false });
  });

  test("parseRetryAfter: delta-seconds and HTTP-dates", () => {
    assert.equal(parseRetryAfter("2"), 2_000);
    assert.equal(parseRetryAfter(" 0 "), 0);
    const now = Date.parse("Wed, 21 Oct 2026 07:28:00 GMT");
    assert.equal(parseRetryAfter("Wed, 21 Oct 2026 07:28:30 GMT", now), 30_000);
    assert.equal(parseRetryAfter("Wed, 21 Oct 2026 07:27:00 GMT", now), 0);
    for (const bad of [null, undefined, "", "soon", "-3", "1.5"]) assert.equal(parseRetryAfter(bad), undefined, String(bad));
  });

  test("the chosen delay is used, capped by retry.maxDelayMs, and counts as a retry (then stop)", async () => {
    const client = new MemoryClient();
    const retries: RetryEvent[] = [];
    const errors: string[] = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      retry: { retries: 2, initialDelayMs: 1, maxDelayMs: 30, jitter: 0 },
      handler: (m, { partition }) => {
        if (partition === 0 && m.offset === 1) throw new RetryAfterError(60_000);
        if (partition === 1 && m.offset === 2) throw Object.assign(new Error("busy"), { retryAfterMs: 5 });
      },
      on: { retry: (e) => retries.push(e), error: (e) => errors.push(e.kind) },
    });
    await c.start();
    client.sink.assigned([...one, { topic: "t", partition: 1 }]);
    client.deliver("t", 0, range(0, 4));
    client.deliver("t", 1, range(0, 4));
    await until(() => errors.filter((k) => k === "partition-stopped").length === 2, 5_000, "both partitions stop after the retries");
    const of = (p: number) => retries.filter((r) => r.partition === p).map((r) => [r.offset, r.delayMs, r.requested]);
    assert.deepEqual(of(0), [[1, 30, true], [1, 30, true]], "capped by maxDelayMs");
    assert.deepEqual(of(1), [[2, 5, true], [2, 5, true]]);
    assert.deepEqual(c.metrics().partitions.map((p) => p.safe), [1, 2], "never passes the record");
    await c.shutdown(0);
  });

  test("property: a delayed retry holds only its record and key; every other key completes meanwhile", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 2, maxLength: 40 }),
        fc.boolean(),
        async (keys, byDate) => {
          const client = new MemoryClient();
          const slowKey = `k${keys[0]}`;
          const ran: Array<[number, string]> = [];
          const c = new ParallelConsumer<Msg>(client, {
            engine: "js",
            ordering: "key",
            concurrency: 4,
            retry: { retries: 1, maxDelayMs: 60_000 },
            handler: (m, ctx) => {
              ran.push([m.offset, m.key!]);
              if (m.offset === 0 && ctx.attempt === 1) {
                throw byDate ? new RetryAfterError(new Date(Date.now() + 60_000)) : new RetryAfterError(60_000);
              }
            },
          });
          await c.start();
          client.sink.assigned(one);
          client.deliver("t", 0, range(0, keys.length), undefined, (o) => `k${keys[o]}`);
          const others = keys.filter((k) => `k${k}` !== slowKey).length;
          await until(() => c.metrics().completed === others, 2_000, "every other key's records");
          // The slow key ran only its first record, once; nothing of it overtook the wait.
          assert.deepEqual(ran.filter(([, k]) => k === slowKey), [[0, slowKey]]);
          const p = c.metrics().partitions[0];
          assert.equal(p.safe, 0);
          assert.equal(p.inFlight, 1, "only the delayed record holds a slot");
          await c.shutdown(0);
        },
      ),
      { numRuns: 25 },
    );
  });
});
