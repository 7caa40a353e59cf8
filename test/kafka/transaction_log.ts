/**
 * Writes transaction logs to a real broker (not a test file): several transactional
 * producers whose transactions interleave in the same partitions, committed or aborted
 * step by step, each send acknowledged before the next step, so a partition's records are
 * in the order of the steps. Which records a `read_committed` reader must see follows from
 * that alone; the markers' own places (written by the coordinator after `commit()` or
 * `abort()` resolve) do not change it.
 */
import type { Producer, Transaction } from "kafkajs";
import { kafka, sleep } from "./helpers.ts";

const MARKER_MS = 100;

/** One step: producer `p` sends `value` to `partition` in its open transaction (opening one), ends it, or a plain producer sends. */
export type Step =
  | { p: number; send: string; partition: number }
  | { p: number; end: "commit" | "abort" }
  | { plain: string; partition: number };

/** Writes `steps` to `topic`; returns the values a `read_committed` reader must see, by partition, in offset order. */
export async function writeTransactionLog(brokers: string, topic: string, steps: readonly Step[]): Promise<Map<number, string[]>> {
  const k = kafka(brokers);
  const producers = new Map<number, Producer>();
  const open = new Map<number, { tx: Transaction; committed: boolean }>();
  const plain = k.producer({ idempotent: true, maxInFlightRequests: 1 });
  await plain.connect();
  const written: { partition: number; value: string; kept: () => boolean }[] = []; // in offset order per partition
  try {
    for (const s of steps) {
      if ("plain" in s) {
        await plain.send({ topic, acks: -1, messages: [{ partition: s.partition, value: s.plain }] });
        written.push({ partition: s.partition, value: s.plain, kept: () => true });
      } else if ("send" in s) {
        let producer = producers.get(s.p);
        if (!producer) {
          producer = k.producer({ transactionalId: `${topic}-tx-${s.p}`, idempotent: true, maxInFlightRequests: 1 });
          await producer.connect();
          producers.set(s.p, producer);
        }
        let t = open.get(s.p);
        if (!t) open.set(s.p, (t = { tx: await producer.transaction(), committed: false }));
        await t.tx.send({ topic, acks: -1, messages: [{ partition: s.partition, value: s.send }] });
        const txn = t;
        written.push({ partition: s.partition, value: s.send, kept: () => txn.committed });
      } else {
        const t = open.get(s.p);
        if (!t) continue;
        open.delete(s.p);
        if (s.end === "commit") await t.tx.commit();
        else await t.tx.abort();
        t.committed = s.end === "commit";
        // The coordinator writes the markers after commit()/abort() resolve; give it a moment so
        // the next step's records land after them (a single local broker takes a few ms).
        await sleep(MARKER_MS);
      }
    }
    for (const [p, t] of open) {
      open.delete(p);
      await t.tx.abort();
    }
  } finally {
    await Promise.allSettled([plain.disconnect(), ...[...producers.values()].map((p) => p.disconnect())]);
  }
  const committed = new Map<number, string[]>();
  for (const w of written) if (w.kept()) committed.set(w.partition, [...(committed.get(w.partition) ?? []), w.value]);
  return committed;
}

/** A random interleaving of `producers` transactional producers over `partitions` partitions (deterministic in `seed`). */
export function randomSteps(seed: number, producers: number, partitions: number, count: number): Step[] {
  let s = seed >>> 0 || 1;
  const rnd = (n: number): number => {
    s ^= s << 13, s >>>= 0, s ^= s >>> 17, s ^= s << 5, s >>>= 0;
    return s % n;
  };
  const steps: Step[] = [];
  for (let i = 0; i < count; i++) {
    const r = rnd(10);
    if (r < 6) steps.push({ p: rnd(producers), send: `tx-${i}`, partition: rnd(partitions) });
    else if (r < 8) steps.push({ p: rnd(producers), end: "abort" });
    else if (r < 9) steps.push({ p: rnd(producers), end: "commit" });
    else steps.push({ plain: `plain-${i}`, partition: rnd(partitions) });
  }
  for (let p = 0; p < producers; p++) steps.push({ p, end: rnd(2) ? "commit" : "abort" });
  return steps;
}
