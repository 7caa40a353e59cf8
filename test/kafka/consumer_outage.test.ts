/**
 * Real broker, real outages: consumers ride them out by themselves (issue 14).
 *
 * - (1) + (2), one broker of this file's own (it is SIGKILLed on purpose, so never the
 *   shared one of KAFKA_BROKERS): consumer A runs mid-topic when the broker is killed;
 *   10 s into the outage consumer B starts (its `consume()` waits); 30 s after the kill
 *   the broker restarts on the same data dir and port (B waited 20 s). Both resume by
 *   themselves: every record processed, the group's committed offsets equal the end
 *   offsets, nothing lost, neither consumer failed; both reported the outage
 *   (`unavailable` events, `metrics().cluster.state === "waiting"`) and its end
 *   (`available`). Before that, an unknown topic fails at once with a typed refusal
 *   naming the topic and the broker.
 * - (3) and (4) need no broker: a closed port. (3) `cluster.maxUnavailableMs: 5000`:
 *   `consume()` rejects within the bound plus a second with a `ClusterUnavailableError`
 *   naming the broker; with KafkaJS's default retries (about 10 s before it reports a
 *   failure) and a 3000 ms bound, the error still names the broker and the cause (the
 *   binding's direct attempt on giving up), and on Node no timer or socket made by our
 *   code outlives `done`. (4) an `AbortSignal` aborted while `consume()` waits ends it
 *   within a second (it resolves to a stopped consumer).
 *
 * - (5) the Confluent binding (Node only, through test/kafka/bindings.ts, its default
 *   protocol), and the same for the @platformatic/kafka binding (Bun, Deno, Node >= 22.22): a consumer runs mid-topic when its own broker is SIGKILLed; 20 s later the
 *   broker restarts. The binding reports the outage from librdkafka's error events and
 *   failed probes (`unavailable`, cluster state `waiting`) and its end (`available`), and
 *   the consumer finishes by itself: every record processed, committed = end.
 * - (6)-(8) the Confluent counterparts of (2)-(4), i.e. of a start during an outage: (6) a
 *   consumer started while its broker is down (killed) still waits 35 s later (past the
 *   client's 30 s connect timeout: a second attempt), reports failed attempts, and once the
 *   broker is back finishes every record with committed = end; (7) no broker,
 *   `cluster.maxUnavailableMs: 5000`: `start()` rejects within the bound plus a second with a
 *   `ClusterUnavailableError`; (8) an abort while `start()` waits ends it within a second;
 *   (9) a wrong SASL password (a broker with a SASL_PLAINTEXT listener) is not waited out:
 *   `start()` rejects with a `ClusterRefusedError` of kind `authentication`.
 *
 * Uses this runtime's adapter (`adapters/node.ts`, `bun.ts` or `deno.ts`). Runs
 * unchanged under `node --import tsx --test`, `bun test` and `deno test -A`.
 */
import assert from "node:assert/strict";
import { createServer, type AddressInfo } from "node:net";
import { test } from "node:test";
import process from "node:process";
import { Kafka, type KafkaMessage, logLevel, type RetryOptions } from "kafkajs";
import type { KafkaJSConsumerOptions, ParallelConsumer } from "../../adapters/kafkajs/mod.ts";
import { ClusterRefusedError, ClusterUnavailableError, StartInterruptedError } from "../../core/errors.ts";
import { committedOffsets, createTopic, endOffsets, produce, startBroker } from "../broker/broker.ts";
import { asObject, consumerConfig, kafka as loggingKafka, runtime, sleep, unique, waitFor } from "./helpers.ts";
import { type Binding, bindings, confluentConfig, loadConfluent } from "./bindings.ts";

/** A KafkaJS client that keeps quiet about the outage's connection errors (KAFKAJS_LOG=… to see them). */
function kafka(brokers: string, retry?: RetryOptions): Kafka {
  if (process.env.KAFKAJS_LOG) return loggingKafka(brokers);
  return new Kafka({ clientId: `offset-frontier-outage-${runtime()}`, brokers: [brokers], logLevel: logLevel.NOTHING, ...(retry ? { retry } : {}) });
}

/** The KafkaJS adapter tests run when KafkaJS is among the bindings (not in the platformatic-only Node 24 run). */
const kafkajsTest: typeof test = bindings().some((b) => b.name === "kafkajs") ? test : ((() => {}) as unknown as typeof test);

type Consume = (options: KafkaJSConsumerOptions & { signals?: readonly never[] }) => Promise<ParallelConsumer<KafkaMessage>>;

async function adapter(): Promise<Consume> {
  const rt = runtime();
  const mod = rt === "deno"
    ? await import("../../adapters/deno.ts")
    : rt === "bun"
    ? await import("../../adapters/bun.ts")
    : await import("../../adapters/node.ts");
  return mod.consume as Consume;
}

/** A 127.0.0.1 address nothing listens on (a port bound and released). */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `127.0.0.1:${port}`;
}

/** Everything a test consumer saw. */
interface Seen {
  processed: Set<string>;
  unavailable: number;
  available: number;
  errors: string[];
}

/** The handler (10 ms a record) and event listeners that record into `seen`. */
function observing(seen: Seen) {
  return {
    handler: async (_m: unknown, { partition, offset }: { partition: number; offset: number }) => {
      await sleep(10);
      seen.processed.add(`${partition}:${offset}`);
    },
    on: {
      unavailable: () => void seen.unavailable++,
      available: () => void seen.available++,
      error: (e: { kind: string; error: unknown }) => void seen.errors.push(`${e.kind}: ${String(e.error)}`),
    },
  };
}

function options(brokers: string, topic: string, group: string, seen: Seen, signal: AbortSignal) {
  return {
    consumer: kafka(brokers).consumer(consumerConfig(group)),
    kafka: kafka(brokers),
    topics: [topic],
    fromBeginning: true,
    concurrency: 8,
    signal,
    signals: [] as never[],
    ...observing(seen),
  };
}

const T0 = Date.now();
/** A timeline line on stderr (where a slow run spent its time). */
function note(what: string): void {
  console.error(`# outage ${((Date.now() - T0) / 1000).toFixed(1)}s: ${what}`);
}

function missing(processed: Set<string>, ends: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [p, end] of Object.entries(ends)) {
    for (let o = 0; o < Number(end); o++) if (!processed.has(`${p}:${o}`)) out.push(`${p}:${o}`);
  }
  return out;
}

kafkajsTest(`(${runtime()}) the broker down 30 s mid-run, and a consumer started 20 s before it is back: both finish by themselves`, { timeout: 240_000 }, async () => {
  const consume = await adapter();
  const broker = await startBroker();
  const controller = new AbortController();
  try {
    const b = broker.brokers;
    note(`broker up at ${b}`);

    // A refusal is not waited out: an unknown topic (auto-creation is off) fails at once.
    const nowhere = unique("outage-no-such-topic");
    const t0 = Date.now();
    await assert.rejects(
      consume({ ...options(b, nowhere, unique("outage-refused"), newSeen(), controller.signal) }),
      (e: unknown) => {
        assert.ok(e instanceof ClusterRefusedError, `a ClusterRefusedError, got ${String(e)}`);
        assert.equal(e.kind, "unknown-topic");
        assert.deepEqual(e.topics, [nowhere]);
        assert.ok(e.message.includes(nowhere) && e.message.includes(b), e.message);
        return true;
      },
    );
    assert.ok(Date.now() - t0 < 5_000, `refused at once (${Date.now() - t0} ms)`);

    note("unknown topic refused");
    const topicA = unique("outage-mid"), topicB = unique("outage-start");
    const groupA = unique("outage-mid-group"), groupB = unique("outage-start-group");
    await createTopic(b, topicA, 3);
    await createTopic(b, topicB, 3);
    await produce(b, topicA, Array.from({ length: 3_000 }, (_, i) => ({ key: `k${i % 100}`, value: `${i}` })));
    await produce(b, topicB, Array.from({ length: 1_000 }, (_, i) => ({ key: `k${i % 100}`, value: `${i}` })));
    const endsA = asObject(await endOffsets(b, topicA));
    const endsB = asObject(await endOffsets(b, topicB));

    const seenA = newSeen(), seenB = newSeen();
    const a = await consume(options(b, topicA, groupA, seenA, controller.signal));
    let aSettled = false;
    void a.closed.then(() => (aSettled = true));
    await waitFor(() => seenA.processed.size >= 600, 60_000, "consumer A under way");

    note(`A under way (${seenA.processed.size}); killing the broker`);
    await broker.kill();
    const killedAt = Date.now();
    await sleep(10_000);
    note("starting B");
    const bStartedAt = Date.now();
    const startingB = consume(options(b, topicB, groupB, seenB, controller.signal));
    let bStarted = false;
    void startingB.then(() => (bStarted = true), () => (bStarted = true));
    await waitFor(() => a.metrics().cluster.state === "waiting", 20_000, "A to report the outage in its metrics");
    await sleep(Math.max(0, killedAt + 30_000 - Date.now()));
    assert.equal(bStarted, false, "B's consume() still waits for the cluster");
    assert.ok(seenB.unavailable >= 1, `B reported failed attempts (${seenB.unavailable})`);
    assert.equal(a.state, "running");
    const outageMs = Date.now() - killedAt, bWaitedMs = Date.now() - bStartedAt;
    note(`restarting the broker (A: ${JSON.stringify(a.metrics().cluster)}, B: ${seenB.unavailable} unavailable)`);
    await broker.restart();
    note("broker back");

    const c = await startingB;
    note("B started");
    assert.equal(c.state, "running");
    await waitFor(() => missing(seenB.processed, endsB).length === 0, 90_000, "B to finish its topic");
    note("B finished its topic");
    await waitFor(() => missing(seenA.processed, endsA).length === 0, 90_000, "A to finish its topic");
    note("A finished its topic");
    // Committed = end: the commits resumed (A) or began (B) after the outage.
    const deadline = Date.now() + 60_000;
    let committedA: Record<string, string> = {}, committedB: Record<string, string> = {};
    while (Date.now() < deadline) {
      committedA = asObject(await committedOffsets(b, groupA, topicA));
      committedB = asObject(await committedOffsets(b, groupB, topicB));
      if (JSON.stringify(committedA) === JSON.stringify(endsA) && JSON.stringify(committedB) === JSON.stringify(endsB)) break;
      await sleep(250);
    }
    assert.deepEqual(committedA, endsA, "A's committed offsets equal the end offsets");
    assert.deepEqual(committedB, endsB, "B's committed offsets equal the end offsets");
    assert.equal(aSettled, false, "A never stopped on its own");
    assert.ok(seenA.unavailable >= 1 && seenA.available >= 1, `A reported the outage and its end (${JSON.stringify({ ...seenA, processed: seenA.processed.size, errors: seenA.errors.length })})`);
    assert.ok(seenB.available >= 1, "B reported the cluster back");
    assert.equal(a.metrics().cluster.state, "available");
    assert.equal(c.metrics().cluster.state, "available");

    controller.abort();
    await a.done;
    await c.done;
    console.log(
      `# outage (${runtime()}): broker down ${outageMs} ms; A ${seenA.processed.size} of 3000 records ` +
        `(${seenA.unavailable} unavailable events), B waited ${bWaitedMs} ms then ${seenB.processed.size} of 1000`,
    );
  } finally {
    controller.abort();
    await broker.stop();
  }
});

kafkajsTest(`(${runtime()}) no broker, cluster.maxUnavailableMs 5000: consume() rejects within the bound + 1 s with ClusterUnavailableError`, { timeout: 30_000 }, async () => {
  const consume = await adapter();
  const address = await closedPort();
  const seen = newSeen();
  const controller = new AbortController();
  const t0 = Date.now();
  // KafkaJS retries a connect 5 times by default (8-12 s per attempt): fewer here, so that
  // attempts fail within the bound and the error names the broker they tried.
  const opts = options(address, unique("outage-gone"), unique("outage-gone-group"), seen, controller.signal);
  opts.consumer = kafka(address, { retries: 1, initialRetryTime: 100 }).consumer(consumerConfig(unique("outage-gone-group")));
  await assert.rejects(consume({ ...opts, cluster: { maxUnavailableMs: 5_000 } }), (e: unknown) => {
    const ms = Date.now() - t0;
    assert.ok(e instanceof ClusterUnavailableError, `a ClusterUnavailableError, got ${String(e)}`);
    assert.ok(ms >= 4_900 && ms <= 6_000, `rejected after ${ms} ms`);
    assert.ok(e.brokers.includes(address), `names ${address}: ${e.message}`);
    assert.ok(e.attempts >= 1 && e.cause instanceof Error, e.message);
    assert.ok(e.message.includes(address), e.message);
    return true;
  });
  assert.ok(seen.unavailable >= 1, "each failed attempt was reported");
});

kafkajsTest(`(${runtime()}) no broker, KafkaJS's default retries outlasting cluster.maxUnavailableMs 3000: the error still names the broker and the cause, and nothing of ours outlives done`, { timeout: 30_000 }, async () => {
  const consume = await adapter();
  const address = await closedPort();
  const controller = new AbortController();
  // Node: every timer, socket and immediate made from this repository's own frames (not
  // KafkaJS's, though our calls reach them) while consuming, until it is gone again.
  const ours = new Map<number, string>();
  const hook = runtime() === "node" ? await ownResources(ours) : undefined;
  const t0 = Date.now();
  try {
    const opts = options(address, unique("outage-early"), unique("outage-early-group"), newSeen(), controller.signal);
    opts.consumer = kafka(address).consumer(consumerConfig(unique("outage-early-group"))); // KafkaJS's ~10 s of retries
    opts.kafka = kafka(address);
    await assert.rejects(consume({ ...opts, cluster: { maxUnavailableMs: 3_000 } }), (e: unknown) => {
      const ms = Date.now() - t0;
      assert.ok(e instanceof ClusterUnavailableError, `a ClusterUnavailableError, got ${String(e)}`);
      assert.ok(ms >= 2_900 && ms <= 6_000, `rejected after ${ms} ms`);
      assert.equal(e.attempts, 0, "KafkaJS had reported no failure yet");
      assert.ok(e.probed, e.message);
      assert.deepEqual(e.brokers, [address]);
      assert.ok(e.cause instanceof Error && /ECONNREFUSED/.test(String(e.cause.message)), `cause: ${String(e.cause)}`);
      assert.ok(e.message.includes(address) && e.message.includes("ECONNREFUSED"), e.message);
      return true;
    });
    await sleep(200); // closing settles
    if (hook) assert.deepEqual([...ours.values()], [], "resources of ours still alive after done settled");
  } finally {
    hook?.disable();
    controller.abort();
  }
});

/** Records, in `live`, the async resources whose creating frame (the first outside Node's internals) is this repository's own source, until destroyed. */
async function ownResources(live: Map<number, string>): Promise<{ disable(): void }> {
  const { createHook } = await import("node:async_hooks");
  const limit = Error.stackTraceLimit;
  return createHook({
    init(id, type) {
      if (type === "PROMISE") return;
      Error.stackTraceLimit = 30;
      const frames = (new Error().stack ?? "").split("\n").slice(1).map((l) => l.trim());
      Error.stackTraceLimit = limit;
      const first = frames.slice(1).find((f) => !f.includes("node:")); // [0]: this hook
      if (first !== undefined && !first.includes("node_modules") && /\/(core|adapters)\//.test(first)) live.set(id, `${type} ${first}`);
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
}

kafkajsTest(`(${runtime()}) an AbortSignal aborted while consume() waits for the cluster ends it within a second, rejecting: it never connected`, { timeout: 30_000 }, async () => {
  const consume = await adapter();
  const address = await closedPort();
  const seen = newSeen();
  const controller = new AbortController();
  const starting = consume(options(address, unique("outage-abort"), unique("outage-abort-group"), seen, controller.signal));
  let settled = false;
  void starting.then(() => (settled = true), () => (settled = true));
  await sleep(3_000); // KafkaJS's first connect attempt is still retrying
  assert.equal(settled, false, "consume() waits for the cluster");
  const abortedAt = Date.now();
  controller.abort();
  // Issue 42: consume() resolved here, as if consuming had begun.
  await assert.rejects(starting, (e: unknown) => e instanceof StartInterruptedError && /before it consumed anything/.test(e.message));
  const ms = Date.now() - abortedAt;
  assert.ok(ms < 1_000, `consume() ended ${ms} ms after the abort`);
});

function newSeen(): Seen {
  return { processed: new Set(), unavailable: 0, available: 0, errors: [] };
}

/**
 * The outage tests' consumer through `binding` (not started): 8 at a time from the
 * beginning, recording into `seen`; `settled()` tells whether it has closed.
 */
function outageConsumer(binding: Binding, brokers: string, groupId: string, topic: string, signal: AbortSignal) {
  const seen = newSeen();
  const c = binding.create({ brokers, groupId, topics: [topic], fromBeginning: true, concurrency: 8, signal, ...observing(seen) });
  let closed = false;
  void c.closed.then(() => (closed = true));
  return { c, seen, settled: (): boolean => closed };
}

// The outage suite of the bindings that report outages through the port themselves (KafkaJS
// has the adapter tests above).
for (const binding of bindings().filter((b) => b.name === "confluent" || b.name === "platformatic")) {
  test(`(${runtime()}, ${binding.name}) the broker down 20 s mid-run: the binding reports the outage and its end; the consumer finishes by itself`, { timeout: 240_000 }, async () => {
    const broker = await startBroker();
    const controller = new AbortController();
    try {
      const b = broker.brokers;
      const topic = unique("outage-confluent"), groupId = unique("outage-confluent-group");
      await createTopic(b, topic, 3);
      await produce(b, topic, Array.from({ length: 3_000 }, (_, i) => ({ key: `k${i % 100}`, value: `${i}` })));
      const ends = asObject(await endOffsets(b, topic));
      const { c, seen, settled } = outageConsumer(binding, b, groupId, topic, controller.signal);
      await c.start();
      await waitFor(() => seen.processed.size >= 600, 60_000, "the consumer under way");
      note(`${binding.name}: under way (${seen.processed.size}); killing the broker`);
      await broker.kill();
      const killedAt = Date.now();
      await waitFor(() => c.metrics().cluster.state === "waiting", 20_000, "the consumer to report the outage in its metrics");
      assert.ok(seen.unavailable >= 1, "an unavailable event");
      await sleep(Math.max(0, killedAt + 20_000 - Date.now()));
      assert.equal(c.state, "running");
      const outageMs = Date.now() - killedAt;
      note(`${binding.name}: restarting the broker (${JSON.stringify(c.metrics().cluster)})`);
      await broker.restart();
      await waitFor(() => missing(seen.processed, ends).length === 0, 120_000, "every record");
      const deadline = Date.now() + 60_000;
      let committed: Record<string, string> = {};
      while (Date.now() < deadline) {
        committed = asObject(await committedOffsets(b, groupId, topic));
        if (JSON.stringify(committed) === JSON.stringify(ends) && c.metrics().cluster.state === "available") break;
        await sleep(250);
      }
      assert.deepEqual(committed, ends, "committed offsets equal the end offsets");
      assert.equal(settled(), false, "the consumer never stopped on its own");
      assert.ok(seen.available >= 1, `the end of the outage was reported (${seen.unavailable} unavailable, ${seen.available} available)`);
      assert.equal(c.metrics().cluster.state, "available");
      controller.abort();
      await c.done;
      console.log(`# outage (${runtime()}, ${binding.name}): broker down ${outageMs} ms; ${seen.processed.size} of 3000 records, ${seen.unavailable} unavailable / ${seen.available} available events`);
    } finally {
      controller.abort();
      await broker.stop();
    }
  });

  test(`(${runtime()}, ${binding.name}) a consumer started while the broker is down waits, and finishes by itself once it is back`, { timeout: 240_000 }, async () => {
    const broker = await startBroker();
    const controller = new AbortController();
    try {
      const b = broker.brokers;
      const topic = unique("outage-confluent-start"), groupId = unique("outage-confluent-start-group");
      await createTopic(b, topic, 3);
      await produce(b, topic, Array.from({ length: 1_000 }, (_, i) => ({ key: `k${i % 100}`, value: `${i}` })));
      const ends = asObject(await endOffsets(b, topic));
      await broker.kill();
      const killedAt = Date.now();
      const { c, seen, settled } = outageConsumer(binding, b, groupId, topic, controller.signal);
      note(`${binding.name}: broker killed; starting a consumer`);
      const starting = c.start();
      let started = false;
      void starting.then(() => (started = true), () => (started = true));
      // Past the client's 30 s metadata timeout: its first connect failed, the next attempt waits.
      await sleep(35_000);
      assert.equal(started, false, "start() still waits for the cluster");
      assert.equal(c.metrics().cluster.state, "waiting");
      assert.ok(seen.unavailable >= 2, `failed attempts were reported (${seen.unavailable})`);
      const outageMs = Date.now() - killedAt;
      note(`${binding.name}: restarting the broker (${JSON.stringify(c.metrics().cluster)})`);
      await broker.restart();
      await starting;
      note(`${binding.name}: started`);
      assert.equal(c.state, "running");
      await waitFor(() => missing(seen.processed, ends).length === 0, 120_000, "every record");
      const deadline = Date.now() + 60_000;
      let committed: Record<string, string> = {};
      while (Date.now() < deadline) {
        committed = asObject(await committedOffsets(b, groupId, topic));
        if (JSON.stringify(committed) === JSON.stringify(ends)) break;
        await sleep(250);
      }
      assert.deepEqual(committed, ends, "committed offsets equal the end offsets");
      assert.equal(settled(), false, "the consumer never stopped on its own");
      assert.ok(seen.available >= 1, `the cluster's answer was reported (${seen.unavailable} unavailable, ${seen.available} available)`);
      assert.equal(c.metrics().cluster.state, "available");
      controller.abort();
      await c.done;
      console.log(`# outage (${runtime()}, ${binding.name}): started ${outageMs} ms into an outage; ${seen.processed.size} of 1000 records, ${seen.unavailable} unavailable events`);
    } finally {
      controller.abort();
      await broker.stop();
    }
  });

  if (binding.name === "confluent") test(`(${runtime()}, ${binding.name}) failed SASL authentication is not waited out: start() rejects with a ClusterRefusedError`, { timeout: 120_000 }, async () => {
    const broker = await startBroker({ saslPlain: { username: "alice", password: "right" } });
    try {
      const sasl = broker.saslBrokers!;
      const { KafkaJS } = loadConfluent();
      const { createConfluentConsumer } = await import("../../adapters/confluent/mod.ts");
      const topic = unique("outage-confluent-sasl");
      await createTopic(broker.brokers, topic, 1);
      const consumer = (password: string) =>
        createConfluentConsumer({
          kafka: new KafkaJS.Kafka({ kafkaJS: { brokers: [sasl], logLevel: KafkaJS.logLevel.NOTHING } }),
          config: {
            ...confluentConfig(unique("outage-confluent-sasl-group"), "consumer"),
            "security.protocol": "sasl_plaintext",
            "sasl.mechanisms": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": password,
          },
          topics: [topic],
          handler: async () => {},
        });
      // The listener works: the right password starts.
      const ok = consumer("right");
      await ok.start();
      assert.equal(ok.state, "running");
      await ok.shutdown();
      const t0 = Date.now();
      const refused = consumer("wrong");
      const seen = newSeen();
      refused.on("unavailable", () => void seen.unavailable++);
      await assert.rejects(refused.start(), (e: unknown) => {
        assert.ok(e instanceof ClusterRefusedError, `a ClusterRefusedError, got ${String(e)}`);
        assert.equal(e.kind, "authentication");
        return true;
      });
      await assert.rejects(refused.done, ClusterRefusedError);
      note(`${binding.name}: SASL refusal after ${Date.now() - t0} ms (${seen.unavailable} unavailable events before it)`);
    } finally {
      await broker.stop();
    }
  });

  if (binding.name === "platformatic") test(`(${runtime()}, ${binding.name}) failed SASL authentication is not waited out: start() rejects with a ClusterRefusedError`, { timeout: 120_000 }, async () => {
    const broker = await startBroker({ saslPlain: { username: "alice", password: "right" } });
    try {
      const sasl = broker.saslBrokers!;
      const { Consumer } = await import("@platformatic/kafka");
      const { createPlatformaticConsumer } = await import("../../adapters/platformatic/mod.ts");
      const topic = unique("outage-platformatic-sasl");
      await createTopic(broker.brokers, topic, 1);
      const consumer = (password: string) =>
        createPlatformaticConsumer({
          consumer: new Consumer({
            groupId: unique("outage-platformatic-sasl-group"),
            clientId: unique("sasl"),
            bootstrapBrokers: [sasl],
            sasl: { mechanism: "PLAIN", username: "alice", password },
          }),
          topics: [topic],
          handler: async () => {},
        });
      // The listener works: the right password starts.
      const ok = consumer("right");
      await ok.start();
      assert.equal(ok.state, "running");
      await ok.shutdown();
      const t0 = Date.now();
      const refused = consumer("wrong");
      const seen = newSeen();
      refused.on("unavailable", () => void seen.unavailable++);
      await assert.rejects(refused.start(), (e: unknown) => {
        assert.ok(e instanceof ClusterRefusedError, `a ClusterRefusedError, got ${String(e)}`);
        assert.equal(e.kind, "authentication");
        return true;
      });
      await assert.rejects(refused.done, ClusterRefusedError);
      note(`${binding.name}: SASL refusal after ${Date.now() - t0} ms (${seen.unavailable} unavailable events before it)`);
    } finally {
      await broker.stop();
    }
  });

  test(`(${runtime()}, ${binding.name}) no broker, cluster.maxUnavailableMs 5000: start() rejects within the bound + 1 s with ClusterUnavailableError`, { timeout: 30_000 }, async () => {
    const address = await closedPort();
    const seen = newSeen();
    const c = binding.create({
      brokers: address,
      groupId: unique("outage-confluent-gone-group"),
      topics: [unique("outage-confluent-gone")],
      cluster: { maxUnavailableMs: 5_000 },
      ...observing(seen),
    });
    const t0 = Date.now();
    await assert.rejects(c.start(), (e: unknown) => {
      const ms = Date.now() - t0;
      assert.ok(e instanceof ClusterUnavailableError, `a ClusterUnavailableError, got ${String(e)}`);
      assert.ok(ms >= 4_900 && ms <= 6_000, `rejected after ${ms} ms`);
      assert.ok(e.attempts >= 1 && e.cause !== undefined, e.message);
      return true;
    });
    assert.ok(seen.unavailable >= 1, "each failed attempt was reported");
    await assert.rejects(c.done, ClusterUnavailableError);
  });

  test(`(${runtime()}, ${binding.name}) an AbortSignal aborted while start() waits for the cluster ends it within a second`, { timeout: 30_000 }, async () => {
    const address = await closedPort();
    const seen = newSeen();
    const controller = new AbortController();
    const c = binding.create({
      brokers: address,
      groupId: unique("outage-confluent-abort-group"),
      topics: [unique("outage-confluent-abort")],
      signal: controller.signal,
      ...observing(seen),
    });
    try {
      const starting = c.start();
      let settled = false;
      void starting.then(() => (settled = true), () => (settled = true));
      // A failed probe (3 s without an answer) is reported while the client's first connect is still pending (30 s).
      await waitFor(() => seen.unavailable >= 1, 15_000, "the outage to be reported");
      assert.equal(settled, false, "start() waits for the cluster");
      const abortedAt = Date.now();
      controller.abort();
      await starting;
      const ms = Date.now() - abortedAt;
      assert.ok(ms < 1_000, `start() ended ${ms} ms after the abort`);
      assert.equal(c.state, "stopped");
      await c.done; // resolves: a stop, not a failure
    } finally {
      controller.abort();
    }
  });
}
