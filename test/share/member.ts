/**
 * One share-group member of the `@kafkats/client` evaluation (test/share/eval.ts), on
 * Node (`node --import tsx`), Bun or Deno: `client.shareConsumer({ groupId }).runEach()`
 * on the round's topic, through the harness's proxy.
 *
 * Config: one JSON argument `{ brokers, topic, groupId, log, member, parent, seed }`.
 * The log (fsynced where it matters, test/chaos/fsync_log.ts), one line per event,
 * tab-separated, the time first (ms since the epoch):
 * - `t G rec dc` the handler got record `rec` (`partition:offset`) with delivery count `dc`
 *   (written, not fsynced);
 * - `t F rec dc` finished, fsynced *before* the ACCEPT is sent;
 * - `t A rec` / `t Z rec error` the ACCEPT's promise resolved / rejected;
 * - `t P rec dc` the poison got, fsynced before the REJECT; `t PA rec` / `t PZ rec error`;
 * - `t J partitions` / `t V partitions` assigned / revoked (kafkats's events);
 * - `t R partition:first-last dc` records the warm-up fetch acquired and RELEASEd unseen;
 * - `t T` SIGTERM received (stop() called); `t D ms` runEach returned, `ms` after the SIGTERM;
 * - `t E error` an error event; `t X error` runEach rejected without a SIGTERM (the member
 *   starts a new consumer 500 ms later); `t S` a runEach starts.
 *
 * @module
 */
import process from "node:process";
import { writeSync, openSync } from "node:fs";
import { KafkaClient, ShareConsumer } from "@kafkats/client";
import { FsyncLog } from "../chaos/fsync_log.ts";
import { exitWithParent, oneLine } from "../chaos/member_kit.ts";
import { rng } from "../chaos/workload.ts";
import { POISON, type ShareMemberConfig } from "./analyze.ts";

const cfg = JSON.parse(process.argv[process.argv.length - 1]) as ShareMemberConfig;
exitWithParent(cfg.parent);
const log = new FsyncLog(cfg.log);
const raw = openSync(cfg.log, "a");
const note = (s: string): void => {
  writeSync(raw, `${Date.now()}\t${s}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const random = rng(cfg.seed);

// Instrumentation (a private method of 0.12.0, dist/index.js): log what the warm-up fetch
// at a member's first assignment acquired and RELEASEd without any handler seeing it
// (`t R partition:first-last dc`): each is a delivery attempt the broker counted.
interface AcquiredRange {
  firstOffset: bigint;
  lastOffset: bigint;
  deliveryCount: number;
}
interface PrefetchResponse {
  topics: Array<{ partitions: Array<{ partitionIndex: number; acquiredRecords: AcquiredRange[] }> }>;
}
type Release = (broker: unknown, response: PrefetchResponse) => Promise<void>;
const proto = ShareConsumer.prototype as unknown as { releasePrefetchedRecords: Release };
const release = proto.releasePrefetchedRecords;
proto.releasePrefetchedRecords = function (this: unknown, broker, response) {
  for (const t of response.topics) {
    for (const p of t.partitions) {
      for (const r of p.acquiredRecords) note(`R\t${p.partitionIndex}:${r.firstOffset}-${r.lastOffset}\t${r.deliveryCount}`);
    }
  }
  return release.call(this, broker, response);
};

const client = new KafkaClient({ brokers: [cfg.brokers], clientId: cfg.member, requestTimeoutMs: 10_000, connectionTimeoutMs: 3_000 });
const names = (tps: Array<{ topic: string; partition: number }>): string => tps.map((tp) => tp.partition).join(",");
let consumer: ReturnType<KafkaClient["shareConsumer"]> | undefined;

let termAt: number | undefined;
process.on("SIGTERM", () => {
  if (termAt !== undefined) return;
  termAt = Date.now();
  note("T");
  void consumer?.stop();
});

/** One runEach of a new share consumer (a new member id), until it returns or rejects. */
async function runOnce(): Promise<void> {
  await client.connect(); // runEach does not connect the client itself
  const c = client.shareConsumer({ groupId: cfg.groupId });
  consumer = c;
  c.on("partitionsAssigned", (tps) => note(`J\t${names(tps)}`));
  c.on("partitionsRevoked", (tps) => note(`V\t${names(tps)}`));
  c.on("error", (e) => note(`E\t${oneLine(e)}`));
  if (termAt !== undefined) return;
  await c.runEach(cfg.topic, async (m) => {
    const rec = `${m.partition}:${m.offset}`;
    const dc = m.deliveryCount ?? -1;
    const value = m.value?.toString() ?? "";
    note(`G\t${rec}\t${dc}\t${value}`);
    await sleep(Math.floor(random() * 4));
    if (value === POISON) {
      await log.append(`${Date.now()}\tP\t${rec}\t${dc}\n`);
      await m.reject().then(() => note(`PA\t${rec}`), (e) => note(`PZ\t${rec}\t${oneLine(e)}`));
      return;
    }
    await log.append(`${Date.now()}\tF\t${rec}\t${dc}\n`);
    await m.ack().then(() => note(`A\t${rec}`), (e) => note(`Z\t${rec}\t${oneLine(e)}`));
  });
}

// Supervised: runEach gives up for good when the broker is unreachable ("No brokers
// available", found by this evaluation), so a failed run is logged (X) and started again
// as a new consumer until the member is SIGTERMed.
note("S");
for (;;) {
  try {
    await runOnce();
  } catch (e) {
    if (termAt === undefined) note(`X\t${oneLine(e)}`);
  }
  if (termAt !== undefined) break;
  await sleep(500);
  note("S");
}
note(`D\t${Date.now() - termAt}`);
await client.disconnect().catch(() => {});
process.exit(0);
