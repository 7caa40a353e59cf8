// The completed-set check (core/tracker/completed_set/hash.ts): no blind spot. Version 1's
// CRC-32 is linear, so pairs of committed offsets (and partitions) that it cannot tell apart are
// built here by linear algebra and shown to pass it; the version 2 check refuses every one. Then
// a fuzz above 2^32 and near 2^53 − 1: random claims read back where they were written, cut,
// bit-flipped, at other (topic, partition, offset), and random strings — 0 false claims.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { decodeCompletedSet, encodeCompletedSet, type RunsInput } from "../../core/tracker/mod.ts";
import { hashScratch, sha256First32 as moduleSha } from "../../core/tracker/completed_set/hash.ts";
import { ALPHA, boundBytes, crc32, sha256First32, T, v1String } from "./completed_set_spec.ts";

const LIMIT = 2 ** 53;
const reason = (d: ReturnType<typeof decodeCompletedSet>): string => (d.ok ? "" : d.reason);

/** A claim relative to its base: finished flags of [base, base + flags.length). */
interface Claim {
  base: number;
  unfinished: number[]; // sorted offsets
  end: number; // one past the last offset covered by the input
  input: RunsInput;
}

/** The claim of `unfinishedAt` (relative positions) over `span` offsets from `base`. */
function claimAt(base: number, span: number, unfinishedAt: readonly number[]): Claim {
  const end = Math.min(base + span, LIMIT);
  const rel = [...new Set(unfinishedAt)].filter((r) => r < end - base).sort((a, b) => a - b);
  const runs: number[] = [];
  for (const r of rel) {
    if (runs.length > 0 && runs[runs.length - 2] + runs[runs.length - 1] === base + r) runs[runs.length - 1]++;
    else runs.push(base + r, 1);
  }
  return { base, end, unfinished: rel.map((r) => base + r), input: { base, end, runs: Float64Array.from(runs), count: runs.length / 2 } };
}

/**
 * Whether a decoded claim read at (topic, partition, offset) is false for a claim encoded at
 * `at`: read anywhere else, or covering an offset that was unfinished, or any offset ≥ 2^53.
 */
function falseClaim(d: ReturnType<typeof decodeCompletedSet>, c: Claim, at: string, readAt: string): string | undefined {
  if (!d.ok) return undefined;
  if (at !== readAt) return `written at ${at}, accepted at ${readAt}`;
  if (d.set.end > LIMIT || d.set.isFinished(LIMIT)) return `claims past 2^53 (end ${d.set.end})`;
  if (d.set.end > c.end) return `claims up to ${d.set.end}, past ${c.end}`;
  for (const o of c.unfinished) if (d.set.isFinished(o)) return `claims unfinished ${o}`;
  return undefined;
}

// ---- version 1's blind spots, by linear algebra over GF(2) ------------------------------------

/** A kernel basis of the columns (32-bit vectors): each element a bitmask (bigint) of columns XOR-ing to 0. */
function kernel(columns: readonly number[]): bigint[] {
  const pivots: { bit: number; v: number; comb: bigint }[] = [];
  const out: bigint[] = [];
  columns.forEach((c, j) => {
    let v = c >>> 0, comb = 1n << BigInt(j);
    for (const p of pivots) if ((v >>> p.bit) & 1) (v = (v ^ p.v) >>> 0), (comb ^= p.comb);
    if (v === 0) out.push(comb);
    else pivots.push({ bit: 31 - Math.clz32(v), v, comb });
  });
  return out;
}

/** Version 1's CRC-32 of a bitmap `payload` at ("t", partition, base), as `v1String` computes it. */
const v1Check = (partition: number, b: number, payload: string): number => {
  let n = 1;
  while (T(n) < payload.length + 32) n++;
  return crc32(boundBytes(1, n, "t", partition, b, payload.padEnd(T(n) - 32, "0")));
};

/** Columns: what flipping partition bit j (j < 31) or offset bit j − 31 does to version 1's check. */
const columns = (payload: string): number[] => {
  const zero = v1Check(0, 0, payload);
  const cols: number[] = [];
  for (let j = 0; j < 31; j++) cols.push((v1Check(2 ** j, 0, payload) ^ zero) >>> 0);
  for (let j = 0; j < 53; j++) cols.push((v1Check(0, 2 ** j, payload) ^ zero) >>> 0);
  return cols;
};

describe("completed-set check: no linear blind spot", () => {
  test("SHA-256 in TypeScript agrees with the runtime's own, for every padding case", () => {
    for (let length = 0; length < 200; length++) {
      const bytes = Array.from({ length }, (_, i) => (i * 131 + length * 7) & 255);
      const buf = hashScratch(length);
      buf.set(bytes);
      assert.equal(moduleSha(buf, length), sha256First32(bytes), `length ${length}`);
    }
    const big = Array.from({ length: 70_000 }, (_, i) => (i * 2654435761) >>> 24);
    const buf = hashScratch(big.length);
    buf.set(big);
    assert.equal(moduleSha(buf, big.length), sha256First32(big));
  });

  test("the issue's pair: version 1 wrote \"7v)tC]\" at 68535781517 and it verified at 2^36; version 2 refuses both", () => {
    const x = 68535781517, y = 68719476736; // x XOR y lies in version 1's blind spot
    assert.equal(v1String(1, "01", "t", 0, x), "7v)tC]", "version 1 (the spec) wrote this");
    assert.equal(v1String(1, "01", "t", 0, y), "7v)tC]", "and its check passes at y: claims y + 1, never finished");
    assert.match(reason(decodeCompletedSet("t", 0, y, "7v)tC]")), /version 1.*no longer trusted/);
    assert.match(reason(decodeCompletedSet("t", 0, x, "7v)tC]")), /version 1.*no longer trusted/, "even where it was written");
    const e = encodeCompletedSet("t", 0, { base: x, end: x + 2, runs: new Float64Array([x, 1]), count: 1 });
    assert.ok(e);
    assert.equal(e.metadata.length, 6, "the same length: the check is still 32 bits");
    assert.ok(decodeCompletedSet("t", 0, x, e.metadata).ok);
    assert.match(reason(decodeCompletedSet("t", 0, y, e.metadata)), /check mismatch/);
  });

  test("constructed pairs that pass version 1's CRC-32 (offsets, and partition with offset) all fail version 2's check", () => {
    const rand = fc.sample(fc.bigInt({ min: 0n, max: (1n << 84n) - 1n }), { numRuns: 4000, seed: 31 });
    let pairs = 0, passedV1 = 0;
    const payloads = ["01", "1", "0110011111", "1" + "0".repeat(12) + "1000", "10".repeat(40)];
    for (const payload of payloads) {
      const basis = kernel(columns(payload));
      assert.ok(basis.length >= 52, `84 columns onto 32 bits: a kernel of dimension ${basis.length}`);
      const offsetOnly = kernel(columns(payload).slice(31));
      assert.equal(offsetOnly.length, 21, "offsets alone: 53 bits onto 32, the issue's 21 dimensions");
      // offsets below 2^32 are safe from it: CRC-32 tells every burst of ≤ 32 bits
      assert.equal(kernel(columns(payload).slice(31, 63)).length, 0);
      for (let k = 0; k < 120; k++) {
        const r = rand[(pairs * 7 + k) % rand.length];
        const space = k % 2 === 0 ? offsetOnly.map((v) => v << 31n) : basis;
        let d = 0n;
        space.forEach((v, i) => (((r >> BigInt(i)) & 1n) === 1n ? (d ^= v) : 0n));
        if (d === 0n) continue;
        const dp = Number(d & 0x7fffffffn), dx = d >> 31n;
        const x = Number(r % (1n << 53n)), p = Number((r >> 53n) % 1000n);
        const y = Number(BigInt(x) ^ dx), q = p ^ dp;
        // version 1's check cannot tell (p, x) from (q, y): the very same string
        assert.equal(v1String(1, payload, "t", q, y), v1String(1, payload, "t", p, x), `${p}@${x} and ${q}@${y}`);
        passedV1++;
        // version 2: the same claim written at (p, x), read at (q, y)
        const span = payload.length;
        const unfinished = [...payload].flatMap((c, i) => (c === "0" ? [i] : []));
        if (span > LIMIT - x) continue;
        const c = claimAt(x, span, unfinished);
        const e = encodeCompletedSet("t", p, c.input);
        assert.ok(e, `payload ${payload} at ${x}`);
        assert.ok(decodeCompletedSet("t", p, x, e.metadata).ok, `read where written: ${p}@${x}`);
        const d2 = decodeCompletedSet("t", q, y, e.metadata);
        assert.equal(falseClaim(d2, c, `${p}@${x}`, `${q}@${y}`), undefined);
        pairs++;
      }
    }
    assert.ok(pairs >= 276 && passedV1 >= pairs, `${pairs} pairs (${passedV1} passing version 1), all refused`);
  });
});

// ---- fuzz: above 2^32 and near 2^53 − 1 ---------------------------------------------------------

/** Committed offsets: above 2^32, around 2^32, and within a few of 2^53 − 1. */
const offsetArb = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 2 ** 32, max: LIMIT - 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 2 ** 32 - 8, max: 2 ** 32 + 8 }) },
  { weight: 3, arbitrary: fc.integer({ min: LIMIT - 8, max: LIMIT - 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: LIMIT - 5000, max: LIMIT - 1 }) },
);

/** A random claim: its span (small, or up to 2^40 for long finished runs) and a few unfinished positions. */
const claimArb = fc
  .tuple(offsetArb, fc.oneof(fc.integer({ min: 1, max: 3000 }), fc.integer({ min: 1, max: 2 ** 40 })), fc.array(fc.nat(3000), { maxLength: 200 }))
  .map(([b, span, rel]) => claimAt(b, span, rel));

const TOPICS = ["orders", "orders.v2", "Orders", "ordres", "t", "", "заказы"];

/** Bindings that are not (topic, partition, base): mispairings an unlucky world produces. */
function otherBindings(topic: string, partition: number, b: number, k: number): [string, number, number][] {
  const near = [1, 2, 3, 64, 2 ** 32, 2 ** 32 + 1, 2 ** (32 + (k % 21))];
  const out: [string, number, number][] = [
    [TOPICS[(TOPICS.indexOf(topic) + 1 + (k % (TOPICS.length - 1))) % TOPICS.length], partition, b], // a string copied from another topic
    [topic, partition ^ (1 << (k % 31)), b], // from another partition
    [topic, partition + 1, b],
    [topic, partition, 0], // an offset reset to the earliest
    [topic, partition, LIMIT - 1 - (k % 4)], // or to near the top
    [topic, (partition + 3) % 2 ** 31, b === LIMIT - 1 ? b - 1 : b + 1],
  ];
  for (const d of near) {
    if (b + d < LIMIT) out.push([topic, partition, b + d]);
    if (b - d >= 0) out.push([topic, partition, b - d]);
    const x = Number(BigInt(b) ^ BigInt(d)); // a difference in one high bit
    if (x < LIMIT && x !== b) out.push([topic, partition, x]);
  }
  return out.filter(([t, p, o]) => !(t === topic && p === partition && o === b));
}

describe("completed-set check: fuzz above 2^32 and near 2^53 − 1", () => {
  test("read where written: only finished offsets, none ≥ 2^53; read anywhere else, cut or flipped: refused", () => {
    let falseClaims = 0, refused = 0, read = 0;
    const failures: string[] = [];
    fc.assert(
      fc.property(claimArb, fc.constantFrom(...TOPICS), fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.nat(), fc.nat(), (c, topic, partition, k, budget) => {
        const e = encodeCompletedSet(topic, partition, c.input, { budget: 16 + (budget % 4081) });
        if (e === undefined) return;
        const at = `${topic}/${partition}@${c.base}`;
        const tally = (d: ReturnType<typeof decodeCompletedSet>, readAt: string): void => {
          const f = falseClaim(d, c, at, readAt);
          if (f !== undefined) falseClaims++, failures.push(f);
          if (d.ok) read++;
          else refused++;
        };
        tally(decodeCompletedSet(topic, partition, c.base, e.metadata), at);
        tally(decodeCompletedSet(topic, partition, String(c.base), e.metadata), at);
        for (const [t, p, o] of otherBindings(topic, partition, c.base, k)) tally(decodeCompletedSet(t, p, o, e.metadata), `${t}/${p}@${o}`);
        const s = e.metadata;
        for (let cut = 0; cut < s.length; cut += 1 + (k % 3)) tally(decodeCompletedSet(topic, partition, c.base, s.slice(0, cut)), `cut to ${cut}`);
        for (let j = 0; j < 6; j++) {
          const i = (k + 31 * j) % s.length;
          const flipped = s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ (1 << (j % 7))) + s.slice(i + 1);
          if (flipped !== s) tally(decodeCompletedSet(topic, partition, c.base, flipped), `flipped at ${i}`);
          const replaced = s.slice(0, i) + ALPHA[(k + j) % 91] + s.slice(i + 1);
          if (replaced !== s) tally(decodeCompletedSet(topic, partition, c.base, replaced), `replaced at ${i}`);
        }
      }),
      { numRuns: 400 },
    );
    assert.equal(falseClaims, 0, failures.slice(0, 5).join("; "));
    assert.ok(read >= 400 && refused > 10 * read, `${read} read where written, ${refused} refused`);
  });

  test("random strings that open with a version 2 marker, at offsets near 2^53: refused, never thrown", () => {
    const marked = fc.tuple(fc.integer({ min: 32, max: 63 }), fc.array(fc.integer({ min: 0, max: 90 }), { minLength: 0, maxLength: 700 }))
      .map(([c0, rest]) => ALPHA[c0] + rest.map((i) => ALPHA[i]).join(""));
    let refused = 0;
    fc.assert(
      fc.property(marked, offsetArb, fc.constantFrom(...TOPICS), fc.nat(2 ** 31 - 1), (m, b, topic, partition) => {
        const d = decodeCompletedSet(topic, partition, b, m);
        assert.equal(d.ok, false, `accepted ${JSON.stringify(m)} at ${b}`);
        refused++;
      }),
      { numRuns: 3000 },
    );
    assert.equal(refused, 3000);
  });

  test("version 1 strings, at any offset: refused with a reason that says so, whatever their claim", () => {
    fc.assert(
      fc.property(offsetArb, fc.array(fc.boolean(), { minLength: 1, maxLength: 400 }), fc.boolean(), (b, bits, asRuns) => {
        const payload = asRuns ? "1" + "0".repeat(12) + bits.map((x) => (x ? "1" : "01")).join("") : bits.map((x) => (x ? "1" : "0")).join("");
        const m = v1String(asRuns ? 0 : 1, payload, "t", 0, b);
        assert.match(reason(decodeCompletedSet("t", 0, b, m)), /format version 1 \(CRC-32 check\) is no longer trusted/);
      }),
      { numRuns: 300 },
    );
  });
});
