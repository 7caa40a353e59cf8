/**
 * The chaos suite's workload, shared by the harness (what it produces, what faults it
 * schedules) and the members (how long a record takes, which attempts fail): all of it a
 * function of the round's seed, so a round can be replayed.
 *
 * @module
 */

/** The key of the poison record: its handler always throws, so it ends in `<topic>.DLT`. */
export const POISON_KEY = "poison";

/** A seeded PRNG (mulberry32): a function returning floats in [0, 1). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit hash of integers (for per-record decisions that do not depend on timing). */
export function hash(...xs: number[]): number {
  let h = 0x811c9dc5;
  for (const x of xs) {
    h = Math.imul(h ^ (x >>> 0), 0x01000193);
    h = Math.imul(h ^ Math.floor(x / 4294967296), 0x01000193);
    h ^= h >>> 13;
  }
  return (Math.imul(h, 0x5bd1e995) ^ (h >>> 15)) >>> 0;
}

/** How long the record at `partition`/`offset` sleeps in its handler: 0–3 ms. */
export function sleepMs(seed: number, partition: number, offset: number): number {
  return hash(seed, 1, partition, offset) % 4;
}

/** Most records in one batch of the members' batch handler (`--handler batch`; concurrency is 32). */
export const BATCH_RECORDS = 16;
/** How long the first record of a members' batch waits for more (`--handler batch`), ms. */
export const BATCH_WAIT_MS = 20;

/** Share of records whose first attempt throws. */
export const FIRST_ATTEMPT_FAILURE = 0.03;
/** Share of those whose second attempt throws too. */
export const SECOND_ATTEMPT_FAILURE = 0.25;

/** Whether attempt `attempt` (1 = first call) of a normal record throws a transient error. */
export function failsAttempt(seed: number, partition: number, offset: number, attempt: number): boolean {
  const u = hash(seed, 2, partition, offset) / 4294967296;
  if (attempt === 1) return u < FIRST_ATTEMPT_FAILURE;
  if (attempt === 2) return u < FIRST_ATTEMPT_FAILURE * SECOND_ATTEMPT_FAILURE;
  return false;
}
