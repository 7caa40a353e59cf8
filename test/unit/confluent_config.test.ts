// The Confluent binding's consumer config (adapters/confluent/config.ts): auto-commit off
// and the binding's rebalance callback, always; a config that would undo either is refused.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { consumerConfig, resetPolicy, startsEarliest } from "../../adapters/confluent/config.ts";
import { InvalidArgumentError } from "../../core/mod.ts";

const cb = () => Promise.resolve(undefined);

describe("Confluent consumer config", () => {
  test("auto-commit off, the binding's rebalance callback, the user's settings kept", () => {
    const c = consumerConfig({ "group.id": "g", "group.protocol": "consumer" }, undefined, cb);
    assert.equal(c["enable.auto.commit"], false);
    assert.equal(c.rebalance_cb, cb);
    assert.equal(c["group.protocol"], "consumer");
    assert.equal(c["auto.offset.reset"], undefined);
    assert.equal(startsEarliest(c), false);
  });

  test("fromBeginning sets auto.offset.reset unless the config says otherwise", () => {
    assert.equal(consumerConfig({ "group.id": "g" }, true, cb)["auto.offset.reset"], "earliest");
    assert.equal(consumerConfig({ "group.id": "g", "auto.offset.reset": "latest" }, true, cb)["auto.offset.reset"], "latest");
    assert.ok(startsEarliest(consumerConfig({ "group.id": "g" }, true, cb)));
    assert.ok(startsEarliest(consumerConfig({ kafkaJS: { groupId: "g", fromBeginning: true } }, undefined, cb)));
  });

  test("the reset policy a partition without a committed offset starts by", () => {
    assert.equal(resetPolicy({ "group.id": "g" }), "latest"); // librdkafka's default
    for (const r of ["earliest", "smallest", "beginning"]) assert.equal(resetPolicy({ "auto.offset.reset": r }), "earliest");
    for (const r of ["latest", "largest", "end"]) assert.equal(resetPolicy({ "auto.offset.reset": r }), "latest");
    assert.equal(resetPolicy({ "auto.offset.reset": "error" }), undefined);
    assert.equal(resetPolicy({ kafkaJS: { fromBeginning: true } }), "earliest");
  });

  test("refuses auto-commit and a rebalance callback of its own, naming the value", () => {
    assert.throws(() => consumerConfig({ "enable.auto.commit": true }, undefined, cb), (e: unknown) => e instanceof InvalidArgumentError && /enable\.auto\.commit.*true/.test(e.message));
    assert.throws(() => consumerConfig({ kafkaJS: { autoCommit: true } }, undefined, cb), InvalidArgumentError);
    assert.throws(() => consumerConfig({ rebalance_cb: () => {} }, undefined, cb), /rebalance_cb must be absent/);
    assert.throws(() => consumerConfig(null as unknown as Record<string, unknown>, undefined, cb), /got null/);
  });
});
