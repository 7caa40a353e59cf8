// The @platformatic/kafka binding's pure parts: read_committed by Kafka's own rule over a
// fetch's aborted-transaction list, the delivered batch assembled from raw record batches,
// and the OffsetCommit answer checked partition by partition.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CONTROL_BATCH, deliverableBatches, TRANSACTIONAL_BATCH } from "../../adapters/platformatic/aborted_filter.ts";
import { assembleBatch, type RawBatch } from "../../adapters/platformatic/batch_assembly.ts";
import { commitFailures } from "../../adapters/platformatic/commit_response.ts";

const A = 7n, B = 8n, NONE = -1n;

/** A data batch of `count` records from `first` (transactional when the producer is not NONE). */
function data(producerId: bigint, first: number, count = 1): RawBatch {
  return {
    firstOffset: BigInt(first),
    lastOffsetDelta: count - 1,
    producerId,
    attributes: producerId === NONE ? 0 : TRANSACTIONAL_BATCH,
    firstTimestamp: 1_000n,
    records: Array.from({ length: count }, (_, i) => ({
      offsetDelta: i,
      timestampDelta: BigInt(i),
      key: null,
      value: new TextEncoder().encode(`${first + i}`),
      headers: [],
    })),
  };
}

/** A transaction marker at `offset`: ABORT (type 0) or COMMIT (type 1). */
function marker(producerId: bigint, offset: number, type: "abort" | "commit"): RawBatch {
  const key = new Uint8Array([0, 0, 0, type === "abort" ? 0 : 1]);
  return {
    firstOffset: BigInt(offset),
    lastOffsetDelta: 0,
    producerId,
    attributes: TRANSACTIONAL_BATCH | CONTROL_BATCH,
    firstTimestamp: 1_000n,
    records: [{ offsetDelta: 0, timestampDelta: 0n, key, value: new Uint8Array(6), headers: [] }],
  };
}

const offsetsOf = (batches: RawBatch[], aborted: Array<{ producerId: bigint; firstOffset: bigint }>, readCommitted = true, from = 0) =>
  Array.from(assembleBatch("t", 0, from, batches, aborted, readCommitted, (_b, _r, o) => o)?.offsets ?? []);

describe("read_committed (platformatic binding)", () => {
  test("interleaved aborted transactions listed in the order they ended: none of their records is delivered", () => {
    // A begins at 10, B at 12, B aborts (14), A goes on (15) and aborts (16); 17 is plain.
    const batches = [data(A, 10, 2), data(B, 12, 2), marker(B, 14, "abort"), data(A, 15), marker(A, 16, "abort"), data(NONE, 17)];
    const endedOrder = [{ producerId: B, firstOffset: 12n }, { producerId: A, firstOffset: 10n }];
    assert.deepEqual(offsetsOf(batches, endedOrder), [17]);
    assert.deepEqual(deliverableBatches(batches, endedOrder), [false, false, false, false, false, true]);
  });

  test("two aborted transactions of one producer around a committed one: only the committed records", () => {
    const batches = [data(A, 0, 2), marker(A, 2, "abort"), data(A, 3, 2), marker(A, 5, "commit"), data(A, 6, 2), marker(A, 8, "abort")];
    const aborted = [{ producerId: A, firstOffset: 0n }, { producerId: A, firstOffset: 6n }];
    assert.deepEqual(offsetsOf(batches, aborted), [3, 4]);
  });

  test("an aborted transaction whose marker is past this fetch: its records are still aborted", () => {
    const batches = [data(NONE, 0), data(B, 1, 3)];
    assert.deepEqual(offsetsOf(batches, [{ producerId: B, firstOffset: 1n }]), [0]);
  });

  test("a committed transaction next to another producer's aborted one is delivered whole", () => {
    const batches = [data(A, 0, 2), data(B, 2, 2), marker(B, 4, "abort"), marker(A, 5, "commit")];
    assert.deepEqual(offsetsOf(batches, [{ producerId: B, firstOffset: 2n }]), [0, 1]);
  });

  test("read_uncommitted delivers aborted records; control records are never delivered", () => {
    const batches = [data(A, 0, 2), marker(A, 2, "abort"), data(NONE, 3)];
    assert.deepEqual(offsetsOf(batches, [{ producerId: A, firstOffset: 0n }], false), [0, 1, 3]);
  });
});

describe("batch assembly (platformatic binding)", () => {
  test("next passes trailing control and aborted batches", () => {
    const b = assembleBatch("t", 2, 0, [data(NONE, 0, 3), data(A, 3, 2), marker(A, 5, "abort")], [{ producerId: A, firstOffset: 3n }], true, (_b, _r, o) => o);
    assert.ok(b);
    assert.deepEqual(Array.from(b.offsets), [0, 1, 2]);
    assert.equal(b.next, 6);
    assert.equal(b.topic, "t");
    assert.equal(b.partition, 2);
  });

  test("records below the fetch position (a compressed batch starts earlier) are left out", () => {
    assert.deepEqual(offsetsOf([data(NONE, 10, 5)], [], true, 12), [12, 13, 14]);
  });

  test("a fetch of only control records is an empty batch that moves the position", () => {
    const b = assembleBatch("t", 0, 5, [marker(A, 5, "commit")], [], true, (_b, _r, o) => o);
    assert.ok(b);
    assert.equal(b.messages.length, 0);
    assert.equal(b.next, 6);
  });

  test("nothing fetched, or nothing at or past the position: no batch", () => {
    assert.equal(assembleBatch("t", 0, 0, [], [], true, (_b, _r, o) => o), undefined);
    assert.equal(assembleBatch("t", 0, 0, null, null, true, (_b, _r, o) => o), undefined);
    assert.equal(assembleBatch("t", 0, 10, [data(NONE, 5, 5)], [], true, (_b, _r, o) => o), undefined);
  });

  test("messages are made from the record, its batch and its offset", () => {
    const b = assembleBatch("t", 0, 0, [data(NONE, 4, 2)], [], true, (batch, r, o) => `${o}@${batch.firstTimestamp + r.timestampDelta}`);
    assert.deepEqual(b?.messages, ["4@1000", "5@1001"]);
  });
});

describe("OffsetCommit answer (platformatic binding)", () => {
  const sent = [{ topic: "a", partition: 0 }, { topic: "a", partition: 1 }, { topic: "b", partition: 0 }];
  test("every partition answered 0: acknowledged", () => {
    const answer = { topics: [{ name: "a", partitions: [{ partitionIndex: 0, errorCode: 0 }, { partitionIndex: 1, errorCode: 0 }] }, { name: "b", partitions: [{ partitionIndex: 0, errorCode: 0 }] }] };
    assert.deepEqual(commitFailures(sent, answer), []);
  });
  test("a partition with an error code fails, naming the code", () => {
    const answer = { topics: [{ name: "a", partitions: [{ partitionIndex: 0, errorCode: 0 }, { partitionIndex: 1, errorCode: 12 }] }, { name: "b", partitions: [{ partitionIndex: 0, errorCode: 0 }] }] };
    assert.deepEqual(commitFailures(sent, answer), [{ topic: "a", partition: 1, errorCode: 12 }]);
  });
  test("a partition the answer does not name is not acknowledged", () => {
    const answer = { topics: [{ name: "a", partitions: [{ partitionIndex: 0, errorCode: 0 }] }] };
    assert.deepEqual(commitFailures(sent, answer), [{ topic: "a", partition: 1, errorCode: undefined }, { topic: "b", partition: 0, errorCode: undefined }]);
  });
  test("no answer at all: nothing is acknowledged", () => {
    assert.equal(commitFailures(sent, undefined).length, 3);
  });
});
