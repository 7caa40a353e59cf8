// How the @platformatic/kafka binding reads the client's errors (built with the client's own
// error classes): outages are waited out, refusals are typed and fail at once.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AuthenticationError, MultipleErrors, NetworkError, ProtocolError, TimeoutError, UserError } from "@platformatic/kafka";
import { ClusterRefusedError } from "../../core/errors.ts";
import { brokersOf, CommitNotAcknowledgedError, hasApiId, isGroupAnswer, isUnreachable, refusalOf, unknownTopicOf } from "../../adapters/platformatic/errors.ts";

describe("platformatic binding: the client's errors", () => {
  test("a failed connection, a timeout and a moving coordinator are outages, also inside an aggregate", () => {
    assert.ok(isUnreachable(new NetworkError("Connection to 127.0.0.1:9092 failed.")));
    assert.ok(isUnreachable(new TimeoutError("Request timed out")));
    assert.ok(isUnreachable(new ProtocolError("NOT_COORDINATOR")));
    assert.ok(isUnreachable(new MultipleErrors("joinGroup failed 3 times.", [new Error("x"), new NetworkError("Connection closed")])));
    assert.ok(!isUnreachable(new ProtocolError("OFFSET_METADATA_TOO_LARGE")));
    assert.ok(!isUnreachable(new Error("anything else")));
  });

  test("the group's own answers to a join are no outage; with a failure to reach the cluster they are", () => {
    assert.ok(isGroupAnswer(new ProtocolError("REBALANCE_IN_PROGRESS")));
    assert.ok(isGroupAnswer(new MultipleErrors("joinGroup failed 4 times.", [new ProtocolError("UNKNOWN_MEMBER_ID"), new ProtocolError("ILLEGAL_GENERATION")])));
    assert.ok(!isUnreachable(new ProtocolError("REBALANCE_IN_PROGRESS")));
    assert.ok(!isGroupAnswer(new MultipleErrors("joinGroup failed 2 times.", [new ProtocolError("REBALANCE_IN_PROGRESS"), new NetworkError("Connection closed")])));
    assert.ok(!isGroupAnswer(new ProtocolError("NOT_COORDINATOR")));
    assert.ok(!isGroupAnswer(new Error("anything else")));
  });

  test("the broker an error names", () => {
    assert.deepEqual(brokersOf(new MultipleErrors("m", [new NetworkError("Connection to 127.0.0.1:9092 failed.")])), ["127.0.0.1:9092"]);
    assert.deepEqual(brokersOf(new Error("no address here")), []);
  });

  test("protocol errors are found by their Kafka name", () => {
    assert.ok(hasApiId(new MultipleErrors("fetch", [new ProtocolError("OFFSET_OUT_OF_RANGE")]), "OFFSET_OUT_OF_RANGE"));
    assert.ok(!hasApiId(new ProtocolError("NOT_COORDINATOR"), "OFFSET_OUT_OF_RANGE"));
  });

  test("refusals: authentication, authorization, an unknown topic at the start only", () => {
    const auth = refusalOf(new AuthenticationError("SASL authentication failed."), ["t"], true);
    assert.ok(auth instanceof ClusterRefusedError);
    assert.equal(auth.kind, "authentication");
    const authz = refusalOf(new ProtocolError("TOPIC_AUTHORIZATION_FAILED"), ["t"], false);
    assert.equal(authz?.kind, "authorization");
    assert.deepEqual(authz?.topics, ["t"]);
    assert.equal(refusalOf(new ProtocolError("UNKNOWN_TOPIC_OR_PARTITION"), ["t"], true)?.kind, "unknown-topic");
    assert.equal(refusalOf(new ProtocolError("UNKNOWN_TOPIC_OR_PARTITION"), ["t"], false), undefined);
    assert.equal(refusalOf(new NetworkError("Connection closed"), ["t"], true), undefined);
  });

  test("the client's UserError \"Unknown topic <name>.\" (its metadata answer after its retries) is an unknown-topic refusal naming that topic", () => {
    // Issue 42: it was read as a configuration refusal naming no topic.
    const e = new UserError("Unknown topic orders.");
    assert.equal(unknownTopicOf(e), "orders");
    assert.equal(unknownTopicOf(new MultipleErrors("joinGroup failed.", [e])), "orders");
    assert.equal(unknownTopicOf(new UserError("/options/groupId must be string.")), undefined);
    const r = refusalOf(e, ["payments", "orders"], false);
    assert.equal(r?.kind, "unknown-topic");
    assert.deepEqual(r?.topics, ["orders"]);
    assert.match(r!.message, /topic "orders" does not exist/);
    assert.equal(refusalOf(new UserError("/options/groupId must be string."), ["t"], true)?.kind, "configuration");
  });

  test("a commit not acknowledged names its partitions and codes", () => {
    const e = new CommitNotAcknowledgedError([{ topic: "t", partition: 1, errorCode: 12 }, { topic: "t", partition: 2, errorCode: undefined }]);
    assert.match(e.message, /t\/1 \(error 12\)/);
    assert.match(e.message, /t\/2 \(no answer\)/);
    assert.equal(e.name, "CommitNotAcknowledgedError");
  });
});
