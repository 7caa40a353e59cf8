// The @platformatic/kafka binding's transaction steps that need no broker (built with the
// client's own error classes): which answers mean "fenced", and output records as the
// client's messages.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { describe, test } from "node:test";
import { MultipleErrors, ProtocolError, ResponseError } from "@platformatic/kafka";
import { isFenced, StaleGenerationError, toPlatformaticMessage } from "../../adapters/platformatic/transaction_steps.ts";

describe("platformatic binding: transaction steps", () => {
  test("a newer producer epoch and a group that no longer has this member in this generation are fencing, also inside aggregates", () => {
    for (const id of ["PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID", "FENCED_INSTANCE_ID"]) {
      assert.ok(isFenced(new ProtocolError(id)), id);
    }
    // TxnOffsetCommit's per-partition refusal (code 22: ILLEGAL_GENERATION), under the retry wrapper.
    const refused = new ResponseError(28, 4, { "/topics/0/partitions/0": [22, null] }, { topics: [] });
    assert.ok(isFenced(new MultipleErrors("commit failed 1 times.", [refused])));
    assert.ok(!isFenced(new ProtocolError("CONCURRENT_TRANSACTIONS")));
    assert.ok(!isFenced(new ProtocolError("MESSAGE_TOO_LARGE")));
    assert.ok(!isFenced(new Error("anything else")));
    // offsets of an assignment that is no longer the client's generation: the binding's own ILLEGAL_GENERATION
    assert.ok(isFenced(new StaleGenerationError("the offsets of t/0")));
    assert.ok(isFenced(new Error("wrapped", { cause: new StaleGenerationError("the offsets of t/0") })));
    assert.ok(!isFenced(undefined));
  });

  test("an output record as the client's message: bytes as Buffers, no key or value for null, the timestamp as a bigint", () => {
    const m = toPlatformaticMessage({ topic: "out", partition: 2, key: null, value: new Uint8Array([1, 2, 3]), headers: { a: "x", b: new Uint8Array([9]) }, timestamp: "1700000000000" });
    assert.equal(m.topic, "out");
    assert.equal(m.partition, 2);
    assert.equal("key" in m, false);
    assert.deepEqual(m.value, Buffer.from([1, 2, 3]));
    assert.deepEqual([...m.headers!].map(([k, v]) => [k.toString(), [...v]]), [["a", [120]], ["b", [9]]]);
    assert.equal(m.timestamp, 1_700_000_000_000n);
    const plain = toPlatformaticMessage({ topic: "out", key: "k", value: null });
    assert.deepEqual(plain, { topic: "out", key: Buffer.from("k") });
  });
});
