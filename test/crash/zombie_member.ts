/**
 * A member of the zombie test (test/crash/zombie.test.ts), run as a child process:
 *
 *   node --import tsx test/crash/zombie_member.ts '{"name":"A","brokers":"…","topic":"…","group":"…"}'
 *
 * `consume()` in exactly-once mode; each record's handler (20 ms) sends one output to
 * `<topic>.out` (same partition) with headers `from` (`<partition>:<offset>`), `by` (the
 * member's name) and `join` (this process's GROUP_JOIN count when the attempt started).
 * Commits every 500 ms (interval mode), so completed records wait for their transaction.
 * Prints one JSON line per event to stdout: `join` (partitions), `tx` (a transaction's
 * outcome), `producer` (a transactional producer made: its InitProducerId fences the
 * partition's others), `stopping` (SIGUSR2 asked for a stop inside a transaction: the next
 * transaction's commit SIGSTOPs the process just before its EndTxn), `done`.
 *
 * @module
 */
import process from "node:process";
import { Kafka, logLevel, type ProducerConfig } from "kafkajs";
import { consume } from "../../adapters/node.ts";

const cfg = JSON.parse(process.argv[2] ?? "{}") as { name: string; brokers: string; topic: string; group: string };
const say = (o: Record<string, unknown>): void => void process.stdout.write(`${JSON.stringify({ member: cfg.name, at: Date.now(), ...o })}\n`);
const kafka = new Kafka({ clientId: `zombie-${cfg.name}`, brokers: [cfg.brokers], logLevel: logLevel.NOTHING });
// SIGUSR2 asks for a stop inside a transaction: the next transaction to commit stops this
// process (SIGSTOP to itself) just before its EndTxn goes out, as a pause in flight would.
let stopInTransaction = false;
process.on("SIGUSR2", () => void (stopInTransaction = true));
// Every transactional producer the binding makes is reported (its InitProducerId fences the partition's other producers).
const makeProducer = kafka.producer.bind(kafka);
kafka.producer = ((config?: ProducerConfig) => {
  const producer = makeProducer(config);
  if (!config?.transactionalId) return producer;
  say({ ev: "producer", id: config.transactionalId });
  const transaction = producer.transaction.bind(producer);
  producer.transaction = async () => {
    const txn = await transaction();
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
  return producer;
}) as typeof kafka.producer;
const consumer = kafka.consumer({ groupId: cfg.group, maxWaitTimeInMs: 100, sessionTimeout: 6_000, heartbeatInterval: 500, rebalanceTimeout: 10_000 });
let joins = 0;
consumer.on(consumer.events.GROUP_JOIN, (e) => {
  joins++;
  say({ ev: "join", join: joins, partitions: Object.values(e.payload.memberAssignment).flat() });
});
const running = await consume({
  kafka,
  consumer,
  topics: [cfg.topic],
  fromBeginning: true,
  ordering: "unordered",
  concurrency: 16,
  commit: { mode: "interval", intervalMs: 500 },
  transactional: { groupId: cfg.group, timeoutMs: 5_000, transactionTimeoutMs: 30_000 },
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
await running.done.catch((e) => say({ ev: "failed", error: String(e) }));
say({ ev: "done" });
