/**
 * Measuring helpers shared by every scenario: a seeded random source, forced GC and
 * heap readings that work the same on Node, Bun and Deno, and the median.
 *
 * @module
 */
import process from "node:process";

/** A seeded xorshift32 source: `int(n)` is uniform in [0, n) for n ≤ 2^32. */
export class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0 || 1;
  }
  /** Uniform in [0, 1). */
  next(): number {
    let s = this.#s;
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    this.#s = s >>> 0;
    return this.#s / 4294967296;
  }
  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/** A random permutation of 0..n-1 (Fisher–Yates). */
export function permutation(n: number, rng: Rng): Int32Array {
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}

interface GcGlobals {
  Bun?: { gc(force: boolean): void };
  gc?: () => void;
}

/** Forces a full garbage collection (Bun.gc(true); `gc()` on Node/Deno with --expose-gc). */
export function gc(): void {
  const g = globalThis as unknown as GcGlobals;
  if (g.Bun) g.Bun.gc(true);
  else if (typeof g.gc === "function") {
    g.gc();
    g.gc();
  } else throw new Error("no forced GC: run node with --expose-gc, deno with --v8-flags=--expose-gc");
}

/** Heap and memory outside the JS heap (typed arrays, WASM memory where the runtime counts it). */
export interface MemoryReading {
  /** `heapUsed + external` from `process.memoryUsage()`. */
  heap: number;
  /** Resident set size. */
  rss: number;
}

/** Forces GC, then reads `process.memoryUsage()`. */
export function memory(): MemoryReading {
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

/** The median of the values (mean of the middle two for an even count). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** A millisecond clock. */
export const now = (): number => performance.now();
