/**
 * Outages seen from the runner: the ClusterWatch (backoff, states, give-up bound) and
 * a ParallelConsumer whose client cannot reach its cluster at start — the signal ends
 * the wait (start resolves, `stopped`), `cluster.maxUnavailableMs` ends it with a
 * ClusterUnavailableError. The real-broker side is test/kafka/consumer_outage.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type AvailableEvent, type ClientSink, type ProbeResult, ClusterUnavailableError, InvalidArgumentError, ParallelConsumer, type UnavailableEvent } from "../../core/mod.ts";
import { ClusterWatch } from "../../core/consumer/port/cluster.ts";
import { MemoryClient, type Msg, range, sleep, until } from "./runner_client.ts";

function watch(options: ConstructorParameters<typeof ClusterWatch>[0] = {}) {
  const unavailable: UnavailableEvent[] = [];
  const available: AvailableEvent[] = [];
  const gaveUp: ClusterUnavailableError[] = [];
  const w = new ClusterWatch(options, {
    unavailable: (e) => unavailable.push(e),
    available: (e) => available.push(e),
    giveUp: (e) => gaveUp.push(e),
  });
  return { w, unavailable, available, gaveUp };
}

describe("ClusterWatch", () => {
  test("the delay doubles per failed attempt from initialDelayMs, capped at maxDelayMs, at most 20 % less", () => {
    const { w, unavailable } = watch({ initialDelayMs: 100, maxDelayMs: 1_000 });
    const delays = Array.from({ length: 8 }, (_, i) => w.failed(new Error(`attempt ${i + 1}`), ["b:1"]));
    const bases = [100, 200, 400, 800, 1_000, 1_000, 1_000, 1_000];
    delays.forEach((d, i) => assert.ok(d <= bases[i] && d >= bases[i] * 0.8, `attempt ${i + 1}: ${d} for ${bases[i]}`));
    assert.deepEqual(unavailable.map((e) => e.attempts), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(unavailable.map((e) => e.delayMs), delays);
    assert.equal((unavailable[7].lastError as Error).message, "attempt 8");
    assert.deepEqual(unavailable[7].brokers, ["b:1"]);
    w.close();
  });

  test("states: connecting at start, waiting after a failure, available once it answers; the outage is reported once it ends", async () => {
    const { w, available } = watch();
    w.connecting();
    assert.equal(w.metrics().state, "connecting");
    w.recovered(); // the first attempt worked: no outage
    assert.deepEqual([w.metrics().state, w.metrics().outages, available.length], ["available", 0, 0]);
    w.failed(new Error("refused"), ["a:1"]);
    w.failed(new Error("refused"), ["b:2", "a:1"]);
    await sleep(20);
    const m = w.metrics();
    assert.equal(m.state, "waiting");
    assert.equal(m.attempts, 2);
    assert.deepEqual(m.brokers, ["a:1", "b:2"]);
    assert.ok(m.sinceMs !== undefined && m.sinceMs >= 15, `sinceMs ${m.sinceMs}`);
    w.recovered();
    assert.equal(available.length, 1);
    assert.equal(available[0].attempts, 2);
    assert.ok(available[0].downMs >= 15);
    assert.deepEqual([w.metrics().state, w.metrics().attempts, w.metrics().outages], ["available", 0, 1]);
    w.close();
  });

  test("gives up after maxUnavailableMs counted from the start, naming the brokers and the last error; an answer in time cancels it", async () => {
    const { w, gaveUp } = watch({ maxUnavailableMs: 60 });
    w.connecting();
    await sleep(30);
    w.failed(new Error("ECONNREFUSED"), ["127.0.0.1:9"]);
    await until(() => gaveUp.length === 1, 1_000, "the give-up");
    const e = gaveUp[0];
    assert.ok(e instanceof ClusterUnavailableError);
    assert.deepEqual(e.brokers, ["127.0.0.1:9"]);
    assert.equal(e.attempts, 1);
    assert.equal((e.cause as Error).message, "ECONNREFUSED");
    assert.ok(e.waitedMs >= 55, `waited ${e.waitedMs}`);
    assert.match(e.message, /127\.0\.0\.1:9.*ECONNREFUSED/);

    const other = watch({ maxUnavailableMs: 40 });
    other.w.failed(new Error("down"));
    other.w.recovered();
    await sleep(80);
    assert.equal(other.gaveUp.length, 0, "recovered in time");
    other.w.close();
  });

  test("options out of range are typed errors naming the value", () => {
    const hooks = { unavailable() {}, available() {}, giveUp() {} };
    assert.throws(() => new ClusterWatch({ maxUnavailableMs: -1 }, hooks), (e: unknown) => e instanceof InvalidArgumentError && /maxUnavailableMs.*-1/.test(e.message));
    assert.throws(() => new ClusterWatch({ initialDelayMs: Infinity }, hooks), (e: unknown) => e instanceof InvalidArgumentError && /initialDelayMs.*Infinity/.test(e.message));
    assert.throws(() => new ClusterWatch({ maxDelayMs: "5" as unknown as number }, hooks), (e: unknown) => e instanceof InvalidArgumentError && /maxDelayMs.*"5"/.test(e.message));
  });
});

/** A client whose cluster never answers: its start retries with the sink's backoff until the sink's signal aborts. */
class UnreachableClient extends MemoryClient {
  attempts = 0;
  override async start(sink: ClientSink<Msg>): Promise<void> {
    this.sink = sink;
    while (!sink.signal.aborted) {
      this.attempts++;
      const delay = sink.unavailable(new Error("connect ECONNREFUSED 127.0.0.1:9"), ["127.0.0.1:9"]);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        sink.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
      });
    }
  }
}

describe("ParallelConsumer while its cluster is unreachable at start", () => {
  test("the signal ends the wait: start() resolves to a stopped consumer, done resolves, the client is closed", async () => {
    const client = new UnreachableClient();
    const controller = new AbortController();
    const events: number[] = [];
    const consumer = new ParallelConsumer<Msg>(client, {
      handler: () => {},
      signal: controller.signal,
      cluster: { initialDelayMs: 5, maxDelayMs: 20 },
      on: { unavailable: (e) => events.push(e.attempts) },
    });
    const starting = consumer.start();
    await until(() => client.attempts >= 3, 2_000, "attempts");
    assert.equal(consumer.state, "starting");
    assert.equal(consumer.metrics().cluster.state, "waiting");
    assert.deepEqual(consumer.metrics().cluster.brokers, ["127.0.0.1:9"]);
    const t0 = Date.now();
    controller.abort();
    await starting;
    assert.ok(Date.now() - t0 < 200, `start ended ${Date.now() - t0} ms after the abort`);
    assert.equal(consumer.state, "stopped");
    await consumer.done;
    assert.equal(client.closed, true);
    assert.deepEqual(events.slice(0, 3), [1, 2, 3]);
  });

  test("cluster.maxUnavailableMs ends it: start() and done reject with ClusterUnavailableError", async () => {
    const client = new UnreachableClient();
    const consumer = new ParallelConsumer<Msg>(client, { handler: () => {}, cluster: { maxUnavailableMs: 100, initialDelayMs: 10 } });
    const t0 = Date.now();
    await assert.rejects(consumer.start(), (e: unknown) => e instanceof ClusterUnavailableError && e.brokers.includes("127.0.0.1:9"));
    const ms = Date.now() - t0;
    assert.ok(ms >= 95 && ms < 1_000, `gave up after ${ms} ms`);
    assert.equal(consumer.state, "failed");
    await assert.rejects(consumer.done, ClusterUnavailableError);
    await until(() => client.closed, 1_000, "the client closed");
  });

  test("a give-up before the client reported any failure names what the binding's direct attempt found", async () => {
    // The client is still inside its own first attempt (it never calls sink.unavailable).
    class SilentClient extends MemoryClient {
      probes = 0;
      override start(sink: ClientSink<Msg>): Promise<void> {
        this.sink = sink;
        return new Promise<void>((resolve) => sink.signal.addEventListener("abort", () => resolve(), { once: true }));
      }
      probe(): Promise<ProbeResult> {
        this.probes++;
        return Promise.resolve({ brokers: ["10.0.0.1:9092"], error: new Error("connect ETIMEDOUT 10.0.0.1:9092") });
      }
    }
    const client = new SilentClient();
    const consumer = new ParallelConsumer<Msg>(client, { handler: () => {}, cluster: { maxUnavailableMs: 50 } });
    await assert.rejects(consumer.start(), (e: unknown) => {
      assert.ok(e instanceof ClusterUnavailableError, String(e));
      assert.deepEqual([e.attempts, e.probed, e.brokers], [0, true, ["10.0.0.1:9092"]]);
      assert.match(e.message, /at 10\.0\.0\.1:9092 .*direct attempt on giving up failed: Error: connect ETIMEDOUT/);
      return true;
    });
    assert.equal(client.probes, 1);
    // Without a probe the error says why it names no cause.
    const bare = new ParallelConsumer<Msg>(Object.assign(new SilentClient(), { probe: undefined }), { handler: () => {}, cluster: { maxUnavailableMs: 50 } });
    await assert.rejects(bare.start(), (e: unknown) => e instanceof ClusterUnavailableError && !e.probed && e.cause === undefined && /no attempt had failed yet/.test(e.message));
  });

  test("a shutdown during an outage ends within the grace (plus at most a second for the last commits) and confirms nothing", async () => {
    const client = new MemoryClient();
    client.commitImpl = () => new Promise<void>(() => {}); // the broker never answers
    const consumer = new ParallelConsumer<Msg>(client, { handler: () => {}, shutdownGraceMs: 300, commit: { timeoutMs: 60_000 } });
    await consumer.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    client.deliver("t", 0, range(0, 10));
    await until(() => consumer.metrics().completed === 10, 2_000, "records done");
    client.sink.unavailable(new Error("connect ECONNREFUSED"), ["127.0.0.1:9"]);
    const t0 = Date.now();
    await consumer.shutdown();
    const ms = Date.now() - t0;
    assert.ok(ms < 1_600, `shutdown took ${ms} ms`);
    assert.ok(client.commits.length >= 1, "a commit was tried");
    assert.equal(client.committed.size, 0, "nothing acknowledged");
    assert.equal(consumer.state, "stopped");
    assert.equal(client.closed, true);
  });
});
