// The metrics exporters against the real packages (prom-client, @opentelemetry/api with
// @opentelemetry/sdk-metrics), fed by a ParallelConsumer over the in-memory client: the
// scraped or collected values are the consumer's own snapshot after records completed,
// one blocked behind a slow head, a commit acknowledged and a pause.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Registry } from "prom-client";
import {
  AggregationTemporality,
  type DataPoint,
  MeterProvider,
  MetricReader,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { type CommitOffset, type CommittedPosition, ParallelConsumer } from "../../core/mod.ts";
import { registerPrometheus } from "../../adapters/exporters/prometheus.ts";
import { registerOpenTelemetry } from "../../adapters/exporters/otel.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

/**
 * A consumer with partition t/0 (offsets 0..9 done, safe 10, committed) and t/1 (offsets
 * 100..104 delivered, 100 held open so 101..104 are blocked, paused by its high mark of 4).
 */
async function scenario(): Promise<{ consumer: ParallelConsumer<Msg>; client: MemoryClient; release(): void }> {
  const client = new MemoryClient();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const consumer = new ParallelConsumer(client, {
    engine: "js",
    ordering: "unordered",
    concurrency: 8,
    highWaterMark: 4,
    lowWaterMark: 1,
    commit: { mode: "eager" },
    handler: async (m) => {
      if (m.offset === 100) await gate;
    },
  });
  await consumer.start();
  return { consumer, client, release };
}

async function drive(consumer: ParallelConsumer<Msg>, client: MemoryClient): Promise<void> {
  client.sink.assigned([{ topic: "t", partition: 0 }, { topic: "t", partition: 1 }]);
  client.deliver("t", 0, range(0, 10));
  client.deliver("t", 1, range(100, 5));
  client.sink.endOffsets!([{ topic: "t", partition: 0, endOffset: 30 }, { topic: "t", partition: 1, endOffset: 120 }]);
  await until(() => {
    const m = consumer.metrics();
    const [p0, p1] = m.partitions;
    return m.completed === 14 && p0.confirmed === 10 && p1.blocked === 4 && p1.paused;
  }, 3_000, "records complete, the commit acknowledged, t/1 paused");
}

/** The value of one sample line `name{labels} value` in Prometheus text. */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(labels ? `${name}{${labels}} ` : `${name} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("Prometheus exporter (prom-client)", () => {
  test("gauges per partition and counters read from metrics() at scrape time", async () => {
    const { consumer, client, release } = await scenario();
    const registry = new Registry();
    let snapshots = 0; // the consumer itself, counting its metrics() calls
    const source = { metrics: () => (snapshots++, consumer.metrics()), on: consumer.on.bind(consumer) };
    const unregister = registerPrometheus(source, { registry, labels: { service: "orders" } });
    await drive(consumer, client);
    snapshots = 0;
    const text = await registry.metrics();
    assert.equal(snapshots, 1, "one snapshot per scrape");
    const m = consumer.metrics();
    const p0 = m.partitions.find((p) => p.partition === 0)!, p1 = m.partitions.find((p) => p.partition === 1)!;
    const l = (partition: number) => `service="orders",topic="t",partition="${partition}"`;
    assert.equal(sample(text, "offset_frontier_partition_safe_offset", l(0)), 10);
    assert.equal(sample(text, "offset_frontier_partition_confirmed_offset", l(0)), 10);
    assert.equal(sample(text, "offset_frontier_partition_confirmed_lag", l(0)), 0);
    assert.equal(sample(text, "offset_frontier_partition_pending", l(0)), 0);
    // Lag: t/0 ends at 30, committed 10; t/1 ends at 120, read from 100 (committed or not), safe 100, delivered 105.
    assert.equal(sample(text, "offset_frontier_partition_end_offset", l(0)), 30);
    assert.equal(sample(text, "offset_frontier_partition_lag", l(0)), 20);
    assert.equal(sample(text, "offset_frontier_partition_lag", l(1)), 20);
    assert.equal(sample(text, "offset_frontier_partition_processing_lag", l(1)), 5);
    assert.equal(sample(text, "offset_frontier_lag", 'service="orders"'), 40);
    assert.match(text, /# TYPE offset_frontier_partition_lag gauge/);
    assert.equal(sample(text, "offset_frontier_partition_safe_offset", l(1)), p1.safe);
    assert.equal(p1.safe, 100);
    assert.equal(sample(text, "offset_frontier_partition_pending", l(1)), 1);
    assert.equal(sample(text, "offset_frontier_partition_blocked", l(1)), 4);
    assert.equal(sample(text, "offset_frontier_partition_retained", l(1)), 5);
    assert.equal(sample(text, "offset_frontier_partition_in_flight", l(1)), p1.inFlight);
    assert.equal(sample(text, "offset_frontier_partition_queued", l(1)), p1.queued);
    assert.equal(sample(text, "offset_frontier_partition_paused", l(1)), 1);
    assert.equal(sample(text, "offset_frontier_partition_paused", l(0)), 0);
    assert.equal(sample(text, "offset_frontier_partition_delivered_offset", l(1)), 105);
    assert.ok(sample(text, "offset_frontier_partition_oldest_pending_age_seconds", l(1))! >= 0);
    assert.equal(sample(text, "offset_frontier_partition_oldest_pending_age_seconds", l(0)), undefined, "none pending");
    assert.equal(p0.confirmed, 10);
    // t/1 has no acknowledged commit yet unless one carried its first safe position 100
    assert.equal(
      sample(text, "offset_frontier_partition_confirmed_lag", l(1)),
      p1.confirmed === undefined ? undefined : p1.safe! - p1.confirmed,
    );
    const s = 'service="orders"';
    assert.equal(sample(text, "offset_frontier_completed_total", s), 14);
    assert.equal(sample(text, "offset_frontier_commits_total", s), m.commits);
    assert.ok(m.commits >= 1);
    assert.equal(sample(text, "offset_frontier_commit_failures_total", s), 0);
    assert.equal(sample(text, "offset_frontier_retries_total", s), 0);
    assert.equal(sample(text, "offset_frontier_dead_letters_total", s), 0);
    assert.equal(sample(text, "offset_frontier_skipped_total", s), 0);
    assert.equal(sample(text, "offset_frontier_running", s), m.running);
    assert.equal(sample(text, "offset_frontier_retained", s), 5);
    assert.equal(sample(text, "offset_frontier_pauses_total", `${s},topic="t",partition="1",reason="high-water-mark"`), 1);
    assert.equal(sample(text, "offset_frontier_commit_latency_seconds_count", s), m.commits);
    assert.match(text, /# TYPE offset_frontier_completed_total counter/);
    assert.match(text, /# TYPE offset_frontier_partition_pending gauge/);

    // An outage: the client reports a failed attempt to reach the cluster, then an answer.
    assert.equal(sample(text, "offset_frontier_cluster_waiting", s), 0);
    assert.equal(sample(text, "offset_frontier_cluster_outages_total", s), 0);
    client.sink.unavailable(new Error("connect ECONNREFUSED"), ["127.0.0.1:9"]);
    const down = await registry.metrics();
    assert.equal(sample(down, "offset_frontier_cluster_waiting", s), 1);
    assert.equal(sample(down, "offset_frontier_cluster_outages_total", s), 1);
    client.sink.available();
    assert.equal(sample(await registry.metrics(), "offset_frontier_cluster_waiting", s), 0);

    // A later scrape reads a later snapshot: the head finishes, t/1 moves to 105.
    release();
    await until(() => consumer.metrics().partitions[1]?.confirmed === 105, 3_000, "t/1 committed");
    const after = await registry.metrics();
    assert.equal(sample(after, "offset_frontier_partition_safe_offset", l(1)), 105);
    assert.equal(sample(after, "offset_frontier_partition_blocked", l(1)), 0);
    assert.equal(sample(after, "offset_frontier_completed_total", s), 15);

    unregister();
    assert.deepEqual(registry.getMetricsAsArray(), [], "unregister removes every metric");
    await consumer.shutdown();
  });

  test("a handover: the claim read back and the records it let the next owner skip", async () => {
    // First owner: offset 3 never finishes, 0..19 otherwise do; its commit at 3 carries the completed set.
    const a = new MemoryClient();
    const ca = new ParallelConsumer<Msg>(a, {
      engine: "js",
      ordering: "unordered",
      handler: (m) => (m.offset === 3 ? new Promise(() => {}) : undefined),
    });
    await ca.start();
    a.sink.assigned([{ topic: "t", partition: 0 }]);
    a.deliver("t", 0, range(0, 20));
    const last = (): CommitOffset | undefined => a.commits.at(-1)?.find((o) => o.partition === 0);
    await until(() => a.committed.get("t/0") === 3 && last()?.metadata !== undefined, 2_000, "the first owner's commit");
    const committed = last()!;
    void ca.shutdown(10);
    // Second owner, with the exporter.
    const b = new MemoryClient();
    const cb = new ParallelConsumer<Msg>(b, { engine: "js", ordering: "unordered", handler: () => {} });
    const registry = new Registry();
    const unregister = registerPrometheus(cb, { registry });
    await cb.start();
    let answer!: (p: readonly CommittedPosition[]) => void;
    b.sink.assigned([{ topic: "t", partition: 0 }], new Promise((r) => (answer = r)));
    answer([{ topic: "t", partition: 0, offset: committed.offset, metadata: committed.metadata }]);
    await until(() => !b.paused.has("t/0"), 1_000, "released");
    b.deliver("t", 0, range(3, 17), 20);
    await until(() => cb.metrics().partitions[0]?.safe === 20, 1_000, "the second owner reaches 20");
    const text = await registry.metrics();
    assert.equal(sample(text, "offset_frontier_skipped_total"), cb.metrics().skipped);
    assert.equal(sample(text, "offset_frontier_skipped_total"), 16, "4..19 were claimed finished");
    assert.equal(sample(text, "offset_frontier_completed_total"), cb.metrics().completed);
    assert.equal(sample(text, "offset_frontier_claims_total", 'topic="t",partition="0",outcome="used"'), 1);
    unregister();
    await cb.shutdown();
  });

  test("bad options are typed errors naming the value; a clash leaves nothing half-registered", async () => {
    const { consumer } = await scenario();
    const registry = new Registry();
    assert.throws(() => registerPrometheus(consumer, { registry, prefix: "bad-prefix" }), /prefix .*"bad-prefix"/);
    assert.throws(() => registerPrometheus(consumer, { registry, labels: { topic: "x" } }), /label names .*"topic"/);
    const off = registerPrometheus(consumer, { registry });
    assert.throws(() => registerPrometheus(consumer, { registry }), /already been registered/);
    const again = registerPrometheus(consumer, { registry, prefix: "other_" });
    off();
    again();
    assert.deepEqual(registry.getMetricsAsArray(), []);
    await consumer.shutdown();
  });
});

/** A pull reader: `collect()` on demand, nothing exported by itself. */
class PullReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

/** Data points of the instrument `name`, from one collection. */
function points(rm: ResourceMetrics, name: string): DataPoint<unknown>[] {
  for (const sm of rm.scopeMetrics) for (const md of sm.metrics) if (md.descriptor.name === name) return md.dataPoints;
  return [];
}

function valueAt(rm: ResourceMetrics, name: string, attrs: Record<string, string | number> = {}): unknown {
  const match = points(rm, name).filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v));
  assert.ok(match.length <= 1, `one point of ${name} for ${JSON.stringify(attrs)}`);
  return match[0]?.value;
}

describe("OpenTelemetry exporter (@opentelemetry/api + sdk-metrics)", () => {
  test("observable instruments read one metrics() snapshot per collection", async () => {
    const { consumer, client, release } = await scenario();
    const reader = new PullReader();
    const provider = new MeterProvider({ readers: [reader] });
    let snapshots = 0; // the consumer itself, counting its metrics() calls
    const source = { metrics: () => (snapshots++, consumer.metrics()), on: consumer.on.bind(consumer) };
    const unregister = registerOpenTelemetry(source, {
      meter: provider.getMeter("offset-frontier-test"),
      attributes: { service: "orders" },
    });
    await drive(consumer, client);
    snapshots = 0;
    const { resourceMetrics: rm, errors } = await reader.collect();
    assert.deepEqual(errors, []);
    assert.equal(snapshots, 1, "one snapshot per collection");
    const m = consumer.metrics();
    const p1 = m.partitions.find((p) => p.partition === 1)!;
    const at = (partition: number) => ({ service: "orders", topic: "t", partition });
    assert.equal(valueAt(rm, "offset_frontier.partition_safe_offset", at(0)), 10);
    assert.equal(valueAt(rm, "offset_frontier.partition_confirmed_offset", at(0)), 10);
    assert.equal(valueAt(rm, "offset_frontier.partition_confirmed_lag", at(0)), 0);
    assert.equal(valueAt(rm, "offset_frontier.partition_end_offset", at(1)), 120);
    assert.equal(valueAt(rm, "offset_frontier.partition_lag", at(0)), 20);
    assert.equal(valueAt(rm, "offset_frontier.partition_lag", at(1)), 20);
    assert.equal(valueAt(rm, "offset_frontier.partition_processing_lag", at(1)), 5);
    assert.equal(valueAt(rm, "offset_frontier.lag", { service: "orders" }), 40);
    assert.equal(valueAt(rm, "offset_frontier.partition_safe_offset", at(1)), 100);
    assert.equal(valueAt(rm, "offset_frontier.partition_pending", at(1)), 1);
    assert.equal(valueAt(rm, "offset_frontier.partition_blocked", at(1)), 4);
    assert.equal(valueAt(rm, "offset_frontier.partition_retained", at(1)), 5);
    assert.equal(valueAt(rm, "offset_frontier.partition_in_flight", at(1)), p1.inFlight);
    assert.equal(valueAt(rm, "offset_frontier.partition_paused", at(1)), 1);
    assert.equal(valueAt(rm, "offset_frontier.partition_delivered_offset", at(1)), 105);
    assert.ok((valueAt(rm, "offset_frontier.partition_oldest_pending_age", at(1)) as number) >= 0);
    assert.equal(valueAt(rm, "offset_frontier.completed", { service: "orders" }), 14);
    assert.equal(valueAt(rm, "offset_frontier.commits", { service: "orders" }), m.commits);
    assert.equal(valueAt(rm, "offset_frontier.skipped", { service: "orders" }), 0);
    assert.equal(valueAt(rm, "offset_frontier.retained", { service: "orders" }), 5);
    assert.equal(
      valueAt(rm, "offset_frontier.pauses", { service: "orders", topic: "t", partition: 1, reason: "high-water-mark" }),
      1,
    );
    const latency = valueAt(rm, "offset_frontier.commit_latency", { service: "orders" }) as { count: number };
    assert.equal(latency.count, m.commits);

    release();
    await until(() => consumer.metrics().partitions[1]?.confirmed === 105, 3_000, "t/1 committed");
    const later = (await reader.collect()).resourceMetrics;
    assert.equal(valueAt(later, "offset_frontier.partition_safe_offset", at(1)), 105);
    assert.equal(valueAt(later, "offset_frontier.completed", { service: "orders" }), 15);

    unregister();
    snapshots = 0;
    await reader.collect();
    assert.equal(snapshots, 0, "no longer observed");
    await consumer.shutdown();
    await provider.shutdown();
  });

  test("a missing meter is a typed error", () => {
    const client = new MemoryClient();
    const consumer = new ParallelConsumer(client, { engine: "js", handler: () => {} });
    assert.throws(
      () => registerOpenTelemetry(consumer, {} as unknown as Parameters<typeof registerOpenTelemetry>[1]),
      /meter must be an OpenTelemetry Meter; got undefined/,
    );
  });
});
