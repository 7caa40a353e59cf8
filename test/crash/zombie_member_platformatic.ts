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
import { createPlatformaticConsumer, type PlatformaticMessage } from "../../adapters/platformatic/mod.ts";
import { cfg, joins, memberOptions, say, stopBeforeCommit, TRANSACTION } from "./zombie_kit.ts";

type Begin = (this: Producer, options?: { producerId?: bigint }) => Promise<{ commit(): Promise<void> }>;
const begin = Producer.prototype.beginTransaction as unknown as Begin;
(Producer.prototype as unknown as { beginTransaction: Begin }).beginTransaction = async function (this: Producer, options) {
  if (options?.producerId === -1n) say({ ev: "producer", id: (this as unknown as Record<symbol, { transactionalId?: string }>)[kOptions].transactionalId });
  return stopBeforeCommit(await begin.call(this, options));
};

const consumer = new Consumer({
  groupId: cfg.group,
  clientId: `zombie-${cfg.name}`,
  bootstrapBrokers: [cfg.brokers],
  sessionTimeout: 6_000,
  heartbeatInterval: 500,
  rebalanceTimeout: 10_000,
});
consumer.on("consumer:group:join", (e: { assignments?: Array<{ partitions: number[] }> }) => {
  joins.count++;
  say({ ev: "join", join: joins.count, partitions: (e.assignments ?? []).flatMap((a) => a.partitions) });
});
const running = createPlatformaticConsumer({
  consumer,
  maxWaitTime: 100,
  ...memberOptions<PlatformaticMessage>(),
  transactional: TRANSACTION,
});
process.once("SIGTERM", () => void running.shutdown());
await running.start();
await running.done.catch((e) => say({ ev: "failed", error: String(e) }));
say({ ev: "done" });
