/**
 * Does `rateLimit` hold? A consumer with a no-op handler and an endless supply of records
 * (an in-memory client that delivers whenever a partition takes a batch, so the limiter is
 * the only bound) runs for `--seconds` (default 30) at `--rate` starts per second (default
 * 1,000; burst default). Reported: the starts per second from the first start to the end
 * (`achievedPerSecond`), the same without the initial burst of the full bucket
 * (`steadyPerSecond`) and its deviation from the rate (the target: within 5 %), and
 * whether a window exceeded burst + rate × t (it must never). Speed is measured here, never asserted
 * in tests. Runs unchanged on each runtime:
 *
 *     npm run bench:rate -- --rate 1000 --seconds 30
 *     bun bench/rate_limit.bench.ts
 *     deno run -A bench/rate_limit.bench.ts
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { ParallelConsumer } from "../core/mod.ts";
import { resolveRateLimit } from "../core/consumer/records/rate_limit.ts";
import { MemoryClient, type Msg, range } from "../test/unit/runner_client.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { rate: { type: "string" }, burst: { type: "string" }, seconds: { type: "string" }, partitions: { type: "string" } },
});
const perSecond = Number(values.rate ?? 1_000);
const limit = resolveRateLimit({ perSecond, ...(values.burst ? { burst: Number(values.burst) } : {}) });
const seconds = Number(values.seconds ?? 30);
const partitions = Number(values.partitions ?? 3);
if (!(seconds > 0) || !(partitions >= 1)) throw new Error("--seconds must be > 0 and --partitions ≥ 1");

const client = new MemoryClient();
const starts: number[] = [];
const consumer = new ParallelConsumer<Msg>(client, {
  engine: "js",
  ordering: "unordered",
  concurrency: 64,
  commit: { intervalMs: 100 },
  rateLimit: limit,
  handler: () => {
    starts.push(Date.now());
  },
});
await consumer.start();
client.sink.assigned(range(0, partitions).map((partition) => ({ topic: "rate", partition })));
const next = new Array<number>(partitions).fill(0);
const feed = (): void => {
  for (let p = 0; p < partitions; p++) {
    if (client.deliver("rate", p, range(next[p], 500))) next[p] += 500; // refused while paused (backpressure)
  }
};
feed();
const feeder = setInterval(feed, 5);
const t0 = Date.now();
await new Promise((r) => setTimeout(r, seconds * 1_000));
clearInterval(feeder);
const t1 = Date.now();
await consumer.shutdown(0);

const first = starts[0] ?? t0;
const inRun = starts.filter((t) => t <= t1);
const achieved = inRun.length / ((t1 - first) / 1_000);
// The bound: over the whole run, and over the widest window of at most 1 s from each start.
const excess = (i: number, j: number): number => j - i + 1 - (limit.burst + (limit.perSecond * (inRun[j] - inRun[i] + 1)) / 1_000);
let worst = inRun.length > 0 ? excess(0, inRun.length - 1) : 0;
for (let i = 0, j = 0; i < inRun.length; i++) {
  if (j < i) j = i;
  while (j + 1 < inRun.length && inRun[j + 1] - inRun[i] <= 1_000) j++;
  worst = Math.max(worst, excess(i, j));
}
// The bucket starts full: its first `burst` starts are the burst, the rest the rate.
const steady = Math.max(0, inRun.length - limit.burst) / ((t1 - first) / 1_000);
const deviation = steady / limit.perSecond - 1;
const runtime = "Deno" in globalThis ? "deno" : "Bun" in globalThis ? "bun" : "node";
console.log(JSON.stringify({
  runtime,
  perSecond: limit.perSecond,
  burst: limit.burst,
  seconds: (t1 - first) / 1_000,
  starts: inRun.length,
  achievedPerSecond: Math.round(achieved * 10) / 10,
  steadyPerSecond: Math.round(steady * 10) / 10,
  deviationPercent: Math.round(deviation * 1_000) / 10,
  within5Percent: Math.abs(deviation) <= 0.05,
  boundExceeded: worst > 1e-9,
  pausesAtClient: client.pauseLog.filter((l) => l.startsWith("pause")).length,
}));
