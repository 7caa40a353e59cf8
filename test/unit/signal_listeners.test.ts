// A handler that hands the record signal on (one `abort` listener per running record) with
// more than 10 records of one partition in flight: through the bindings' wrapper, no
// MaxListenersExceededWarning. Without it Node warns (the control: Bun and Deno never do).
import assert from "node:assert/strict";
import process from "node:process";
import { test } from "node:test";
import { type Handler, ParallelConsumer } from "../../core/mod.ts";
import { unlimitedSignalListeners } from "../../adapters/signal_listeners.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

const isNode = !process.versions.bun && !(globalThis as { Deno?: unknown }).Deno;

/** Runs 30 records of one partition at once, each adding an abort listener; returns the warnings seen. */
async function warningsWith(wrap: (h: Handler<Msg>) => Handler<Msg>): Promise<string[]> {
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  try {
    const client = new MemoryClient();
    let running = 0;
    const release: Array<() => void> = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "unordered",
      concurrency: 30,
      handler: wrap((_m, { signal }) =>
        new Promise<void>((resolve) => {
          const done = (): void => (signal.removeEventListener("abort", done), resolve());
          signal.addEventListener("abort", done);
          running++;
          release.push(done);
        })
      ),
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    client.deliver("t", 0, range(0, 30));
    await until(() => running === 30, 2_000, "30 records running");
    await new Promise((r) => setTimeout(r, 20)); // warnings are emitted on the next tick
    for (const r of release) r();
    await until(() => c.metrics().partitions[0]?.safe === 30, 2_000, "all done");
    await c.shutdown();
  } finally {
    process.off("warning", onWarning);
  }
  return warnings.filter((w) => w.startsWith("MaxListenersExceededWarning"));
}

test("record signals through unlimitedSignalListeners: no listener warning with 30 in flight per partition", async () => {
  assert.deepEqual(await warningsWith(unlimitedSignalListeners), []);
  if (isNode) assert.equal((await warningsWith((h) => h)).length, 1, "the control: Node warns without it");
});
