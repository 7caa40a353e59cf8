/**
 * A member of the zombie test (test/crash/zombie.test.ts) through the `@platformatic/kafka`
 * binding, run as a child process on Node >= 22.22 (the test runs it on the pinned Node 24):
 *
 *   node --import tsx test/crash/zombie_member_platformatic.ts '{"name":"A","brokers":"…","topic":"…","group":"…"}'
 *
 * The same member as zombie_member.ts (its handler, commit interval, transaction settings
 * and stdout events), over `createPlatformaticConsumer`: session 6 s, heartbeat 0.5 s. The
 * binding makes its producers itself, so the client's `Producer.prototype.beginTransaction`
 * is wrapped here: a producer's first one (InitProducerId with id and epoch -1, sent when
 * the binding opens a partition) is reported as `producer`, and the commit of a transaction
 * SIGSTOPs the process just before its EndTxn once SIGUSR2 asked for it.
 *
 * @module
 */
import process from "node:process";
import { Consumer, kOptions, Producer } from "@platformatic/kafka";
import { createPlatformaticConsumer } from "../../adapters/platformatic/mod.ts";

const cfg = JSON.parse(process.argv[2] ?? "{}") as { name: string; brokers: string; topic: string; group: string };
const say = (o: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify({ member: cfg.name, at: Date.now(), ...o })}\n`);
let stopInTransaction = false;
process.on("SIGUSR2", () => void (stopInTransaction = true));

type Begin = (this: Producer, options?: { producerId?: bigint }) => Promise<{ commit(): Promise<void> }>;
const begin = Producer.prototype.beginTransaction as unknown as Begin;
(Producer.prototype as unknown as { beginTransaction: Begin }).beginTransaction = async function (this: Producer, options) {
  if (options?.producerId === -1n) say({ ev: "producer", id: (this as unknown as Record<symbol, { transactionalId?: string }>)[kOptions].transactionalId });
  const txn = await begin.call(this, options);
  const commit = txn.commit.bind(txn);
  txn.commit = () => {
    if (stopInTransaction) {
      stopInTransaction = false;
      say({ ev: "stopping" }); // stdout is a pipe: written before the stop
      process.kill(process.pid, "SIGSTOP");
    }
    return commit();
  };
  return txn;
};

const consumer = new Consumer({
  groupId: cfg.group,
  clientId: `zombie-${cfg.name}`,
  bootstrapBrokers: [cfg.brokers],
  sessionTimeout: 6_000,
  heartbeatInterval: 500,
  rebalanceTimeout: 10_000,
});
let joins = 0;
consumer.on("consumer:group:join", (e: { assignments?: Array<{ partitions: number[] }> }) => {
  joins++;
  say({ ev: "join", join: joins, partitions: (e.assignments ?? []).flatMap((a) => a.partitions) });
});
const running = createPlatformaticConsumer({
  consumer,
  topics: [cfg.topic],
  fromBeginning: true,
  maxWaitTime: 100,
  ordering: "unordered",
  concurrency: 16,
  commit: { mode: "interval", intervalMs: 500 },
  transactional: { timeoutMs: 5_000, transactionTimeoutMs: 30_000 },
  on: {
    transaction: (e) =>
      say({
        ev: "tx",
        outcome: e.outcome,
        partition: e.partition,
        offset: e.offset,
        records: e.records,
        ...(e.error !== undefined ? { error: String(e.error).slice(0, 160) } : {}),
      }),
  },
  handler: async (message, { partition, offset, send }) => {
    const join = joins;
    await new Promise((r) => setTimeout(r, 20));
    send!({
      topic: `${cfg.topic}.out`,
      partition,
      key: message.key,
      value: message.value,
      headers: { from: `${partition}:${offset}`, by: cfg.name, join: String(join) },
    });
  },
});
process.once("SIGTERM", () => void running.shutdown());
await running.start();
await running.done.catch((e) => say({ ev: "failed", error: String(e) }));
say({ ev: "done" });
