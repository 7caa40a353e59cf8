/**
 * Engines head to head, with mitata: 1,000,000 pending records are registered (not
 * measured), then completed in one random permutation order (measured), through the
 * public {@link Tracker}:
 *
 * - `js per-call complete`      `t.complete(h)` per record on the JS engine
 * - `wasm per-call complete`    the same on the WASM engine (one WASM call per record)
 * - `wasm completeMany (1,000)` `t.completeMany(handles.subarray(i, i + 1000))`
 * - `wasm completeMany (all)`   `t.completeMany(handles)` once
 * - `js completeMany (1,000)`   the JS engine's batch path, for reference
 * - `set-watermark`             the usual baseline: `done.add(o); while (done.has(next)) …`
 *
 * Prints mitata's table, then rates (records per second from the median iteration) and
 * the ratios wasm-batch / js-per-call and wasm-per-call / js-per-call of this run; then
 * the same ratios from paired rounds (every row once per round, ratios within a round,
 * median over rounds), which a busy machine's load swings disturb far less.
 *
 *     node --import tsx bench/engines.bench.ts
 *     npx bun bench/engines.bench.ts
 *     npx deno run -A bench/engines.bench.ts
 *
 * Options: `--filter REGEX` (mitata rows to run), `--rounds N` (paired rounds, default 15; 0 skips them).
 *
 * @module
 */
import { bench, run } from "mitata";
import { Tracker } from "../core/mod.ts";
import { cli, intFlag, runtimeName, usageError } from "./cli.ts";

const o = cli(
  "engines.bench",
  `usage: node --import tsx bench/engines.bench.ts [--filter REGEX] [--rounds N]
       (bun bench/engines.bench.ts …, deno run -A bench/engines.bench.ts …)

The engines head to head (mitata), then paired rounds. Prints tables; writes nothing.

  --filter REGEX       mitata rows to run (default all)
  --rounds N           paired rounds (default 15; 0 skips them)
  -h, --help           this text`,
  { filter: { type: "string" }, rounds: { type: "string" } },
);
const FILTER = (() => {
  try {
    return new RegExp(o.filter ?? ".");
  } catch {
    return usageError("engines.bench", `--filter must be a regular expression; got ${JSON.stringify(o.filter)}`);
  }
})();

const N = 1_000_000;
const BATCH = 1_000;
const runtime = runtimeName();

/** xorshift32 Fisher–Yates: the same permutation of 0..n-1 on every runtime. */
function permutation(n: number, seed: number): Float64Array {
  const p = new Float64Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  let s = seed >>> 0 || 1;
  for (let i = n - 1; i > 0; i--) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    const j = (s >>> 0) % (i + 1);
    const x = p[i];
    p[i] = p[j];
    p[j] = x;
  }
  return p;
}

const order = permutation(N, 20_240_601);
const offsets = new Float64Array(N);
for (let i = 0; i < N; i++) offsets[i] = 1_000 + i;

interface Setup {
  t: Tracker;
  handles: Float64Array;
}

/**
 * A fresh tracker per iteration with N pending records, and its handles in completion
 * order. The previous iteration's tracker is checked (everything completed) and revoked
 * first, so the WASM engine reuses the same linear memory every time.
 */
function setup(engine: "js" | "wasm"): () => Setup {
  let last: Tracker | undefined;
  const handles = new Float64Array(N);
  return () => {
    if (last) {
      if (last.safe !== 1_000 + N) throw new Error(`${engine}: safe ${last.safe} after completing everything`);
      last.revoke();
    }
    const t = new Tracker({ start: 1_000, engine, capacity: N });
    if (t.engine !== engine) throw new Error(`engine ${engine} is not available`);
    const first = t.register(offsets, 1_000 + N);
    for (let i = 0; i < N; i++) handles[i] = first + order[i];
    last = t;
    return { t, handles };
  };
}

const ROWS = {
  "js per-call complete": "js-call",
  "wasm per-call complete": "wasm-call",
  [`wasm completeMany (${BATCH.toLocaleString("en")})`]: "wasm-batch",
  "wasm completeMany (all)": "wasm-all",
  [`js completeMany (${BATCH.toLocaleString("en")})`]: "js-batch",
  "set-watermark": "set",
} as const;

function perCall(engine: "js" | "wasm") {
  const make = setup(engine);
  return function* () {
    yield {
      [0]: make,
      bench({ t, handles }: Setup) {
        for (let i = 0; i < N; i++) t.complete(handles[i]);
      },
    };
  };
}

function batched(engine: "js" | "wasm", size: number) {
  const make = setup(engine);
  return function* () {
    yield {
      [0]: make,
      bench({ t, handles }: Setup) {
        for (let i = 0; i < N; i += size) t.completeMany(size >= N ? handles : handles.subarray(i, i + size));
      },
    };
  };
}

bench("js per-call complete", perCall("js"));
bench("wasm per-call complete", perCall("wasm"));
bench(`wasm completeMany (${BATCH.toLocaleString("en")})`, batched("wasm", BATCH));
bench("wasm completeMany (all)", batched("wasm", N));
bench(`js completeMany (${BATCH.toLocaleString("en")})`, batched("js", BATCH));
bench("set-watermark", () => {
  const done = new Set<number>();
  let next = 0;
  for (let i = 0; i < N; i++) {
    done.add(order[i]);
    while (done.has(next)) {
      done.delete(next);
      next++;
    }
  }
  if (next !== N) throw new Error(`set-watermark ended at ${next}`);
});

const { benchmarks } = await run({ filter: FILTER });

const p50 = new Map<string, number>(); // ns per iteration (N records)
for (const trial of benchmarks) {
  const stats = trial.runs[0]?.stats;
  if (stats) p50.set(trial.alias, stats.p50);
}
const rate = (name: string) => N / (p50.get(name)! / 1e9);
const BATCH_ROW = `wasm completeMany (${BATCH.toLocaleString("en")})`;
console.log(`\n${runtime}: ${N.toLocaleString("en")} records per iteration, rate from mitata's median iteration`);
for (const name of Object.keys(ROWS)) {
  if (p50.has(name)) console.log(`  ${name.padEnd(28)} ${(rate(name) / 1e6).toFixed(1).padStart(7)} M records/s`);
}
const js = rate("js per-call complete");
if (p50.has("js per-call complete")) {
  console.log(
    `  ratio wasm completeMany (${BATCH.toLocaleString("en")}) / js per-call: ${
      (rate(BATCH_ROW) / js).toFixed(2)
    }×  (all at once: ${(rate("wasm completeMany (all)") / js).toFixed(2)}×; target ≥ 2)`,
  );
  console.log(
    `  ratio wasm per-call / js per-call: ${(rate("wasm per-call complete") / js).toFixed(2)}×  (target ≥ 0.8)`,
  );
}

// mitata measures one row after the other, so a neighbour's load that comes and goes
// skews the ratios. Paired rounds: each round times one iteration of every row back to
// back (in a rotating order) and the ratios are taken within the round; the median over
// the rounds is what load swings disturb least.
const ROUNDS = o.rounds === undefined ? 15 : intFlag("engines.bench", "rounds", o.rounds, 0);
const paired: Record<string, () => number> = {
  "js per-call complete": timed(setup("js"), ({ t, handles }) => {
    for (let i = 0; i < N; i++) t.complete(handles[i]);
  }),
  "wasm per-call complete": timed(setup("wasm"), ({ t, handles }) => {
    for (let i = 0; i < N; i++) t.complete(handles[i]);
  }),
  [BATCH_ROW]: timed(setup("wasm"), ({ t, handles }) => {
    for (let i = 0; i < N; i += BATCH) t.completeMany(handles.subarray(i, i + BATCH));
  }),
  "wasm completeMany (all)": timed(setup("wasm"), ({ t, handles }) => {
    t.completeMany(handles);
  }),
};

function timed(make: () => Setup, body: (s: Setup) => void): () => number {
  return () => {
    const s = make();
    const t0 = performance.now();
    body(s);
    return performance.now() - t0;
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
if (ROUNDS > 0) {
  const names = Object.keys(paired);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(r + k) % names.length];
      times[name].push(paired[name]());
    }
  }
  const ratio = (name: string) => median(times[name].map((ms, r) => times["js per-call complete"][r] / ms));
  console.log(`\n${runtime}: paired rounds (${ROUNDS}), median rate and median within-round ratio`);
  for (const name of names) {
    console.log(`  ${name.padEnd(28)} ${(N / median(times[name]) / 1e3).toFixed(1).padStart(7)} M records/s`);
  }
  console.log(
    `  ratio wasm completeMany (${BATCH.toLocaleString("en")}) / js per-call: ${
      ratio(BATCH_ROW).toFixed(2)
    }×  (all at once: ${ratio("wasm completeMany (all)").toFixed(2)}×; target ≥ 2)`,
  );
  console.log(`  ratio wasm per-call / js per-call: ${ratio("wasm per-call complete").toFixed(2)}×  (target ≥ 0.8)`);
}
