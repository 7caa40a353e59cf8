/**
 * One member of the rebalance demo's consumer group (spawned by demo/rebalance.ts on the
 * chosen runtime: `node --import tsx`, `bun` or `deno run --allow-all`).
 *
 *   rebalance_member.ts '<MemberConfig as JSON>'
 *
 * Runs `consume()` of this runtime's adapter (adapters/node.ts, bun.ts or deno.ts),
 * ordering "key", with a drain bound of `drainMs`. The handler writes each record's value
 * to its key's row in the shared SQLite file (demo/rebalance_db.ts), guarded or not, and
 * logs the attempt in the same transaction.
 *
 * Trap records (value ending in `~slow`) model a slow downstream call at the moment of a
 * rebalance: in a member started with `slowTraps`, until the harness writes `fast` on its
 * stdin (just before the third member joins), the handler waits until its `signal` is
 * aborted (the partition is no longer assigned), then `lateMs` more, then writes anyway,
 * as a handler that ignores the signal would. After that, and in other members, a trap
 * record is an ordinary one: its redo by the next owner is quick.
 *
 * Stdout: one JSON event per line: `joined` (partitions), `trap-start`, `trap-end`, `error`.
 * SIGTERM shuts the consumer down gracefully; the process exits when the harness's stdin closes.
 *
 * @module
 */
import process from "node:process";
import { Kafka, logLevel } from "kafkajs";
import type { KafkaJSConsumerOptions, KafkaMessage, ParallelConsumer } from "../adapters/kafkajs/mod.ts";
import { type MemberConfig, TRAP } from "./rebalance_config.ts";
import { SharedDb } from "./rebalance_db.ts";

/** Group timing of every member: quick heartbeats, so a join is noticed within 0.5 s. */
export const GROUP_TIMING = { sessionTimeout: 6_000, heartbeatInterval: 500, rebalanceTimeout: 10_000 } as const;

/** Longest a trap waits for its signal (a rebalance that never came). */
const TRAP_CAP_MS = 30_000;

type Consume = (options: KafkaJSConsumerOptions) => Promise<ParallelConsumer<KafkaMessage>>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function say(event: string, extra: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ event, ...extra })}\n`);
}

/** Resolves once `signal` is aborted, or after `capMs`. */
function aborted(signal: AbortSignal, capMs: number): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, capMs);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });
}

async function main(): Promise<void> {
  const cfg = JSON.parse(process.argv[2] ?? "") as MemberConfig;
  const g = globalThis as Record<string, unknown>;
  const mod = g.Deno
    ? await import("../adapters/deno.ts")
    : g.Bun
    ? await import("../adapters/bun.ts")
    : await import("../adapters/node.ts");
  const consume = mod.consume as Consume;
  const db = await SharedDb.open(cfg.db);

  const kafka = new Kafka({ clientId: `gap-${cfg.member}-${process.pid}`, brokers: [cfg.brokers], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: cfg.group, maxWaitTimeInMs: 100, ...GROUP_TIMING });
  let joins = 0;
  // partition → the owner (assignment) current for it; read by a handler when it starts.
  const owners = new Map<number, { owner: string; since: number }>();
  // Registered before consume() adds the adapter's listeners, so it runs first: records of
  // the new assignment start under the new owner.
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    joins++;
    const since = Date.now();
    const partitions = e.payload.memberAssignment[cfg.topic] ?? [];
    for (const p of partitions) owners.set(p, { owner: `${cfg.member}.${joins}`, since });
    say("joined", { joins, partitions });
  });
  consumer.on(consumer.events.CRASH, (e) => say("error", { error: String(e.payload.error) }));

  const running = await consume({
    kafka, // reads the completed sets back at each assignment
    consumer,
    topics: [cfg.topic],
    fromBeginning: true,
    ordering: "key",
    concurrency: cfg.concurrency,
    drainTimeoutMs: cfg.drainMs,
    handler: async (message, { partition, offset, signal }) => {
      const owner = owners.get(partition) ?? { owner: `${cfg.member}.${joins}`, since: 0 };
      const key = message.key?.toString() ?? "";
      const value = message.value?.toString() ?? "";
      const trap = cfg.slowTraps && !fast && value.endsWith(TRAP);
      if (trap) {
        say("trap-start", { key, partition, offset });
        await aborted(signal, TRAP_CAP_MS); // the partition moved on …
        await sleep(cfg.lateMs); // … and the slow call returns only now
      } else if (cfg.workMs > 0) {
        await sleep(cfg.workMs);
      }
      const applied = await db.write({ key, partition, offset, value, member: cfg.member, owner: owner.owner, ownerSince: owner.since }, cfg.guarded);
      if (trap) say("trap-end", { key, partition, offset, applied, aborted: signal.aborted });
    },
    on: { error: (e) => say("error", { kind: e.kind, error: String(e.error) }) },
  });
  await running.done;
  db.close();
  process.exit(0);
}

/** Set once the harness wrote `fast` on our stdin: from then on trap records are ordinary. */
let fast = false;
let pending = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (d: string) => {
  pending += d;
  for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
    if (pending.slice(0, nl).trim() === "fast") fast = true;
    pending = pending.slice(nl + 1);
  }
});
// The harness holds our stdin open: when it goes away, so do we.
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));

main().catch((e) => {
  say("error", { error: e instanceof Error ? e.stack ?? e.message : String(e) });
  process.exit(1);
});
