// A handler that hands the record signal on (one `abort` listener per running record) with
// more than 10 records of one partition in flight: a client whose `recordSignal` lifts the
// limit (as the bindings' does) gives no MaxListenersExceededWarning, and is told each
// assignment's signal once, before any handler sees it. Without it Node warns (the control:
// Bun and Deno never do).
import assert from "node:assert/strict";
import process from "node:process";
import { test } from "node:test";
import { ParallelConsumer } from "../../core/mod.ts";
import { unlimitedListeners } from "../../adapters/shared/signal_listeners.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

const isNode = !process.versions.bun && !(globalThis as { Deno?: unknown }).Deno;

/**
 * Runs 30 records of one partition at once, each adding an abort listener, over two
 * assignments of that partition; returns the warnings seen and the signals `recordSignal`
 * was told of (`lift` undefined: the client has no `recordSignal`).
 */
async function run(lift: ((signal: AbortSignal) => void) | undefined): Promise<{ warnings: string[]; told: AbortSignal[]; seen: AbortSignal[] }> {
  const warnings: string[] = [];
  const told: AbortSignal[] = [];
  const seen: AbortSignal[] = [];
  const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  try {
    const client = new MemoryClient();
    if (lift) {
      (client as MemoryClient & { recordSignal(s: AbortSignal): void }).recordSignal = (signal) => {
        told.push(signal);
        lift(signal);
      };
    }
    let running = 0;
    const release: Array<() => void> = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 30,
      handler: (_m, { signal }) =>
        new Promise<void>((resolve) => {
          if (lift) assert.ok(told.includes(signal), "the handler's signal was told first");
          if (!seen.includes(signal)) seen.push(signal);
          const done = (): void => (signal.removeEventListener("abort", done), resolve());
          signal.addEventListener("abort", done);
          running++;
          release.push(done);
        }),
    });
    await c.start();
    for (const round of [0, 1]) {
      client.sink.assigned([{ topic: "t", partition: 0 }]);
      client.deliver("t", 0, range(round * 30, 30));
      await until(() => running === 30 * (round + 1), 2_000, "30 records running");
      await new Promise((r) => setTimeout(r, 20)); // warnings are emitted on the next tick
      for (const r of release.splice(0)) r();
      await until(() => c.metrics().partitions[0]?.safe === 30 * (round + 1), 2_000, "all done");
      if (round === 0) await client.sink.revoking();
    }
     await c.shutdown();
  } finally {
    process.off("warning", onWarning);
  }
  return { warnings: warnings.filter((w) => w.startsWith("MaxListenersExceededWarning")), told, seen };
}

test("record signals through a client's recordSignal: told once per assignment, no listener warning with 30 in flight", async () => {
  const lifted = await run(unlimitedListeners);
  assert.deepEqual(lifted.warnings, []);
  assert.equal(lifted.seen.length, 2, "one signal per assignment");
  assert.deepEqual(lifted.told, lifted.seen, "each told once, in order");
  if (isNode) assert.ok((await run(undefined)).warnings.length >= 1, "the control: Node warns without it");
});

test("the KafkaJS binding's recordSignal lifts the limit: 11 listeners on one signal, no warning", async () => {
  const { Kafka, logLevel } = await import("kafkajs");
  const { KafkaJSClient } = await import("../../adapters/kafkajs/client.ts");
  const consumer = new Kafka({ brokers: ["127.0.0.1:1"], logLevel: logLevel.NOTHING }).consumer({ groupId: "g" });
  const client = new KafkaJSClient(consumer, ["t"]);
  const listen = async (signal: AbortSignal): Promise<string[]> => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on("warning", onWarning);
    const noop = (): void => {};
    const listeners = Array.from({ length: 11 }, () => () => noop());
    for (const l of listeners) signal.addEventListener("abort", l);
    await new Promise((r) => setTimeout(r, 20)); // warnings are emitted on the next tick
    for (const l of listeners) signal.removeEventListener("abort", l);
    process.off("warning", onWarning);
    return warnings.filter((w) => w === "MaxListenersExceededWarning");
  };
  const lifted = new AbortController().signal;
  client.recordSignal(lifted);
  assert.deepEqual(await listen(lifted), []);
  if (isNode) assert.equal((await listen(new AbortController().signal)).length, 1, "the control: Node warns without it");
});
