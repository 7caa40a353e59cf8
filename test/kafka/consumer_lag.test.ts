/**
 * Real broker: the lag in metrics() and in both exporters (prom-client, OpenTelemetry's
 * SDK) is the broker's log end offset minus the group's committed offset, per partition
 * and in total, once a fetch (or, for a paused partition, the client's offset query at the
 * commit interval) saw the log end: caught up (0), behind while consumer.pause() holds the
 * partitions and records are produced (it grows: no fetch reports a paused partition),
 * behind while records run after the resume and more are produced, and back to 0 once
 * everything is committed. At each of those points both exporters also report the log end
 * the broker has and the records delivered but not yet safe (processing lag) as metrics() does.
 *
 * Through every binding of this runtime (test/kafka/bindings.ts). Runs unchanged under
 * `node --import tsx --test`, `bun test` and `deno test -A`; uses KAFKA_BROKERS when set,
 * else starts its own broker.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Registry } from "prom-client";
import { AggregationTemporality, type DataPoint, MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { committedOffsets, createTopic, endOffsets, produce, withBroker } from "../broker/broker.ts";
import { registerPrometheus } from "../../adapters/exporters/prometheus.ts";
import { registerOpenTelemetry } from "../../adapters/exporters/otel.ts";
import { bindings } from "./bindings.ts";
import { sleep, unique, waitFor } from "./helpers.ts";

/** A pull reader: `collect()` on demand. */
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

function otelValue(rm: ResourceMetrics, name: string, attrs: Record<string, string | number>): unknown {
  for (const sm of rm.scopeMetrics) {
    for (const md of sm.metrics) {
      if (md.descriptor.name !== name) continue;
      const p = (md.dataPoints as DataPoint<unknown>[]).find((d) => Object.entries(attrs).every(([k, v]) => d.attributes[k] === v));
      if (p) return p.value;
    }
  }
  return undefined;
}

function promValue(text: string, name: string, labels: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const PARTITIONS = 2;
const records = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `${prefix}${i}` }));

// KafkaJS twice: with `kafka` (paused partitions' log ends through its admin client) and as
// the README calls it, without (through the consumer group's own connection).
const cases = bindings().flatMap((binding) =>
  binding.name === "kafkajs" ? [{ binding, withoutKafka: false }, { binding, withoutKafka: true }] : [{ binding, withoutKafka: false }]
);
for (const { binding, withoutKafka } of cases) test(`lag (${binding.name}${withoutKafka ? " without kafka" : ""}): metrics() and both exporters report log end − committed, growing while paused`, { timeout: 180_000 }, async () => {
  await withBroker(async (brokers) => {
    const topic = unique("lag");
    const groupId = unique("lag-group");
    await createTopic(brokers, topic, PARTITIONS);
    await produce(brokers, topic, records("a", 60));

    let gate: Promise<void> | undefined;
    let open!: () => void;
    const hold = () => (gate = new Promise<void>((r) => (open = r)));
    const seen = new Set<string>();
    let started = 0;
    const controller = new AbortController();
    const consumer = binding.create({
      ...(withoutKafka ? { withoutKafka } : {}),
      brokers,
      groupId,
      topics: [topic],
      fromBeginning: true,
      concurrency: 8,
      commit: { intervalMs: 200 },
      signal: controller.signal,
      handler: async (message) => {
        started++;
        if (gate) await gate;
        seen.add(message.value!.toString());
      },
    });
    const registry = new Registry();
    const unregisterProm = registerPrometheus(consumer, { registry });
    const reader = new PullReader();
    const provider = new MeterProvider({ readers: [reader] });
    const unregisterOtel = registerOpenTelemetry(consumer, { meter: provider.getMeter("lag-test") });

    /** Undefined when metrics() and both exporters agree with the broker's end − committed; else what differs. */
    const mismatch = async (): Promise<string | undefined> => {
      const ends = await endOffsets(brokers, topic);
      const committed = await committedOffsets(brokers, groupId, topic);
      const m = consumer.metrics();
      const text = await registry.metrics();
      const rm = (await reader.collect()).resourceMetrics;
      let sum = 0;
      for (let partition = 0; partition < PARTITIONS; partition++) {
        const end = Number(ends.get(partition));
        const c = committed.get(partition);
        if (c === undefined) return `t/${partition}: nothing committed yet`;
        const want = end - Number(c);
        sum += want;
        const p = m.partitions.find((x) => x.partition === partition);
        const got = {
          endOffset: p?.endOffset,
          lag: p?.lag,
          prom: promValue(text, "offset_frontier_partition_lag", `topic="${topic}",partition="${partition}"`),
          otel: otelValue(rm, "offset_frontier.partition_lag", { topic, partition }),
        };
        if (got.endOffset !== end || got.lag !== want || got.prom !== want || got.otel !== want) {
          return `t/${partition}: broker end ${end} committed ${c} (lag ${want}); consumer ${JSON.stringify(got)}`;
        }
        // The log end and the records delivered but not yet safe, as both exporters report them.
        const labels = `topic="${topic}",partition="${partition}"`;
        const exported = {
          promEnd: promValue(text, "offset_frontier_partition_end_offset", labels),
          otelEnd: otelValue(rm, "offset_frontier.partition_end_offset", { topic, partition }),
          promProcessing: promValue(text, "offset_frontier_partition_processing_lag", labels),
          otelProcessing: otelValue(rm, "offset_frontier.partition_processing_lag", { topic, partition }),
        };
        if (
          exported.promEnd !== end || exported.otelEnd !== end || p?.processingLag === undefined ||
          exported.promProcessing !== p.processingLag || exported.otelProcessing !== p.processingLag
        ) {
          return `t/${partition}: broker end ${end}, processing lag ${p?.processingLag}; exported ${JSON.stringify(exported)}`;
        }
      }
      const totals = {
        metrics: m.lag,
        prom: Number(text.split("\n").find((l) => l.startsWith("offset_frontier_lag "))?.split(" ")[1]),
        otel: otelValue(rm, "offset_frontier.lag", {}),
      };
      if (totals.metrics !== sum || totals.prom !== sum || totals.otel !== sum) return `total ${sum}; consumer ${JSON.stringify(totals)}`;
      return undefined;
    };
    /** Waits until {@link mismatch} finds nothing (a fetch, or the commit interval's query, later). */
    const agree = async (what: string, timeoutMs = 20_000): Promise<void> => {
      const t0 = Date.now();
      let last: string | undefined;
      while ((last = await mismatch()) !== undefined) {
        if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: ${last}`);
        await sleep(100);
      }
    };
    const lagOf = () => consumer.metrics().partitions.map((p) => p.lag);

    try {
      hold(); // nothing finishes, so nothing is committed, until the probe's state is read
      await consumer.start();
      await waitFor(() => started > 0, 20_000, "a record to start");
      // What a readiness probe reads (docs/metrics.md#health-probes): a start that never failed is
      // `available` once joined, before any commit (an idle topic may never see one).
      assert.equal(consumer.metrics().cluster.state, "available", "the cluster state after a clean first join");
      open();
      // Caught up: every record ran and was committed, the lag is 0 everywhere.
      await agree("caught up");
      assert.equal(seen.size, 60);
      assert.deepEqual(lagOf(), [0, 0]);

      // Paused: records produced now are fetched by no one, yet the lag grows with the log end.
      consumer.pause();
      const startedAtPause = started;
      await produce(brokers, topic, records("b", 40));
      await agree("paused, 40 produced");
      assert.equal(started, startedAtPause, "no handler started while paused");
      assert.equal(consumer.metrics().lag, 40, "the lag grew by what was produced");
      await produce(brokers, topic, records("c", 20));
      await agree("paused, 20 more produced");
      assert.equal(consumer.metrics().lag, 60);

      // Resumed, with the handlers held: delivered and unfinished records are still lag; more produced now arrive by fetches.
      hold();
      consumer.resume();
      await produce(brokers, topic, records("d", 10));
      await agree("resumed, handlers held, 10 more produced");
      assert.equal(consumer.metrics().lag, 70);
      assert.ok(consumer.metrics().partitions.some((p) => (p.processingLag ?? 0) > 0), "some records delivered and unfinished");

      // Released: everything runs and is committed, the lag drains to 0.
      open();
      gate = undefined;
      await agree("drained");
      assert.equal(seen.size, 130);
      assert.equal(consumer.metrics().lag, 0);
    } finally {
      // A failed assertion too: a running consumer would keep the test process alive.
      if (gate) open();
      unregisterProm();
      unregisterOtel();
      controller.abort();
      await consumer.done.catch(() => {});
      await provider.shutdown();
    }
  });
});
