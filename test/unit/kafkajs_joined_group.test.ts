// The KafkaJS binding reads completed sets back whatever the user passed, or refuses
// (adapters/kafkajs/joined_group.ts, issue 42): on KafkaJS's own ConsumerGroup prototype,
// the group whose assigned() ran (as joinAndSync runs it just before emitting GROUP_JOIN)
// is the one a GROUP_JOIN listener finds, checked by groupId and memberId; where KafkaJS
// cannot be reached, a binding without `kafka` is refused with an error naming it; and
// exactly-once without `kafka` is refused before the consumer is taken. No broker: the
// clients are real but never connect.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { Kafka, logLevel } from "kafkajs";
import { createKafkaJSConsumer } from "../../adapters/kafkajs/mod.ts";
import { installJoinedGroup, joinedGroup, requireReadBack, unreachableGroupError } from "../../adapters/kafkajs/joined_group.ts";
import { InvalidArgumentError } from "../../core/mod.ts";

const kafka = (): Kafka => new Kafka({ brokers: ["127.0.0.1:1"], logLevel: logLevel.NOTHING });
const handler = (): Promise<void> => Promise.resolve();

/** Asserts an InvalidArgumentError whose message matches every pattern. */
function refused(f: () => unknown, ...patterns: RegExp[]): void {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof InvalidArgumentError, `an InvalidArgumentError, got ${String(e)}`);
    for (const p of patterns) assert.match(e.message, p);
    return true;
  });
}

test("installed on KafkaJS's ConsumerGroup: the group whose assigned() ran is found by its groupId and memberId, once", () => {
  assert.equal(installJoinedGroup(), "yes");
  assert.equal(installJoinedGroup(), "yes", "once");
  const ConsumerGroup = createRequire(import.meta.url)("kafkajs/src/consumer/consumerGroup.js") as { prototype: object };
  const assignment = [{ topic: "a", partitions: [0, 1] }];
  const cluster = { findGroupCoordinator: () => Promise.reject(new Error("not connected")) };
  const make = (memberId: string) =>
    Object.assign(Object.create(ConsumerGroup.prototype), { groupId: "g", memberId, cluster, subscriptionState: { assigned: () => assignment } }) as {
      assigned(): unknown;
    };
  const g = make("m-1"), other = make("m-2");
  assert.deepEqual(g.assigned(), assignment, "KafkaJS's own assigned() still answers");
  assert.equal(joinedGroup({ groupId: "g", memberId: "m-1" }), g);
  assert.equal(joinedGroup({ groupId: "g", memberId: "m-1" }), undefined, "taken once: no group is held past its join");
  other.assigned();
  assert.equal(joinedGroup({ groupId: "g", memberId: "m-1" }), undefined, "another member's group is not this join's");
  g.assigned();
  assert.equal(joinedGroup({ groupId: "h", memberId: "m-1" }), undefined, "nor a group of another name");
});

test("where KafkaJS's consumer group cannot be reached, a binding without kafka is refused naming kafka and why", () => {
  const why = installJoinedGroup(new URL("file:///nowhere-offset-frontier/x.js"));
  assert.notEqual(why, "yes");
  assert.match(why, /could not be reached/);
  refused(() => requireReadBack(undefined, why), /^kafka \(the KafkaJS client that made consumer/, /could not be reached/, /could not be read back/);
  requireReadBack(kafka(), why); // read with its admin client instead
  requireReadBack(undefined, "yes");
  assert.ok(unreachableGroupError() instanceof InvalidArgumentError);
  assert.match(unreachableGroupError().message, /^kafka .*could not be read back.*pass kafka/);
  // Here it can: a consumer given only its KafkaJS consumer is accepted.
  createKafkaJSConsumer({ consumer: kafka().consumer({ groupId: "g" }), topics: ["t"], handler });
});

test("exactly-once without kafka is refused naming kafka, and the consumer stays free", () => {
  const consumer = kafka().consumer({ groupId: "g" });
  refused(() => createKafkaJSConsumer({ consumer, topics: ["t"], handler, transactional: {} }), /^transactional mode needs kafka/);
  createKafkaJSConsumer({ consumer, topics: ["t"], handler }); // not taken by the refused construction
});
