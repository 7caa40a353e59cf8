// Run by test_output.test.ts under node:test, bun test and deno test: two of its three tests
// fail, so that what each runner prints of a failure is read from the real runner.
import assert from "node:assert/strict";
import { describe, it } from "node:test";

describe("a suite", () => {
  it("passes", () => {});
  it("fails an assertion", () => {
    assert.equal(1, 2, "one is not two");
  });
});

it("throws", () => {
  throw new Error("thrown at top level");
});
