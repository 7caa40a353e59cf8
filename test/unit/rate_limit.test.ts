// rateLimit: a token bucket over handler starts. Counts are asserted, never speed: over any
// span of t ms at most burst + perSecond × t / 1000 attempts start.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { InvalidArgumentError, ParallelConsumer } from "../../core/mod.ts";
import { resolveRateLimit, TokenBucket } from "../../core/consumer/records/rate_limit.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

/** The most starts in any window [a, b] of `times` exceeding burst + rate × (b − a): ≤ 0 when the bound holds. */
function worstExcess(times: number[], perSecond: number, burst: number): number {
  let worst = -Infinity;
  for (let i = 0; i < times.length; i++) {
    for (let j = i; j < times.length; j++) worst = Math.max(worst, j - i + 1 - (burst + perSecond * (times[j] - times[i]) / 1_000));
  }
  return worst;
}

describe("rateLimit", () => {
  test("property: the token bucket never admits more than burst + rate × t in any window", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.5, max: 500, noNaN: true }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 200 }), { minLength: 1, maxLength: 200 }),
        (perSecond, burst, gaps) => {
          const b = new TokenBucket(resolveRateLimit({ perSecond, burst }), 0);
          const admitted: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            while (b.take(now)) admitted.push(now); // take all it gives
            assert.ok(b.waitMs(now) > 0, "empty after taking all");
          }
          assert.ok(worstExcess(admitted, perSecond, burst) <= 1e-9, `at most ${burst} + ${perSecond}/s`);
          // and it gives what it promised: after a wait of waitMs a token is there
          const w = b.waitMs(now);
          assert.ok(b.take(now + w));
        },
      ),
      { numRuns: 300 },
    );
  });

  test("options: perSecond > 0 and finite, burst an integer ≥ 1 (default one second's worth); unknown names refused", () => {
    assert.deepEqual(resolveRateLimit({ perSecond: 2.5 }), { perSecond: 2.5, burst: 3 });
    assert.deepEqual(resolveRateLimit({ perSecond: 0.1 }), { perSecond: 0.1, burst: 1 });
    for (const bad of [0, -1, Infinity, NaN, "10"]) {
      assert.throws(() => resolveRateLimit({ perSecond: bad as number }), (e: unknown) => e instanceof InvalidArgumentError && /perSecond/.test((e as Error).message));
    }
    for (const bad of [0, 1.5, -2, "3"]) assert.throws(() => resolveRateLimit({ perSecond: 5, burst: bad as number }), /burst/);
    const client = new MemoryClient();
    assert.throws(() => new ParallelConsumer<Msg>(client, { handler: () => {}, rateLimit: { perSecond: 0 } }), /rateLimit\.perSecond.*0/);
    assert.throws(() => new ParallelConsumer<Msg>(client, { handler: () => {}, rateLimit: { perSecond: 5, brust: 2 } as never }), /brust.*burst/);
  });

  test("the consumer's starts (direct, queued and retries) keep to the bucket; all records complete", async () => {
    const client = new MemoryClient();
    const starts: number[] = [];
    const made = Date.now(); // before the consumer and its bucket
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 8,
      rateLimit: { perSecond: 100, burst: 5 },
      retry: { retries: 1, initialDelayMs: 1, jitter: 0 },
      handler: (m, { attempt }) => {
        starts.push(Date.now());
        if (m.offset % 10 === 3 && attempt === 1) throw new Error("once");
        return m.offset % 2 === 0 ? undefined : Promise.resolve();
      },
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]);
    client.deliver("t", 0, range(0, 30));
    client.deliver("t", 1, range(0, 30));
    await until(() => c.metrics().completed === 60, 20_000, "every record");
    assert.equal(starts.length, 66, "60 first attempts and 6 retries");
    // The handler runs after its token was taken, so on a loaded machine handler calls can
    // bunch up behind a late event loop: no window of them is bounded. Counted from before
    // the consumer (and its full bucket) was made, 66 starts with a burst of 5 at 100/s
    // cannot take less than 610 ms, however late each ran. The bucket's own bound per
    // window is the property above, over an exact clock.
    const span = starts[starts.length - 1] - made;
    assert.ok(span >= ((starts.length - 5) / 100) * 1_000 - 1, `66 starts at 100/s after a burst of 5 take ≥ 609 ms from the consumer's making (took ${span} ms)`);
    const m = c.metrics();
    assert.ok(m.rateLimit && m.rateLimit.perSecond === 100 && m.rateLimit.burst === 5 && m.rateLimit.waits > 0);
    await c.shutdown();
    assert.equal(client.committed.get("t/0"), 30);
  });

  test("records waiting for tokens count against the high mark: fetching pauses", async () => {
    const client = new MemoryClient();
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      highWaterMark: 20,
      rateLimit: { perSecond: 50, burst: 1 },
      handler: () => {},
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    assert.equal(client.deliver("t", 0, range(0, 25)), true);
    assert.ok(client.paused.has("t/0"), "over the high mark while records wait for tokens");
    assert.equal(client.deliver("t", 0, range(25, 5)), false, "no more is taken meanwhile");
    await until(() => !client.paused.has("t/0"), 10_000, "resumed once drained to the low mark");
    await c.shutdown(0);
  });
});
