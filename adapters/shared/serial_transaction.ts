/**
 * How the bindings' exactly-once ports run one partition's transaction on its transactional
 * producer, whatever the client: one transaction at a time per producer (a revoke's urgent
 * commit may overlap the periodic one), bounded by the transaction's timeout, a producer
 * whose transaction failed or timed out never used again, and the broker's own verdict
 * ("fenced") read even when it arrives just after the bound. The client's steps (begin,
 * send, offsets, commit, abort on failure) are the binding's.
 *
 * @module
 */
import type { TopicPartition } from "../../core/consumer/port/mod.ts";
import type { TransactionOutcome } from "../../core/consumer/port/mod.ts";
import { timeout, TransactionTimeoutError, VERDICT_GRACE_MS } from "./transaction_bounds.ts";
import { tpKey } from "./topic_partitions.ts";

/** A transactional producer's turn-taking state. */
export interface SerialProducer {
  /** Transactions in flight or waiting for the one before them. */
  busy: number;
  /** Settles when the last transaction handed to it settled: one transaction at a time per producer. */
  tail: Promise<void>;
  /** Its last transaction failed or timed out (outcome unknown): never used again. */
  broken: boolean;
  /** The broker's answer that fenced it, once one did: a transaction queued behind is refused for the same reason. */
  fenced: unknown;
  /** Settles when its last transaction ended (past its timeout: at most VERDICT_GRACE_MS later): a producer is replaced or closed only then. */
  quiet: Promise<void>;
}

/**
 * A binding's steps of one transaction. On a failure they call `failed(error)` first (the
 * producer is never used again; a fencing is remembered and reported as the verdict), then
 * abort as their client can, and rethrow.
 */
export type TransactionSteps = (failed: (error: unknown) => void) => Promise<void>;

/**
 * Runs `steps` as the transaction of `t` on `pp`, after the transaction before it, within
 * `timeoutMs`; `undefined` or a broken producer (or `closed`) refuses at once.
 * @param isFenced whether an error is the broker's fencing of this producer
 */
export async function runSerialTransaction(
  pp: SerialProducer | undefined,
  closed: boolean,
  t: TopicPartition,
  timeoutMs: number,
  isFenced: (error: unknown) => boolean,
  steps: TransactionSteps,
): Promise<TransactionOutcome> {
  if (pp?.fenced !== undefined) return { ok: false, fenced: true, error: pp.fenced };
  if (!pp || pp.broken || closed) {
    return { ok: false, fenced: false, error: new Error(`no usable transactional producer for ${t.topic}/${t.partition}`) };
  }
  pp.busy++;
  const before = pp.tail;
  // The broker's verdict, as soon as a step failed (before the abort, which may take as long again).
  let refused!: (error: unknown) => void;
  const verdict = new Promise<unknown>((r) => (refused = r));
  const failed = (error: unknown): void => {
    // First: no transaction begins on this producer again.
    pp.broken = true;
    if (isFenced(error)) pp.fenced ??= error;
    refused(error);
  };
  const run = (async () => {
    await before;
    if (pp.fenced !== undefined) throw pp.fenced; // queued behind the transaction the broker fenced
    if (pp.broken) throw new Error(`the previous transaction of ${t.topic}/${t.partition} failed`);
    await steps(failed);
  })();
  pp.tail = run.catch(() => {});
  const bounded = timeout(run, timeoutMs, `the transaction of ${t.topic}/${t.partition}`);
  // Past its timeout the run may still be under way (a process stopped past the bound sends
  // its EndTxn at the wake-up): the producer is closed or replaced only once the run settled,
  // or VERDICT_GRACE_MS later. Closed under it, the step fails in the client, not with the
  // broker's answer, and a fenced zombie would report its transaction aborted.
  pp.quiet = bounded.then(() => {}, () => settledWithin(run, VERDICT_GRACE_MS));
  try {
    await bounded;
    return { ok: true };
  } catch (error) {
    pp.broken = true; // its outcome may be unknown: the reset's new producer settles it
    if (!(error instanceof TransactionTimeoutError)) return { ok: false, fenced: isFenced(error), error };
    // Timed out: the broker's answer may be just behind (a process stopped past the bound
    // reads it right after the timer fired). A fencing it reports names the outcome.
    let grace: ReturnType<typeof setTimeout> | undefined;
    const said = await Promise.race([
      verdict,
      new Promise<undefined>((r) => (grace = setTimeout(() => r(undefined), Math.min(VERDICT_GRACE_MS, timeoutMs)))),
    ]).finally(() => clearTimeout(grace));
    return isFenced(said) ? { ok: false, fenced: true, error: said } : { ok: false, fenced: false, error };
  } finally {
    // A timed-out run may still be going: the producer counts as busy until it settles.
    void run.catch(() => {}).finally(() => pp.busy--);
  }
}

/** Settles when `p` settled (either way) or `ms` passed. */
function settledWithin(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p.then(() => {}, () => {}),
    new Promise<void>((r) => (timer = setTimeout(r, ms))),
  ]).finally(() => clearTimeout(timer));
}

/**
 * Takes the producers of `partitions` out of `producers` and closes them with `disconnect`,
 * each once its transaction in flight (a revoke's last one, racing the rejoin) settled: it
 * may still end before the next owner's InitProducerId, and closing under it would only abort it.
 */
export async function releaseProducers<P extends SerialProducer>(
  producers: Map<string, P>,
  partitions: readonly TopicPartition[],
  disconnect: (pp: P) => Promise<void>,
): Promise<void> {
  const gone: P[] = [];
  for (const p of partitions) {
    const key = tpKey(p.topic, p.partition);
    const pp = producers.get(key);
    if (!pp) continue;
    producers.delete(key);
    gone.push(pp);
  }
  await Promise.all(gone.map(async (pp) => {
    if (pp.busy) await pp.quiet;
    await disconnect(pp);
  }));
}
