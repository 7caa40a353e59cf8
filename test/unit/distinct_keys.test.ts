// The batch handler's no-key-twice check (core/consumer/dispatch/distinct_keys.ts): it answers exactly
// "no key twice in the run", whatever the hash: with the string fallback, with a binding's
// byte hash, and with hashes that collide on purpose (every key one hash, a few hashes for
// many keys, a hash that ignores most of the key), so a collision can never admit a key twice
// nor cut a run that holds none. Also the bindings' byte hash against their keyOf.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { describe, test } from "node:test";
import fc from "fast-check";
import { DistinctKeys, hashString, type KeyHashOf, type KeyReader } from "../../core/consumer/dispatch/distinct_keys.ts";
import { keyBytesHash } from "../../adapters/shared/key_hash.ts";
import { ParallelConsumer } from "../../core/mod.ts";
import { MemoryClient, type Msg, range, until } from "./runner_client.ts";

/** A record as the bindings hand it over: the key as bytes (`null`: none). */
interface Rec {
  key: Buffer | null;
}

const keyOf = (m: Rec): string | undefined => (m.key === null ? undefined : m.key.toString("latin1"));

/** The reference answer: no key (keyOf) twice among `msgs[from .. from + n)`. */
function reference(msgs: readonly Rec[], from: number, n: number): boolean {
  const seen = new Set<string>();
  for (let j = from; j < from + n; j++) {
    const k = keyOf(msgs[j]);
    if (k === undefined) continue;
    if (seen.has(k)) return false;
    seen.add(k);
  }
  return true;
}

/** A reader of `Rec` keys with `hashOf` as its keyHashOf (none: the check hashes keyOf's strings). */
const reader = (hashOf: KeyHashOf<Rec> | undefined): KeyReader<Rec> => (hashOf === undefined ? { keyOf } : { keyOf, keyHashOf: hashOf });

/** Hashes that collide on purpose, each equal for equal keys (as the port asks). */
const HASHES: Record<string, KeyHashOf<Rec> | undefined> = {
  "keyOf strings (no binding hash)": undefined,
  "the bindings' byte hash": (m) => keyBytesHash(m.key),
  "every key one hash": (m) => (m.key === null ? undefined : 7),
  "three hashes": (m) => (m.key === null ? undefined : m.key.length % 3),
  "the first byte only": (m) => (m.key === null ? undefined : m.key.length === 0 ? -1 : m.key[0]),
  "hashes past 2^31": (m) => (m.key === null ? undefined : 0x80000000 + (m.key.length % 2)),
};

const recArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant<Rec>({ key: null }) },
  // few distinct small keys, so that runs often hold a key twice; an empty key is a key
  { weight: 6, arbitrary: fc.uint8Array({ minLength: 0, maxLength: 3, max: 3 }).map((b): Rec => ({ key: Buffer.from(b) })) },
);

describe("distinct keys", () => {
  for (const [name, hashOf] of Object.entries(HASHES)) {
    test(`property: exactly "no key twice" for any run, ${name}`, () => {
      fc.assert(
        fc.property(
          fc.array(fc.array(recArb, { minLength: 0, maxLength: 70 }), { minLength: 1, maxLength: 6 }),
          fc.nat(),
          (runs, pick) => {
            const check = new DistinctKeys<Rec>(reader(hashOf));
            // One checker over runs of different lengths (the table grows; stamps keep checks apart).
            for (const msgs of runs) {
              const from = msgs.length === 0 ? 0 : pick % msgs.length;
              for (const [f, n] of [[0, msgs.length], [from, msgs.length - from], [from, Math.min(16, msgs.length - from)]]) {
                assert.equal(check.check(msgs, f, n), reference(msgs, f, n), `run of ${n} at ${f}: ${msgs.map((m) => keyOf(m) ?? "-").join(",")}`);
              }
            }
          },
        ),
        { numRuns: 300 },
      );
    });
  }

  test("a collision never admits a key twice: same bytes behind every hash, at every position of a run", () => {
    for (const [name, hashOf] of Object.entries(HASHES)) {
      const check = new DistinctKeys<Rec>(reader(hashOf));
      for (let n = 2; n <= 40; n++) {
        const msgs = range(0, n).map((i): Rec => ({ key: Buffer.from(`key-${i}`) }));
        assert.equal(check.check(msgs, 0, n), true, `${name}: ${n} distinct keys`);
        for (const [a, b] of [[0, n - 1], [(n - 1) >> 1, n - 1], [0, 1], [n - 2, n - 1]]) {
          if (a === b) continue;
          const dup = msgs.slice();
          dup[b] = { key: Buffer.from(`key-${a}`) }; // a new Buffer, same bytes
          assert.equal(check.check(dup, 0, n), false, `${name}: key of ${a} again at ${b} of ${n}`);
        }
      }
    }
  });

  test("records without a key never clash; runs of 0 and 1 hold no key twice", () => {
    const check = new DistinctKeys<Rec>(reader((m) => keyBytesHash(m.key)));
    assert.equal(check.check(range(0, 20).map(() => ({ key: null })), 0, 20), true);
    assert.equal(check.check([], 0, 0), true);
    assert.equal(check.check([{ key: Buffer.from("a") }], 0, 1), true);
  });

  test("the bindings' byte hash: equal for equal keyOf strings, undefined exactly without a key, a 32-bit integer", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const a = Buffer.from(bytes), b = Buffer.from(Buffer.from(bytes).toString("latin1"), "latin1");
        const h = keyBytesHash(a)!;
        assert.equal(h, keyBytesHash(b));
        assert.ok(Number.isInteger(h) && h >= -(2 ** 31) && h < 2 ** 31);
        // a slice of a larger buffer (as KafkaJS hands keys over) hashes its own bytes only
        const big = Buffer.concat([Buffer.from([9, 9]), a, Buffer.from([7])]);
        assert.equal(keyBytesHash(big.subarray(2, 2 + a.length)), h);
      }),
    );
    assert.equal(keyBytesHash(null), undefined);
    assert.equal(keyBytesHash(undefined), undefined);
    assert.notEqual(keyBytesHash(Buffer.alloc(0)), undefined, "an empty key is a key");
    assert.equal(hashString("k1"), hashString(`k${1}`));
  });

  test("the consumer uses a client's keyHashOf: a hash that maps every key to one value still keeps keys apart", async () => {
    // Every key one hash: each batch check compares keys exactly; batches still never hold a key twice.
    class OneHashClient extends MemoryClient {
      hashed = 0;
      keyHashOf(m: Msg): number | undefined {
        this.hashed++;
        return m.key === undefined ? undefined : 1;
      }
    }
    const client = new OneHashClient();
    const batches: string[][] = [];
    const c = new ParallelConsumer<Msg>(client, {
      engine: "js",
      ordering: "key",
      concurrency: 8,
      batch: {
        maxRecords: 4,
        maxWaitMs: 1,
        handler: (messages) => {
          batches.push(messages.map((m) => m.key ?? "-"));
        },
      },
    });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    const keys = ["a", "b", "c", "d", "e", "a", "f", "g", "h", "i", "j", "k", "k", "l", "m", "n"];
    client.deliver("t", 0, range(0, keys.length), undefined, (o) => keys[o]);
    await until(() => c.metrics().completed === keys.length, 5_000, "every record");
    await c.shutdown();
    assert.ok(client.hashed > 0, "the check read keyHashOf");
    for (const b of batches) assert.equal(new Set(b).size, b.length, `no key twice in ${b.join(",")}`);
    assert.deepEqual(batches[0], ["a", "b", "c", "d"], "distinct keys: a whole batch ran directly");
    assert.deepEqual(batches.flat().sort(), [...keys].sort(), "every record ran once");
  });
});
