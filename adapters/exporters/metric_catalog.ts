/**
 * The metrics both exporters publish (`offset-frontier/prometheus` and
 * `offset-frontier/otel`), read from a consumer's {@link ConsumerMetrics} snapshot, so
 * the two never disagree on a name, a unit or a value. Internal: not an entry point.
 *
 * @module
 */
import type { ConsumerEvents, ConsumerMetrics, Listener, PartitionMetrics } from "../../core/mod.ts";

/**
 * What an exporter reads: a consumer's snapshot and its events. A
 * `ParallelConsumer` is one.
 */
export interface MetricsSource {
  /** A snapshot per partition and totals. */
  metrics(): ConsumerMetrics;
  /** Adds an event listener; returns a function that removes it. */
  on<K extends keyof ConsumerEvents>(event: K, listener: Listener<ConsumerEvents[K]>): () => void;
}

/** A gauge per topic-partition of the current assignment. */
export interface PartitionGauge {
  /** Name without prefix, Prometheus style (`partition_pending`). */
  readonly name: string;
  /** Help text. */
  readonly help: string;
  /** UCUM unit for OpenTelemetry (`{record}`, `s`, `{offset}`, `1`). */
  readonly unit: string;
  /** The value, or `undefined` when it is not known (then no sample is written). */
  readonly value: (p: PartitionMetrics) => number | undefined;
}

/** A consumer-wide value: a gauge, or a counter when `counter` is set (totals since start). */
export interface ConsumerValue {
  /** Name without prefix; counters end in `_total`. */
  readonly name: string;
  /** Help text. */
  readonly help: string;
  /** UCUM unit for OpenTelemetry. */
  readonly unit: string;
  /** Whether it only grows (a counter). */
  readonly counter: boolean;
  /** The value. */
  readonly value: (m: ConsumerMetrics) => number;
}

/** Every per-partition gauge. */
export const PARTITION_GAUGES: readonly PartitionGauge[] = [
  {
    name: "partition_pending",
    help: "Records registered and not complete (queued, running or waiting to retry).",
    unit: "{record}",
    value: (p) => p.pending,
  },
  {
    name: "partition_blocked",
    help: "Completed records held behind an unfinished earlier one.",
    unit: "{record}",
    value: (p) => p.blocked,
  },
  {
    name: "partition_retained",
    help: "Entries the partition's tracker retains (pending + blocked).",
    unit: "{record}",
    value: (p) => p.retained,
  },
  {
    name: "partition_queued",
    help: "Records waiting for a worker.",
    unit: "{record}",
    value: (p) => p.queued,
  },
  {
    name: "partition_in_flight",
    help: "Records handed to the handler (or dead-letter producer) and not settled, plus those waiting to retry.",
    unit: "{record}",
    value: (p) => p.inFlight,
  },
  {
    name: "partition_oldest_pending_age_seconds",
    help: "Seconds since the batch of the oldest unfinished record was delivered (absent when none is pending).",
    unit: "s",
    value: (p) => (p.oldestPendingAgeMs === undefined ? undefined : p.oldestPendingAgeMs / 1000),
  },
  {
    name: "partition_delivered_offset",
    help: "Where delivery has reached (the last batch's next position).",
    unit: "{offset}",
    value: (p) => p.delivered,
  },
  {
    name: "partition_safe_offset",
    help: "The resume position justified by completed work (what a commit would carry).",
    unit: "{offset}",
    value: (p) => p.safe,
  },
  {
    name: "partition_confirmed_offset",
    help: "The last offset the broker acknowledged for this assignment.",
    unit: "{offset}",
    value: (p) => p.confirmed,
  },
  {
    name: "partition_confirmed_lag",
    help: "safe - confirmed: completed work not yet acknowledged by the broker (absent before the first commit).",
    unit: "{offset}",
    value: (p) => (p.safe === undefined || p.confirmed === undefined ? undefined : p.safe - p.confirmed),
  },
  {
    name: "partition_end_offset",
    help: "The partition's log end offset (high watermark) as the client last saw it (absent until seen).",
    unit: "{offset}",
    value: (p) => p.endOffset,
  },
  {
    name: "partition_lag",
    help: "Records behind the log end: end offset - committed offset (before the first commit: - where this assignment began reading).",
    unit: "{record}",
    value: (p) => p.lag,
  },
  {
    name: "partition_processing_lag",
    help: "delivered - safe: offsets fetched and not yet finished in order (part of partition_lag).",
    unit: "{offset}",
    value: (p) => p.processingLag,
  },
  {
    name: "partition_paused",
    help: "1 while fetching the partition is paused (backpressure or stopped), else 0.",
    unit: "1",
    value: (p) => (p.paused ? 1 : 0),
  },
  {
    name: "partition_paused_by_user",
    help: "1 while the partition is paused by consumer.pause() (no record starts, fetching paused), else 0.",
    unit: "1",
    value: (p) => (p.pausedByUser ? 1 : 0),
  },
  {
    name: "partition_stopped",
    help: "1 once a record failed for good and the partition stopped, else 0.",
    unit: "1",
    value: (p) => (p.state === "stopped" ? 1 : 0),
  },
];

/** Every consumer-wide value. */
export const CONSUMER_VALUES: readonly ConsumerValue[] = [
  { name: "running", help: "Handler calls running now.", unit: "{call}", counter: false, value: (m) => m.running },
  {
    name: "retained",
    help: "Entries retained over all partitions.",
    unit: "{record}",
    counter: false,
    value: (m) => m.retained,
  },
  {
    name: "lag",
    help: "Sum of partition_lag over this member's partitions whose lag is known.",
    unit: "{record}",
    counter: false,
    value: (m) => m.lag ?? 0, // (a source without the field counts 0)
  },
  {
    name: "completed_total",
    help: "Records completed (handler succeeded or dead letter acknowledged).",
    unit: "{record}",
    counter: true,
    value: (m) => m.completed,
  },
  {
    name: "failures_total",
    help: "Failed handler attempts.",
    unit: "{attempt}",
    counter: true,
    value: (m) => m.failures,
  },
  { name: "retries_total", help: "Retries scheduled.", unit: "{retry}", counter: true, value: (m) => m.retries },
  {
    name: "dead_letters_total",
    help: "Records dead-lettered.",
    unit: "{record}",
    counter: true,
    value: (m) => m.deadLettered,
  },
  {
    name: "stuck_total",
    help: "Records found unfinished past stuck.maxPendingMs after their first attempt started (0 without the stuck option).",
    unit: "{record}",
    counter: true,
    value: (m) => m.stuck ?? 0, // (a source without the field counts 0)
  },
  {
    name: "paused_by_user",
    help: "1 while the whole consumer is paused by consumer.pause(), else 0.",
    unit: "1",
    counter: false,
    value: (m) => (m.pausedByUser ? 1 : 0),
  },
  {
    name: "skipped_total",
    help: "Records delivered again that an earlier owner's commit claimed finished: completed without running the handler.",
    unit: "{record}",
    counter: true,
    value: (m) => m.skipped ?? 0, // (a source without the field counts 0)
  },
  { name: "commits_total", help: "Commits acknowledged.", unit: "{commit}", counter: true, value: (m) => m.commits },
  {
    name: "commit_failures_total",
    help: "Commits failed or uncertain.",
    unit: "{commit}",
    counter: true,
    value: (m) => m.commitFailures,
  },
  {
    name: "cluster_waiting",
    help: "1 while the consumer waits for an unreachable cluster (an attempt failed and none answered since), else 0.",
    unit: "1",
    counter: false,
    value: (m) => (m.cluster?.state === "waiting" ? 1 : 0), // (a source without the field counts 0)
  },
  {
    name: "cluster_outages_total",
    help: "Outages since start: periods in which attempts to reach the cluster failed.",
    unit: "{outage}",
    counter: true,
    value: (m) => m.cluster?.outages ?? 0,
  },
];
