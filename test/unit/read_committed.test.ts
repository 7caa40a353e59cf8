/**
 * Kafka's `read_committed` rule (adapters/shared/read_committed.ts) against an independent model:
 * logs of interleaved transactions from several producers, each record's fate known when
 * it is written, read through every fetch window with the aborted list the broker would
 * send (in the order the transactions ended, and shuffled). Also: KafkaJS's own filter
 * leaks the six-record log (the reason this exists), and a partition corrected by
 * the KafkaJS binding (adapters/kafkajs/read_committed.ts) makes KafkaJS's real `Batch`
 * hand on exactly the committed records while its `lastOffset()` still covers the rest.
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import fc from "fast-check";
import { abortedIndices, type AbortedTransaction, type FetchedRecordView, isAbortMarkerKey } from "../../adapters/shared/read_committed.ts";
import { checkCorrected, correctFetchedPartition, type KafkaJSRawMessage } from "../../adapters/kafkajs/read_committed.ts";
import { UnverifiedTransactionsError } from "../../core/errors.ts";

interface Rec extends FetchedRecordView {
  /** Truth: a data record of an aborted transaction. */
  readonly aborted: boolean;
  readonly value: string;
}

interface Txn {
  producerId: string;
  firstOffset: number;
  markerOffset: number;
  aborted: boolean;
}

type Op = { p: number; act: "send" | "commit" | "abort" | "plain" };

/** Writes a log from `ops`; open transactions end at the close with `closeAbort`. */
function writeLog(ops: readonly Op[], base: number, gaps: readonly number[], closeAbort: boolean): { log: Rec[]; txns: Txn[] } {
  const log: Rec[] = [];
  const txns: Txn[] = [];
  const open = new Map<string, { txn: Txn; records: number[] }>();
  let offset = base;
  let g = 0;
  const nextOffset = (): number => {
    const o = offset;
    offset += 1 + (gaps.length ? gaps[g++ % gaps.length] : 0);
    return o;
  };
  const end = (pid: string, abort: boolean): void => {
    const t = open.get(pid);
    if (!t) return;
    open.delete(pid);
    const markerOffset = nextOffset();
    t.txn.markerOffset = markerOffset;
    t.txn.aborted = abort;
    txns.push(t.txn);
    if (abort) for (const i of t.records) log[i] = { ...log[i], aborted: true };
    log.push({ offset: markerOffset, producerId: pid, transactional: true, control: true, abortMarker: abort, aborted: false, value: `marker-${pid}` });
  };
  for (const { p, act } of ops) {
    const pid = String(1000 + p);
    if (act === "plain") {
      log.push({ offset: nextOffset(), producerId: String(2000 + p), transactional: false, control: false, abortMarker: false, aborted: false, value: `plain-${log.length}` });
    } else if (act === "send") {
      const o = nextOffset();
      let t = open.get(pid);
      if (!t) open.set(pid, (t = { txn: { producerId: pid, firstOffset: o, markerOffset: -1, aborted: false }, records: [] }));
      t.records.push(log.length);
      log.push({ offset: o, producerId: pid, transactional: true, control: false, abortMarker: false, aborted: false, value: `tx-${pid}-${log.length}` });
    } else {
      end(pid, act === "abort");
    }
  }
  for (const pid of [...open.keys()]) end(pid, closeAbort);
  return { log, txns };
}

/** The aborted transactions a fetch of [from, to] is told of (those overlapping it), in the order they ended. */
function abortedListFor(txns: readonly Txn[], from: number, to: number): AbortedTransaction[] {
  return txns
    .filter((t) => t.aborted && t.firstOffset <= to && t.markerOffset >= from)
    .sort((a, b) => a.markerOffset - b.markerOffset)
    .map((t) => ({ producerId: t.producerId, firstOffset: String(t.firstOffset) }));
}

const opArb = fc.record({
  p: fc.integer({ min: 0, max: 3 }),
  act: fc.constantFrom<Op["act"]>("send", "send", "send", "commit", "abort", "plain"),
});

test("read_committed rule: every fetch window of random interleaved transactions, aborted list in end order or shuffled, equals the model", () => {
  fc.assert(
    fc.property(
      fc.array(opArb, { minLength: 1, maxLength: 60 }),
      fc.constantFrom(0, 2 ** 32 + 5, 2 ** 53 - 10_000),
      fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 5 }),
      fc.boolean(),
      fc.nat(),
      fc.nat(),
      fc.nat(),
      (ops, base, gaps, closeAbort, a, b, seed) => {
        const { log, txns } = writeLog(ops, base, gaps, closeAbort);
        fc.pre(log.length > 0);
        const i0 = a % log.length;
        const i1 = i0 + (b % (log.length - i0));
        const window = log.slice(i0, i1 + 1);
        const list = abortedListFor(txns, window[0].offset, window[window.length - 1].offset);
        const truth = window.flatMap((r, i) => (r.aborted ? [i] : []));
        assert.deepEqual(abortedIndices(window, list, (r) => r), truth);
        // any order of the list gives the same answer
        const shuffled = [...list].sort((x, y) => ((Number(x.firstOffset) * 31 + seed) % 7) - ((Number(y.firstOffset) * 31 + seed) % 7));
        assert.deepEqual(abortedIndices(window, shuffled, (r) => r), truth);
      },
    ),
    { numRuns: 400 },
  );
});

/** The log: A begins, B begins, B aborts, A again, A aborts, a plain record. */
function sixRecords(): { log: Rec[]; txns: Txn[] } {
  return writeLog([{ p: 0, act: "send" }, { p: 1, act: "send" }, { p: 1, act: "abort" }, { p: 0, act: "send" }, { p: 0, act: "abort" }, { p: 2, act: "plain" }], 0, [], true);
}

test("read_committed rule: the six-record log of two interleaved aborts keeps only the plain record", () => {
  const { log, txns } = sixRecords();
  const list = abortedListFor(txns, 0, 5);
  assert.deepEqual(list.map((t) => t.producerId), ["1001", "1000"], "the broker lists B (ended first) before A");
  const aborted = new Set(abortedIndices(log, list, (r) => r));
  const kept = log.filter((r, i) => !r.control && !aborted.has(i)).map((r) => r.value);
  assert.deepEqual(kept, [log[5].value]);
});

test("read_committed rule: no aborted list (read_uncommitted) keeps everything; the ABORT key is type 0", () => {
  const { log } = sixRecords();
  assert.deepEqual(abortedIndices(log, null, (r) => r), []);
  assert.deepEqual(abortedIndices(log, [], (r) => r), []);
  assert.equal(isAbortMarkerKey(new Uint8Array([0, 0, 0, 0])), true);
  assert.equal(isAbortMarkerKey(new Uint8Array([0, 0, 0, 1])), false, "COMMIT");
  assert.equal(isAbortMarkerKey(null), false);
  assert.equal(isAbortMarkerKey(new Uint8Array([0, 0])), false);
});

/** The log as KafkaJS's fetch decodes it. */
function asKafkaJS(log: readonly Rec[]): KafkaJSRawMessage[] {
  return log.map((r) => ({
    offset: String(r.offset),
    key: r.control ? new Uint8Array([0, 0, 0, r.abortMarker ? 0 : 1]) : new TextEncoder().encode(r.value),
    value: r.value,
    isControlRecord: r.control,
    batchContext: { producerId: r.producerId, inTransaction: r.transactional, isControlBatch: r.control },
  }));
}

const require = createRequire(import.meta.url);
type KafkaJSBatch = { messages: { value: string }[]; lastOffset(): string };
const Batch = require("kafkajs/src/consumer/batch.js") as new (topic: string, fetched: string, data: unknown) => KafkaJSBatch;

test("KafkaJS's own filter leaks a record of an aborted transaction from the six-record log (the defect)", () => {
  const { log, txns } = sixRecords();
  const batch = new Batch("t", "0", { partition: 0, highWatermark: "6", messages: asKafkaJS(log), abortedTransactions: abortedListFor(txns, 0, 5) });
  assert.deepEqual(batch.messages.map((m) => m.value), [log[0].value, log[5].value], "A's first record passes KafkaJS 2.2.4's filter");
});

test("a partition corrected by the binding makes KafkaJS's real Batch hand on exactly the committed records, lastOffset past them all", () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), fc.boolean(), fc.nat(), (ops, closeAbort, a) => {
      const { log, txns } = writeLog(ops, 10, [], closeAbort);
      fc.pre(log.length > 0);
      const window = log.slice(a % log.length);
      const first = window[0].offset, last = window[window.length - 1].offset;
      const data = { partition: 0, highWatermark: String(last + 1), messages: asKafkaJS(window), abortedTransactions: abortedListFor(txns, first, last) };
      correctFetchedPartition(data);
      const batch = new Batch("t", String(first), data);
      assert.deepEqual(batch.messages.map((m) => m.value), window.filter((r) => !r.control && !r.aborted).map((r) => r.value));
      assert.equal(batch.lastOffset(), String(last));
    }),
    { numRuns: 300 },
  );
});

test("a KafkaJS batch of transactional records that was not corrected is refused with a typed error naming the topic; others pass", () => {
  const { log, txns } = sixRecords();
  const raw = asKafkaJS(log);
  assert.throws(() => checkCorrected({ topic: "orders", partition: 3, rawMessages: raw }), (e: unknown) => {
    assert.ok(e instanceof UnverifiedTransactionsError);
    assert.equal(e.topic, "orders");
    assert.equal(e.partition, 3);
    assert.match(e.message, /"orders" partition 3/);
    return true;
  });
  const plain = asKafkaJS(log.filter((r) => !r.transactional));
  checkCorrected({ topic: "orders", partition: 3, rawMessages: plain }); // no transactions: nothing to verify
  checkCorrected({ topic: "orders", partition: 3 }); // not a KafkaJS batch
  const data = { messages: raw, abortedTransactions: abortedListFor(txns, 0, 5) };
  correctFetchedPartition(data);
  checkCorrected({ topic: "orders", partition: 3, rawMessages: data.messages });
});
