/**
 * What {@link ParallelConsumer.metrics} reports: a snapshot per partition (from its lane
 * and tracker) and the consumer's totals (records, commits, transactions, cluster).
 *
 * @module
 */
import type { ClusterWatch } from "./port/mod.ts";
import type { Dispatcher } from "./dispatch/mod.ts";
import type { RateGate } from "./records/mod.ts";
import type { StuckWatch } from "./records/mod.ts";
import type { ExactlyOnce } from "./commits/mod.ts";
import type { ConsumerMetrics, PartitionMetrics } from "./port/mod.ts";
import type { RecordRunner } from "./records/mod.ts";
import type { Frontier } from "../tracker/frontier.ts";
import { lagOf, type LogEnds } from "./dispatch/mod.ts";

/** Counters of acknowledged and failed commits. */
export class CommitTally {
  /** Commits acknowledged. */
  commits = 0;
  /** Commits that failed. */
  failures = 0;
  /** Latency of the last acknowledged commit (ms). */
  lastMs: number | undefined;
  /** Highest latency of an acknowledged commit (ms). */
  maxMs: number | undefined;

  /** Counts an acknowledged commit that took `latencyMs`. */
  acknowledged(latencyMs: number): void {
    this.commits++;
    this.lastMs = latencyMs;
    if (this.maxMs === undefined || latencyMs > this.maxMs) this.maxMs = latencyMs;
  }
}

/** What {@link snapshot} reads. */
export interface SnapshotInputs<M> {
  /** The stuck-record watch, if any. */
  readonly stuck: StuckWatch<M> | undefined;
  /** The rate limit, if any. */
  readonly gate: RateGate | undefined;
  /** Whether the whole consumer is paused by the user. */
  readonly pausedByUser: boolean;
  /** Lanes, running records, the stall hold. */
  readonly dispatcher: Dispatcher<M>;
  /** Confirmed positions. */
  readonly frontier: Frontier;
  /** Record counters. */
  readonly records: RecordRunner<M>;
  /** Commit counters. */
  readonly commits: CommitTally;
  /** Exactly-once counters, in that mode. */
  readonly tx: ExactlyOnce<M> | undefined;
  /** Cluster availability. */
  readonly watch: ClusterWatch;
  /** The partitions' log end offsets as last seen. */
  readonly ends: LogEnds<M>;
}

/** A snapshot per partition of the current assignment and totals. */
export function snapshot<M>(inputs: SnapshotInputs<M>): ConsumerMetrics {
  const { dispatcher, frontier, records: r, commits: c, tx } = inputs;
  const partitions: PartitionMetrics[] = [];
  const now = Date.now();
  let lag = 0;
  for (const lane of dispatcher.lanes()) {
    const t = lane.tracker;
    if (t.revoked) continue;
    const s = t.stats();
    const confirmed = frontier.positions(lane.topic, lane.partition)?.confirmed;
    const endOffset = inputs.ends.of(lane);
    const behind = lagOf(endOffset, confirmed, inputs.ends.readAt(lane) ?? t.origin);
    if (behind !== undefined) lag += behind;
    partitions.push({
      topic: lane.topic,
      partition: lane.partition,
      state: lane.state,
      paused: lane.paused,
      pausedByUser: lane.userPaused,
      pausedMs: lane.pausedMs + (lane.paused ? now - lane.pausedAt : 0),
      pending: s.pending,
      blocked: s.blocked,
      retained: s.retained,
      queued: lane.queued,
      inFlight: lane.inFlight,
      oldestPendingOffset: s.oldestPendingOffset,
      oldestPendingAgeMs: s.oldestPendingAgeMs,
      delivered: s.delivered,
      safe: s.safe,
      confirmed,
      endOffset,
      lag: behind,
      processingLag: s.delivered === undefined || s.safe === undefined ? undefined : s.delivered - s.safe,
      lastCommitLatencyMs: lane.lastCommitLatencyMs,
    });
  }
  return {
    partitions,
    running: dispatcher.running,
    retained: partitions.reduce((n, p) => n + p.retained, 0),
    lag,
    completed: r.completed,
    skipped: r.skipped,
    pausedByUser: inputs.pausedByUser,
    stalled: dispatcher.held,
    failures: r.failures,
    retries: r.retries,
    deadLettered: r.deadLettered,
    stuck: inputs.stuck?.count ?? 0,
    commits: c.commits,
    commitFailures: c.failures,
    lastCommitLatencyMs: c.lastMs,
    maxCommitLatencyMs: c.maxMs,
    ...(tx ? { transactions: { ...tx.m, ready: tx.stage.size, waiting: tx.waiting } } : {}),
    cluster: inputs.watch.metrics(),
    ...(inputs.gate ? { rateLimit: { ...inputs.gate.limit, tokens: inputs.gate.tokens, waits: inputs.gate.waits } } : {}),
  };
}
