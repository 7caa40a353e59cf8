// The bindings' shared transaction turn-taking (adapters/shared/serial_transaction.ts): a
// producer whose transaction passed its timeout while a step was still under way (a process
// stopped past the bound sends its EndTxn at the wake-up) is closed only once that step
// settled, at most VERDICT_GRACE_MS later, so that the broker's fencing answer is what the
// outcome reports, not the client's failure of a request on a closed producer.
import assert from "node:assert/strict";
import { test } from "node:test";
import { releaseProducers, runSerialTransaction, type SerialProducer } from "../../adapters/shared/serial_transaction.ts";
import { VERDICT_GRACE_MS } from "../../adapters/shared/transaction_bounds.ts";

const fencedError = Object.assign(new Error("PRODUCER_FENCED"), { fenced: true });
const isFenced = (e: unknown) => (e as { fenced?: boolean })?.fenced === true;
const producer = (): SerialProducer => ({ busy: 0, tail: Promise.resolve(), broken: false, fenced: undefined, quiet: Promise.resolve() });
const t = { topic: "t", partition: 0 };

test("a timed-out transaction's producer is closed only once its run settled: the late fencing is the outcome", async () => {
  const pp = producer();
  const producers = new Map([["t\u00000", pp]]);
  let closed = false;
  // The step answers 50 ms after the 100 ms timeout (within the grace, which the timeout caps), with the broker's
  // fencing, unless the producer was closed first.
  const outcome = runSerialTransaction(pp, false, t, 100, isFenced, async (failed) => {
    await new Promise((r) => setTimeout(r, 150));
    const error = closed ? new Error("the client closed the producer") : fencedError;
    failed(error);
    throw error;
  });
  await new Promise((r) => setTimeout(r, 120)); // past the timeout: the release comes now
  const released = releaseProducers(producers, [t], () => ((closed = true), Promise.resolve()));
  const o = await outcome;
  await released;
  assert.equal(closed, true);
  assert.deepEqual({ ok: o.ok, fenced: o.ok ? undefined : o.fenced }, { ok: false, fenced: true }, "reported fenced, as the broker said");
});

test("a run that never settles holds its producer's close at most VERDICT_GRACE_MS past its timeout", async () => {
  const pp = producer();
  void runSerialTransaction(pp, false, t, 20, isFenced, () => new Promise(() => {}));
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, 30));
  await pp.quiet;
  const waited = Date.now() - t0;
  assert.ok(waited >= VERDICT_GRACE_MS - 100 && waited < VERDICT_GRACE_MS + 2_000, `closed ${waited} ms after the timeout`);
});
