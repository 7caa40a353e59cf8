/**
 * offset-frontier/otel: a consumer's metrics through the OpenTelemetry metrics API (an
 * optional peer dependency: `npm install @opentelemetry/api`, plus an SDK such as
 * `@opentelemetry/sdk-metrics` to export them).
 *
 * The same metrics as `offset-frontier/prometheus`, with OpenTelemetry names (the
 * prefix, default `offset_frontier.`, then the Prometheus name without `_total`):
 * observable gauges per topic-partition (`partition_pending`, `partition_blocked`,
 * `partition_retained`, `partition_queued`, `partition_in_flight`,
 * `partition_oldest_pending_age` (seconds), `partition_delivered_offset`,
 * `partition_safe_offset`, `partition_confirmed_offset`, `partition_confirmed_lag`,
 * `partition_end_offset`, `partition_lag`, `partition_processing_lag`,
 * `partition_paused`, `partition_stopped`; attributes `topic`, `partition`), observable
 * gauges `running`, `retained` and `lag`, observable counters `completed`, `failures`,
 * `retries`, `dead_letters`, `skipped`, `commits`, `commit_failures`, all read from one
 * `metrics()` snapshot per collection (a batch observable callback); and from events a
 * histogram `commit_latency` (seconds) and counters `pauses` (by topic, partition,
 * reason), `errors` (by kind) and `claims` (by topic, partition, outcome `used` or
 * `ignored`).
 *
 * @example
 * ```ts
 * import { metrics } from "@opentelemetry/api";
 * import type { ParallelConsumer } from "offset-frontier";
 * import { registerOpenTelemetry } from "offset-frontier/otel";
 * declare const consumer: ParallelConsumer<unknown>;
 * const unregister = registerOpenTelemetry(consumer, { meter: metrics.getMeter("orders") });
 * unregister(); // at shutdown
 * ```
 *
 * @module
 */
import type { Attributes, BatchObservableResult, Meter, Observable } from "@opentelemetry/api";
import type { ConsumerMetrics } from "../../core/mod.ts";
import { InvalidArgumentError, describe } from "../../core/errors.ts";
import { CONSUMER_VALUES, type MetricsSource, PARTITION_GAUGES } from "./metric_catalog.ts";

export type { MetricsSource } from "./metric_catalog.ts";

/** Attribute values on every measurement (a subset of OpenTelemetry's `Attributes`). */
export type MetricAttributes = Readonly<Record<string, string | number | boolean>>;

/**
 * The part of an OpenTelemetry `Meter` this exporter uses (any `Meter` of
 * `@opentelemetry/api` 1.x is one; the parameters are loose so that its generic
 * signatures fit).
 */
export interface OpenTelemetryMeter {
  /** Creates an observable gauge. */
  createObservableGauge(name: string, options?: { description?: string; unit?: string }): object;
  /** Creates an observable counter. */
  createObservableCounter(name: string, options?: { description?: string; unit?: string }): object;
  /** Creates a histogram. */
  createHistogram(name: string, options?: { description?: string; unit?: string }): object;
  /** Creates a counter. */
  createCounter(name: string, options?: { description?: string; unit?: string }): object;
  /** Adds a callback that observes several observables at once. */
  addBatchObservableCallback(callback: never, observables: never): void;
  /** Removes it. */
  removeBatchObservableCallback(callback: never, observables: never): void;
}

/** Options of {@link registerOpenTelemetry}. */
export interface OpenTelemetryOptions {
  /** The meter that creates the instruments (e.g. `metrics.getMeter("my-service")`). */
  meter: OpenTelemetryMeter;
  /** Prepended to every instrument name. Default `offset_frontier.`. */
  prefix?: string;
  /** Constant attributes on every measurement, e.g. `{ service: "orders" }`. */
  attributes?: MetricAttributes;
}

/**
 * Publishes a consumer's metrics through an OpenTelemetry meter: observable instruments
 * read from one `metrics()` snapshot per collection, and event-fed commit latency,
 * pauses and errors.
 *
 * @param consumer the consumer (anything with `metrics()` and `on()`)
 * @param options meter, prefix, constant attributes
 * @returns a function that stops observing and removes the listeners (OpenTelemetry
 *   cannot delete instruments: they stop reporting)
 * @throws {InvalidArgumentError} for a missing meter or a bad prefix
 */
export function registerOpenTelemetry(consumer: MetricsSource, options: OpenTelemetryOptions): () => void {
  const given: unknown = options?.meter;
  if (given === null || typeof given !== "object" || typeof (given as Meter).createObservableGauge !== "function") {
    throw new InvalidArgumentError(`meter must be an OpenTelemetry Meter; got ${describe(given)}`);
  }
  const meter = given as Meter; // an @opentelemetry/api Meter (the structural type keeps its types out of the API)
  const prefix = options.prefix ?? "offset_frontier.";
  if (typeof prefix !== "string") throw new InvalidArgumentError(`prefix must be a string; got ${describe(prefix)}`);
  const constant: Attributes = { ...options.attributes };

  const partitionGauges = PARTITION_GAUGES.map((g) => ({
    g,
    instrument: meter.createObservableGauge(prefix + g.name.replace(/_seconds$/, ""), { description: g.help, unit: g.unit }),
  }));
  const consumerValues = CONSUMER_VALUES.map((c) => {
    const name = prefix + (c.counter ? c.name.replace(/_total$/, "") : c.name);
    const o = { description: c.help, unit: c.unit };
    return { c, instrument: c.counter ? meter.createObservableCounter(name, o) : meter.createObservableGauge(name, o) };
  });
  const observables: Observable[] = [
    ...partitionGauges.map((x) => x.instrument),
    ...consumerValues.map((x) => x.instrument),
  ];
  const observe = (result: BatchObservableResult): void => {
    const m: ConsumerMetrics = consumer.metrics();
    for (const p of m.partitions) {
      const attrs: Attributes = { ...constant, topic: p.topic, partition: p.partition };
      for (const { g, instrument } of partitionGauges) {
        const v = g.value(p);
        if (v !== undefined) result.observe(instrument, v, attrs);
      }
    }
    for (const { c, instrument } of consumerValues) result.observe(instrument, c.value(m), constant);
  };
  meter.addBatchObservableCallback(observe, observables);

  const latency = meter.createHistogram(prefix + "commit_latency", {
    description: "Seconds from sending a commit to its acknowledgement.",
    unit: "s",
  });
  const pauses = meter.createCounter(prefix + "pauses", {
    description: "Times fetching a partition was paused, by reason (high-water-mark, max-buffered, stopped).",
    unit: "{pause}",
  });
  const errors = meter.createCounter(prefix + "errors", {
    description: "Errors the consumer reported, by kind (commit, partition-stopped, dead-letter, client, listener, committed-read).",
    unit: "{error}",
  });
  const claims = meter.createCounter(prefix + "claims", {
    description: "Committed metadata read back at assignment, by outcome: used (its finished records are skipped) or ignored (they run again).",
    unit: "{claim}",
  });
  const off = [
    consumer.on("commit", (e) => latency.record(e.latencyMs / 1000, constant)),
    consumer.on("pause", (e) => pauses.add(1, { ...constant, topic: e.topic, partition: e.partition, reason: e.reason })),
    consumer.on("error", (e) => errors.add(1, { ...constant, kind: e.kind })),
    consumer.on("claim", (e) =>
      claims.add(1, { ...constant, topic: e.topic, partition: e.partition, outcome: e.ignored === undefined ? "used" : "ignored" })),
  ];
  let registered = true;
  return () => {
    if (!registered) return;
    registered = false;
    meter.removeBatchObservableCallback(observe, observables);
    for (const f of off) f();
  };
}
