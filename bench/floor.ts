/**
 * How close per-call completion is to its floor on this runtime. The `random` scenario
 * (1,000,000 records, completed in a random permutation, one `complete(handle)` call
 * each) is run on:
 *
 * - `tracker`: the library's {@link Tracker} on the JS engine, as the `js` row;
 * - `floor`: the least a per-call bitmap tracker does — a class with a fixed ring, no
 *   validation, no counters, no summary level and a bit-by-bit head advance — handed the
 *   same handles (2^32-scale numbers: the tracker's tag × 2^32 + seq, which keep a
 *   revoked tracker's handles from ever being accepted by another tracker);
 * - `floor-small`: the same class with handles counted from 0 (small integers, which
 *   JITs keep in integer registers; such handles cannot carry a tracker tag).
 *
 * Each subject runs alone in its own process (a loop that has seen two classes is
 * slower for both), and the subjects take turns for `--rounds` rounds (default 3), so
 * the machine's slow and fast phases fall on all of them; the median round counts.
 * The rates count completions only; the tracker's registration time is printed apart
 * (the floor classes validate nothing, so theirs is not comparable).
 *
 *     node --import tsx bench/floor.ts
 *     npx bun bench/floor.ts
 *     npx deno run -A bench/floor.ts
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Tracker } from "../core/mod.ts";
import { cli, intFlag, runtimeName, usageError } from "./cli.ts";
import { BATCH, feed } from "./data.ts";
import { median, now, permutation, Rng } from "./measure.ts";

const SUBJECTS = ["tracker", "floor", "floor-small"] as const;
type SubjectName = (typeof SUBJECTS)[number];
const N = 1_000_000;
const MS = 2_500; // timed passes per process

/** The least per-call tracker: a fixed ring of bits, the bit set per call, a bit-by-bit head advance. */
class Floor {
  #base: number;
  #lo: number;
  #head = 0;
  #issued = 0;
  #len = 0;
  #hp = 0;
  #mask = (1 << 20) - 1;
  #bits = new Int32Array(1 << 15);

  constructor(base: number) {
    this.#base = base;
    this.#lo = base;
  }

  register(offsets: Float64Array): number {
    const first = this.#base + this.#issued;
    this.#issued += offsets.length;
    this.#len += offsets.length;
    return first;
  }

  complete(handle: number): number {
    const d = handle - this.#lo;
    const u = d | 0;
    if (u !== d || u < 0 || u >= this.#len) return 0;
    const p = (this.#hp + u) & this.#mask;
    const w = p >>> 5;
    const bit = 1 << (p & 31);
    const x = this.#bits[w];
    if ((x & bit) !== 0) return 1;
    this.#bits[w] = x | bit;
    if (u !== 0) return 2;
    this.#advance();
    return 3;
  }

  // Out of complete(): inlined there, this rare block made the loop ~3× slower on Bun (23 vs 8 ns per call).
  #advance(): void {
    let h = this.#head;
    while (h < this.#issued && (this.#bits[(h & this.#mask) >>> 5] & (1 << (h & 31))) !== 0) h++;
    this.#len -= h - this.#head;
    this.#head = h;
    this.#lo = this.#base + h;
    this.#hp = h & this.#mask;
  }

  get done(): boolean {
    return this.#head === this.#issued;
  }
}

/** Child: runs one subject for {@link MS} and prints its median completion time. */
function child(name: SubjectName): void {
  const f = feed(N, "dense");
  const order = permutation(N, new Rng(7));
  const times: number[] = [], registering: number[] = [];
  const start = now();
  for (let pass = 0; now() - start < MS; pass++) {
    const t = name === "tracker" ? new Tracker({ engine: "js", start: 0, capacity: 1 << 26 }) : new Floor(name === "floor" ? 2 ** 33 : 0);
    let first = 0;
    const r0 = now();
    for (let b = 0; b < f.batches.length; b++) {
      const h = t.register(f.batches[b], f.nexts[b]);
      if (b === 0) first = h;
    }
    const t0 = now();
    for (let j = 0; j < N; j++) t.complete(first + order[j]);
    const ms = now() - t0;
    const done = t instanceof Tracker ? t.safe === f.end : t.done;
    if (!done) throw new Error(`${name}: not every record completed`);
    if (pass >= 5) { // the first passes compile the loop
      times.push(ms);
      registering.push(t0 - r0);
    }
  }
  console.log(JSON.stringify({ name, ms: median(times), registerMs: median(registering), passes: times.length }));
}

const runtime = runtimeName();

/** The command that runs this file as a child on the current runtime. */
function selfCommand(name: SubjectName): string[] {
  const file = fileURLToPath(import.meta.url);
  const tail = [file, "--subject", name];
  if (runtime === "bun") return [process.execPath, ...tail];
  if (runtime === "deno") return [process.execPath, "run", "-A", ...tail];
  return [process.execPath, "--import", "tsx", ...tail];
}

function parent(rounds: number): void {
  const results = new Map<SubjectName, number[]>(SUBJECTS.map((s) => [s, []]));
  const registering: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const name of SUBJECTS) {
      const [cmd, ...args] = selfCommand(name);
      const out = spawnSync(cmd, args, { encoding: "utf8" });
      if (out.status !== 0) throw new Error(`${name} failed: ${out.stderr}`);
      const line = out.stdout.trim().split("\n").pop()!;
      const { ms, registerMs } = JSON.parse(line);
      results.get(name)!.push(ms);
      if (name === "tracker") registering.push(registerMs);
    }
    console.log(`round ${r + 1}/${rounds}: ${SUBJECTS.map((s) => `${s} ${results.get(s)![r].toFixed(2)} ms`).join(", ")}`);
  }
  const fmt = (x: number) => x.toLocaleString("en-US");
  const tracker = median(results.get("tracker")!);
  console.log(`\n${runtime}: ${fmt(N)} random completions, median of ${rounds} rounds`);
  for (const name of SUBJECTS) {
    const ms = median(results.get(name)!);
    const rate = N / (ms / 1000) / 1e6;
    console.log(`${name.padEnd(12)} ${(ms * 1e6 / N).toFixed(2)} ns/call  ${rate.toFixed(1)} M/s  ${(tracker / ms).toFixed(2)}× the tracker's rate`);
  }
  const reg = median(registering);
  console.log(`the tracker's registration (validated, ${fmt(N / BATCH)} batches of ${BATCH}, not in the rates above): ${(reg * 1e6 / N).toFixed(2)} ns/record`);
}

const o = cli(
  "floor",
  `usage: node --import tsx bench/floor.ts [--rounds N]
       (bun bench/floor.ts …, deno run -A bench/floor.ts …)

The tracker's per-call completion against its floor, each subject in its own process,
taking turns for N rounds. Prints a table; writes nothing.

  --rounds N           rounds (default 3)
  --subject NAME       internal: run one subject (${SUBJECTS.join(", ")}) and print its rate
  -h, --help           this text`,
  { rounds: { type: "string" }, subject: { type: "string" } },
);
const subject = o.subject;
if (subject !== undefined) {
  if (!(SUBJECTS as readonly string[]).includes(subject)) usageError("floor", `unknown subject ${JSON.stringify(subject)}`);
  child(subject as SubjectName);
} else {
  parent(o.rounds === undefined ? 3 : intFlag("floor", "rounds", o.rounds, 1));
}
