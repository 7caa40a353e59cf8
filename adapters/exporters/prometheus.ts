/**
 * offset-frontier/prometheus: a consumer's metrics in a prom-client registry (an optional
 * peer dependency: `npm install prom-client`).
 *
 * At every scrape the gauges and counters are read from one `metrics()` snapshot (nothing
 * runs between scrapes): per topic-partition `pending`, `blocked`, `retained`, `queued`,
 * `in_flight`, `oldest_pending_age_seconds`, the `delivered`, `safe` and `confirmed`
 * offsets, `confirmed_lag` (safe − confirmed), `end_offset` (the log end as the client
 * last saw it), `lag` (log end − committed), `processing_lag` (delivered − safe), `paused`
 * and `stopped`; per consumer `running`, `retained`, `lag` (the sum) and the totals `completed`, `failures`, `retries`,
 * `dead_letters`, `skipped`, `commits`, `commit_failures`. Four more come from events:
 * `commit_latency_seconds` (histogram of acknowledged commits), `pauses_total` (by
 * topic, partition and reason), `errors_total` (by kind) and `claims_total` (committed
 * metadata read back at assignment, by topic, partition and outcome `used` or
 * `ignored`). Every name starts with the
 * prefix (default `offset_frontier_`); partition metrics carry `topic` and `partition`
 * labels, every metric carries the constant `labels` given.
 *
 * @example
 * ```ts
 * import { Registry } from "prom-client";
 * import type { ParallelConsumer } from "offset-frontier";
 * import { registerPrometheus } from "offset-frontier/prometheus";
 * declare const consumer: ParallelConsumer<unknown>;
 * const registry = new Registry();
 * const unregister = registerPrometheus(consumer, { registry, labels: { service: "orders" } });
 * const text = await registry.metrics(); // serve it at /metrics
 * unregister(); // at shutdown
 * ```
 *
 * @module
 */
import { Counter, Gauge, Histogram, register as globalRegistry, type Registry } from "prom-client";
import type { ConsumerMetrics } from "../../core/mod.ts";
import { CONSUMER_VALUES, type MetricsSource, PARTITION_GAUGES } from "./metric_catalog.ts";
import { InvalidArgumentError, describe } from "../../core/errors.ts";

export type { MetricsSource } from "./metric_catalog.ts";

/**
 * The part of a prom-client `Registry` this exporter uses (any prom-client `Registry`
 * is one): prom-client registers the metrics into it, the exporter removes them.
 */
export interface PrometheusRegistry {
  /** Called by prom-client for each metric created with `registers: [registry]`. */
  registerMetric(metric: never): void;
  /** Removes the metric of that name. */
  removeSingleMetric(name: string): void;
}

/** Options of {@link registerPrometheus}. */
export interface PrometheusOptions {
  /** The registry to register in (a prom-client `Registry`). Default: prom-client's global `register`. */
  registry?: PrometheusRegistry;
  /** Prepended to every metric name. Default `offset_frontier_`. */
  prefix?: string;
  /** Constant labels on every metric, e.g. `{ service: "orders" }` to tell consumers apart. */
  labels?: Readonly<Record<string, string>>;
  /** Buckets of `commit_latency_seconds`. Default 1 ms … 10 s. */
  commitLatencyBuckets?: readonly number[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const RESERVED = new Set(["topic", "partition", "reason", "kind", "outcome", "le"]);
const DEFAULT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Publishes a consumer's metrics in a prom-client registry: gauges and counters read from
 * its `metrics()` snapshot at scrape time, and event-fed commit latency, pauses, errors
 * and claims. Two consumers in one registry need different `prefix`es (or registries).
 *
 * @param consumer the consumer (anything with `metrics()` and `on()`)
 * @param options registry, prefix, constant labels, latency buckets
 * @returns a function that removes the metrics from the registry and the listeners from the consumer
 * @throws {InvalidArgumentError} for a bad prefix or label name
 * @throws Error from prom-client when a metric of the same name is already registered
 */
export function registerPrometheus(consumer: MetricsSource, options: PrometheusOptions = {}): () => void {
  const registry: PrometheusRegistry = options.registry ?? globalRegistry;
  const prefix = options.prefix ?? "offset_frontier_";
  if (typeof prefix !== "string" || (prefix !== "" && !NAME.test(prefix))) {
    throw new InvalidArgumentError(`prefix must be a Prometheus metric name prefix; got ${describe(prefix)}`);
  }
  const constant: Record<string, string> = { ...options.labels };
  for (const [k, v] of Object.entries(constant)) {
    if (!LABEL.test(k) || RESERVED.has(k) || k.startsWith("__")) {
      throw new InvalidArgumentError(
        `label names must be Prometheus label names other than topic, partition, reason, kind, outcome and le; got ${describe(k)}`,
      );
    }
    if (typeof v !== "string") throw new InvalidArgumentError(`label ${k} must be a string; got ${describe(v)}`);
  }
  const constantNames = Object.keys(constant);
  const registers = [registry as Registry]; // a prom-client Registry (the structural type keeps prom-client's types out of the API)
  const names: string[] = [];

  // One snapshot per scrape: the first collect() of a scrape takes it, a microtask drops it
  // (prom-client calls every metric's collect() in the same synchronous run).
  let snapshot: ConsumerMetrics | undefined;
  const snap = (): ConsumerMetrics => {
    if (snapshot === undefined) {
      snapshot = consumer.metrics();
      queueMicrotask(() => (snapshot = undefined));
    }
    return snapshot;
  };

  try {
    for (const g of PARTITION_GAUGES) {
      const name = prefix + g.name;
      new Gauge({
        name,
        help: g.help,
        labelNames: [...constantNames, "topic", "partition"],
        registers,
        collect(this: Gauge) {
          this.reset();
          for (const p of snap().partitions) {
            const v = g.value(p);
            if (v !== undefined) this.set({ ...constant, topic: p.topic, partition: String(p.partition) }, v);
          }
        },
      });
      names.push(name);
    }
    for (const c of CONSUMER_VALUES) {
      const name = prefix + c.name;
      if (c.counter) {
        new Counter({
          name,
          help: c.help,
          labelNames: constantNames,
          registers,
          collect(this: Counter) {
            this.reset();
            this.inc(constant, c.value(snap()));
          },
        });
      } else {
        new Gauge({
          name,
          help: c.help,
          labelNames: constantNames,
          registers,
          collect(this: Gauge) {
            this.set(constant, c.value(snap()));
          },
        });
      }
      names.push(name);
    }
    const latency = new Histogram({
      name: prefix + "commit_latency_seconds",
      help: "Seconds from sending a commit to its acknowledgement.",
      labelNames: constantNames,
      buckets: [...(options.commitLatencyBuckets ?? DEFAULT_BUCKETS)],
      registers,
    });
    names.push(prefix + "commit_latency_seconds");
    const pauses = new Counter({
      name: prefix + "pauses_total",
      help: "Times fetching a partition was paused, by reason (high-water-mark, max-buffered, stopped).",
      labelNames: [...constantNames, "topic", "partition", "reason"],
      registers,
    });
    names.push(prefix + "pauses_total");
    const errors = new Counter({
      name: prefix + "errors_total",
      help: "Errors the consumer reported, by kind (commit, partition-stopped, dead-letter, client, listener, committed-read).",
      labelNames: [...constantNames, "kind"],
      registers,
    });
    names.push(prefix + "errors_total");
    const claims = new Counter({
      name: prefix + "claims_total",
      help: "Committed metadata read back at assignment, by outcome: used (its finished records are skipped) or ignored (they run again).",
      labelNames: [...constantNames, "topic", "partition", "outcome"],
      registers,
    });
    names.push(prefix + "claims_total");
    const off = [
      consumer.on("commit", (e) => latency.observe(constant, e.latencyMs / 1000)),
      consumer.on("pause", (e) => pauses.inc({ ...constant, topic: e.topic, partition: String(e.partition), reason: e.reason })),
      consumer.on("error", (e) => errors.inc({ ...constant, kind: e.kind })),
      consumer.on("claim", (e) =>
        claims.inc({ ...constant, topic: e.topic, partition: String(e.partition), outcome: e.ignored === undefined ? "used" : "ignored" })),
    ];
    return () => {
      for (const f of off.splice(0)) f();
      for (const name of names.splice(0)) registry.removeSingleMetric(name);
    };
  } catch (error) {
    for (const name of names) registry.removeSingleMetric(name); // nothing half-registered
    throw error;
  }
}
