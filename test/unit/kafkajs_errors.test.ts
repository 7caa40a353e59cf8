/**
 * How the KafkaJS binding reads KafkaJS's own error classes: what is waited out (the
 * cluster does not answer), what is a refusal (fails at once, typed, naming the topic
 * and the broker), and which broker an error names.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import * as kafkajsModule from "kafkajs";
import { brokersOf, isKafkaJSError, isUnreachable, refusalOf } from "../../adapters/kafkajs/errors.ts";
import { ClusterRefusedError } from "../../core/errors.ts";

// KafkaJS spreads its error classes into module.exports, which Node's CommonJS named-export
// detection does not see: take them from the module object.
const kafkajs = (kafkajsModule as unknown as { default?: typeof kafkajsModule }).default ?? kafkajsModule;
const {
  KafkaJSConnectionError,
  KafkaJSGroupCoordinatorNotFound,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSSASLAuthenticationError,
} = kafkajs;

/** A protocol error as KafkaJS builds it from a broker's error code. */
function protocol(type: string, code: number, retriable: boolean): Error {
  return new KafkaJSProtocolError({ message: `broker said ${type}`, type, code, retriable } as unknown as Error);
}

// KafkaJS's constructors take metadata objects its type declarations do not all spell out.
const refused = (broker: string): Error =>
  new (KafkaJSConnectionError as unknown as new (m: string, o: { broker: string; code: string }) => Error)(
    `Connection error: connect ECONNREFUSED ${broker}`,
    { broker, code: "ECONNREFUSED" },
  );
const retriesExceeded = (cause: Error): Error =>
  new (KafkaJSNumberOfRetriesExceeded as unknown as new (e: Error, o: { retryCount: number; retryTime: number }) => Error)(
    cause,
    { retryCount: 5, retryTime: 8_000 },
  );

describe("KafkaJS errors", () => {
  test("a refused connection, wrapped by the retrier, is waited out and names its broker", () => {
    const e = retriesExceeded(refused("127.0.0.1:9092"));
    assert.equal(isUnreachable(e), true);
    assert.equal(isKafkaJSError(e), true);
    assert.deepEqual(brokersOf(e), ["127.0.0.1:9092"]);
    assert.equal(refusalOf(e, ["orders"], undefined, true), undefined);
  });

  test("a lost coordinator and a moving one are waited out", () => {
    const gone = new (KafkaJSGroupCoordinatorNotFound as unknown as new (m: string) => Error)("Failed to find group coordinator");
    assert.equal(isUnreachable(gone), true);
    assert.equal(refusalOf(gone, ["orders"], "b:1", false), undefined);
    assert.equal(isUnreachable(protocol("NOT_COORDINATOR", 16, true)), true);
    assert.equal(isUnreachable(protocol("REBALANCE_IN_PROGRESS", 27, false)), false);
  });

  test("an unknown topic is a refusal only when subscribing, naming the topic and the broker that answered", () => {
    const e = protocol("UNKNOWN_TOPIC_OR_PARTITION", 3, true);
    const r = refusalOf(e, ["orders"], "10.0.0.1:9092", true);
    assert.ok(r instanceof ClusterRefusedError);
    assert.equal(r.kind, "unknown-topic");
    assert.deepEqual(r.topics, ["orders"]);
    assert.equal(r.broker, "10.0.0.1:9092");
    assert.match(r.message, /10\.0\.0\.1:9092.*"orders" does not exist/);
    assert.equal(r.cause, e);
    assert.equal(refusalOf(e, ["orders"], "10.0.0.1:9092", false), undefined, "later on it can be a passing state");
  });

  test("authentication and authorization failures are refusals, also inside the retrier's wrapper", () => {
    const sasl = new (KafkaJSSASLAuthenticationError as unknown as new (m: string) => Error)("SASL PLAIN authentication failed");
    const auth = refusalOf(sasl, ["orders"], "b:1", false);
    assert.equal(auth?.kind, "authentication");
    assert.deepEqual(auth?.topics, []);
    const topic = refusalOf(retriesExceeded(protocol("TOPIC_AUTHORIZATION_FAILED", 29, false)), ["orders"], "b:1", false);
    assert.equal(topic?.kind, "authorization");
    assert.match(topic!.message, /not authorized for topic "orders"/);
    assert.equal(refusalOf(protocol("GROUP_AUTHORIZATION_FAILED", 30, false), [], undefined, false)?.kind, "authorization");
  });

  test("errors that are not KafkaJS's are neither waited out nor refusals", () => {
    const bug = new TypeError("x is not a function");
    assert.equal(isKafkaJSError(bug), false);
    assert.equal(isUnreachable(bug), false);
    assert.equal(refusalOf(bug, ["orders"], undefined, true), undefined);
    assert.deepEqual(brokersOf("a string"), []);
  });
});
