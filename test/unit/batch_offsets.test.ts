// The bindings' batch offsets: the dense shortcut and the general parse give the same numbers.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { batchOffsets } from "../../adapters/shared/batch_offsets.ts";

const of = (...offsets: string[]) => offsets.map((offset) => ({ offset }));

describe("batchOffsets", () => {
  test("an empty batch", () => assert.deepEqual([...batchOffsets([])], []));
  test("a dense batch", () => assert.deepEqual([...batchOffsets(of("41", "42", "43"))], [41, 42, 43]));
  test("a batch with gaps (compaction, transaction markers) is parsed record by record", () => {
    assert.deepEqual([...batchOffsets(of("5", "9", "10", "12"))], [5, 9, 10, 12]);
  });
  test("offsets past 2^53 are not shortcut: the tracker sees the unsafe value and refuses it", () => {
    const big = "9007199254740993";
    const out = batchOffsets(of(big, "9007199254740994"));
    assert.equal(out.length, 2);
    assert.ok(!Number.isSafeInteger(out[0]));
  });
});
