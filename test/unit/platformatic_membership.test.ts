// The @platformatic/kafka binding's group side (adapters/platformatic/membership.ts) under
// eager and cooperative-sticky rebalances, driven as the client drives it: the
// `protocolsMetadata` hook before each JoinGroup, `consumer:group:rebalance` and
// `consumer:group:join`. The consumer is a plain object with the fields the client keeps
// (`assignments`, `generationId`, `memberId`); the sink records what the runner is told.
// The real-broker side is test/kafka/consumer_rebalance.test.ts.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ClientSink, TopicPartition } from "../../core/consumer/port/client.ts";
import type { Fetcher } from "../../adapters/platformatic/fetcher.ts";
import { Membership } from "../../adapters/platformatic/membership.ts";
import type { ClientConsumer, PlatformaticMessage } from "../../adapters/platformatic/types.ts";

type Assignments = Array<{ topic: string; partitions: number[] }>;
const names = (ps: readonly TopicPartition[] | undefined): string => ps === undefined ? "all" : ps.map((p) => `${p.topic}/${p.partition}`).sort().join(",");

function setup(cooperative: boolean) {
  const consumer = { assignments: null as Assignments | null, generationId: 0, memberId: "m-1" };
  const told: string[] = [];
  const fetched = new Set<string>();
  let n = 0;
  const fetcher = {
    assign: (ps: readonly TopicPartition[]) => (fetched.clear(), ps.forEach((p) => fetched.add(`${p.topic}/${p.partition}`)), ++n),
    add: (ps: readonly TopicPartition[]) => (ps.forEach((p) => fetched.add(`${p.topic}/${p.partition}`)), ++n),
    remove: (ps: readonly TopicPartition[]) => ps.forEach((p) => fetched.delete(`${p.topic}/${p.partition}`)),
    clear: () => fetched.clear(),
    holds: () => true,
    positioned: () => {},
  };
  const sink = {
    signal: new AbortController().signal,
    assigned: (ps: readonly TopicPartition[], _c: unknown, incremental?: boolean) => told.push(`${incremental ? "added" : "assigned"} ${names(ps)}`),
    revoking: (ps?: readonly TopicPartition[]) => (told.push(`revoking ${names(ps)} in generation ${m.generation}`), Promise.resolve()),
    lost: (ps?: readonly TopicPartition[]) => told.push(`lost ${names(ps)}`),
  };
  const m = new Membership({
    consumer: consumer as unknown as ClientConsumer,
    cooperative,
    transactional: false,
    settings: { maxWaitTime: 100, maxBytesPerPartition: 1, maxBytes: 1, readCommitted: true, fromBeginning: true },
    sink: () => sink as unknown as ClientSink<PlatformaticMessage>,
    fetcher: () => fetcher as unknown as Fetcher,
    closed: () => false,
    stopped: () => true, // no committed offsets read: no broker here
    available: () => {},
    unavailable: () => 0,
  });
  /** The client's SyncGroup: a new generation and assignment; `join` emits the join event (false: a cooperative revoke round). */
  const sync = (generation: number, a: Assignments, join = true) => {
    consumer.generationId = generation;
    consumer.assignments = a;
    if (join) m.joined({ generationId: generation, assignments: a });
  };
  return { consumer, m, told, fetched, sync };
}

test("eager: every rebalance gives everything up, orderly after REBALANCE_IN_PROGRESS, as a loss without it", async () => {
  const { m, told, fetched, sync } = setup(false);
  await m.beforeJoin();
  sync(1, [{ topic: "t", partitions: [0, 1, 2] }]);
  m.rebalancing();
  await m.beforeJoin();
  assert.equal(m.generation, undefined);
  sync(2, [{ topic: "t", partitions: [1] }]);
  await m.beforeJoin(); // no rebalance announced: the session or generation was lost
  assert.deepEqual(told, ["assigned t/0,t/1,t/2", "revoking all in generation 1", "assigned t/1", "lost all"]);
  assert.equal(fetched.size, 0);
});

test("cooperative: partitions that stay carry on; those that move are revoked alone, committed under the new generation", async () => {
  const { m, told, fetched, sync } = setup(true);
  await m.beforeJoin();
  sync(1, [{ topic: "t", partitions: [0, 1, 2, 3] }]);
  // another member joins: REBALANCE_IN_PROGRESS, the member keeps everything while it rejoins
  m.rebalancing();
  await m.beforeJoin();
  assert.equal(m.generation, 1);
  assert.ok(m.holds("t", 0) && m.holds("t", 3));
  // generation 2 takes 1 and 3 away: the client's revoke round (no join event), then the hook
  sync(2, [{ topic: "t", partitions: [0, 2] }], false);
  m.rebalancing();
  await m.beforeJoin();
  assert.ok(!m.holds("t", 1) && !m.holds("t", 3) && m.holds("t", 0));
  // generation 3: the member's assignment stays; the other member gets 1 and 3
  sync(3, [{ topic: "t", partitions: [0, 2] }]);
  // a later generation adds a partition back
  m.rebalancing();
  await m.beforeJoin();
  sync(4, [{ topic: "t", partitions: [0, 2, 3] }]);
  assert.deepEqual(told, [
    "assigned t/0,t/1,t/2,t/3",
    "revoking t/1,t/3 in generation 2",
    "added ",
    "added t/3",
  ]);
  assert.deepEqual([...fetched].sort(), ["t/0", "t/2", "t/3"]);
  assert.equal(m.generation, 4);
});

test("cooperative: a rejoin after the membership was lost (the client emptied its assignments) loses everything", async () => {
  const { consumer, m, told, fetched, sync } = setup(true);
  await m.beforeJoin();
  sync(1, [{ topic: "t", partitions: [0, 1] }]);
  consumer.assignments = []; // UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION: the client owns nothing any more
  await m.beforeJoin();
  assert.deepEqual(told, ["assigned t/0,t/1", "lost all"]);
  assert.equal(m.generation, undefined);
  assert.equal(fetched.size, 0);
  sync(2, [{ topic: "t", partitions: [1] }]);
  assert.deepEqual(told.slice(2), ["assigned t/1"]); // a whole new assignment, not an incremental one
});

test("cooperative: the subscription's user data carries the owned partitions' generation (-1 when none)", async () => {
  const { m, sync } = setup(true);
  assert.equal((await m.beforeJoin()).readInt32BE(0), -1);
  sync(5, [{ topic: "t", partitions: [0] }]);
  m.rebalancing();
  assert.equal((await m.beforeJoin()).readInt32BE(0), 5);
});
