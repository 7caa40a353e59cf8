import assert from "node:assert/strict";
import { test } from "node:test";
import { fromStored, toStored } from "../../adapters/shared/stored_metadata.ts";

test("stored metadata: one NUL after the string, dropped when read back", () => {
  assert.equal(toStored("abc"), "abc\u0000");
  assert.equal(toStored(""), "\u0000");
  assert.equal(toStored(undefined), undefined);
  assert.equal(fromStored("abc\u0000"), "abc"); // what every binding (and Confluent's client) stores
  assert.equal(fromStored("abc"), "abc"); // stored without the NUL (older versions, other clients): unchanged
  assert.equal(fromStored("abc\u0000\u0000"), "abc\u0000"); // only one is ours
  assert.equal(fromStored(null), null);
  assert.equal(fromStored(undefined), undefined);
  for (const s of ["", "x", "ZxFs<cx]L", "a\u0000b"]) assert.equal(fromStored(toStored(s)), s);
});
