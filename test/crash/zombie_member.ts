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
import { Kafka, type KafkaMessage, logLevel, type ProducerConfig } from "kafkajs";
import { consume } from "../../adapters/node.ts";
import { cfg, joins, memberOptions, say, stopBeforeCommit, TRANSACTION } from "./zombie_kit.ts";

const kafka = new Kafka({ clientId: `zombie-${cfg.name}`, brokers: [cfg.brokers], logLevel: logLevel.NOTHING });
// Every transactional producer the binding makes is reported (its InitProducerId fences the partition's other producers).
const makeProducer = kafka.producer.bind(kafka);
kafka.producer = ((config?: ProducerConfig) => {
  const producer = makeProducer(config);
  if (!config?.transactionalId) return producer;
  say({ ev: "producer", id: config.transactionalId });
  const transaction = producer.transaction.bind(producer);
  producer.transaction = async () => stopBeforeCommit(await transaction());
  return producer;
}) as typeof kafka.producer;
const consumer = kafka.consumer({ groupId: cfg.group, maxWaitTimeInMs: 100, sessionTimeout: 6_000, heartbeatInterval: 500, rebalanceTimeout: 10_000 });
consumer.on(consumer.events.GROUP_JOIN, (e) => {
  joins.count++;
  say({ ev: "join", join: joins.count, partitions: Object.values(e.payload.memberAssignment).flat() });
});
const running = await consume({
  kafka,
  consumer,
  ...memberOptions<KafkaMessage>(),
  transactional: { groupId: cfg.group, ...TRANSACTION },
});
await running.done.catch((e) => say({ ev: "failed", error: String(e) }));
say({ ev: "done" });
