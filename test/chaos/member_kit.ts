/**
 * The workload every chaos member runs, whatever its client (member.ts over KafkaJS,
 * member_port.ts's members over a client-port binding): one record's attempt (sleep,
 * transient failures, the poison, the exactly-once output, the fsynced `F` line), and the
 * record or batch handler around it.
 *
 * @module
 */
import type { Buffer } from "node:buffer";
import process from "node:process";
import { setInterval } from "node:timers";
import type { BatchContext, RecordContext } from "../../core/mod.ts";
import type { FsyncLog } from "./fsync_log.ts";
import type { MemberConfig } from "./member.ts";
import { BATCH_RECORDS, BATCH_WAIT_MS, failsAttempt, POISON_KEY, sleepMs } from "./workload.ts";

/** What the workload reads of a record (every binding's messages have it). */
export interface WorkloadMessage {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
}

/** One record's attempt in assignment `id`: an Error when it fails, else nothing once its line is in the log. */
export type RecordAttempt<M> = (message: M, context: RecordContext, id: string) => Promise<Error | undefined>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** An error on one line, at most 300 characters. */
export const oneLine = (e: unknown): string => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)).replace(/\s+/g, " ").slice(0, 300);

/** Exits this process (code 0) once the process `parent` (the harness) is gone; checked every second. The timer does not hold the process. */
export function exitWithParent(parent: number): ReturnType<typeof setInterval> {
  const check = setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      process.exit(0);
    }
  }, 1_000);
  check.unref();
  return check;
}

/**
 * The record attempt of member `who` (`<member>\t<pid>`), logging to `log`: it sleeps 0–3 ms,
 * fails on the poison and on the seed's transient failures, sends its output in exactly-once
 * mode, and appends its `F` line, fsynced, before it returns.
 */
export function recordAttempt<M extends WorkloadMessage>(cfg: MemberConfig, log: FsyncLog, who: string): RecordAttempt<M> {
  const eos = cfg.mode === "exactly-once";
  return async (message, { topic, partition, offset, attempt, send }, id) => {
    const key = message.key?.toString() ?? "";
    await sleep(sleepMs(cfg.seed, partition, offset));
    if (key === POISON_KEY) return new Error(`poison record ${topic}-${partition}@${offset}`);
    if (failsAttempt(cfg.seed, partition, offset, attempt)) {
      return new Error(`transient failure of ${topic}-${partition}@${offset}, attempt ${attempt}`);
    }
    const seq = message.value?.toString() ?? "";
    // Exactly-once: one output per input, committed only with this record's completion.
    // Keyed, no partition: hashed over `.out`'s 4 partitions, so every output partition
    // interleaves the transactions of several inputs' producers (aborted ones included).
    if (eos) send!({ topic: `${topic}.out`, key: message.key, value: seq, headers: { from: `${partition}:${offset}`, by: id } });
    await log.append(`F\t${Date.now()}\t${who}\t${topic}-${partition}\t${offset}\t${key}\t${seq}\t${id}\n`);
    return undefined;
  };
}

/**
 * The runner's handler option for `cfg.handler`: the record handler (a failed attempt
 * throws), or the batch handler (`B` logged per batch) whose per-record results are Errors
 * at the failed records' indexes, so that only they run again. Each attempt runs under the
 * assignment id current when it (or its batch) started.
 */
export function workloadHandler<M extends WorkloadMessage>(
  cfg: MemberConfig,
  one: RecordAttempt<M>,
  assignment: () => string,
  event: (kind: string, ...fields: Array<string | number | boolean>) => void,
): { batch: { maxRecords: number; maxWaitMs: number; handler: (messages: M[], context: BatchContext) => Promise<Array<Error | undefined>> } } | {
  handler: (message: M, context: RecordContext) => Promise<void>;
} {
  if (cfg.handler === "batch") {
    return {
      batch: {
        maxRecords: BATCH_RECORDS,
        maxWaitMs: BATCH_WAIT_MS,
        handler: (messages, { records }) => {
          const id = assignment(); // the assignment this batch runs in
          event("B", messages.length);
          return Promise.all(messages.map((m, i) => one(m, records[i], id)));
        },
      },
    };
  }
  return {
    handler: async (message, context) => {
      const failed = await one(message, context, assignment()); // the assignment this attempt runs in
      if (failed) throw failed;
    },
  };
}
