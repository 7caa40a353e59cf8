/** Deterministic randomness shared by the tests (same sequence on every runtime). */

/** xorshift32: returns a function giving integers in [0, n). */
export function rng(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

/** Fisher–Yates shuffle in place with `rand`; returns `items`. */
export function shuffle<T>(items: T[], rand: (n: number) => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = rand(i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** Every permutation of 0 … n − 1 (Heap's algorithm), each as a fresh array. */
export function* permutations(n: number): Generator<number[]> {
  const a = Array.from({ length: n }, (_, i) => i);
  const c = new Array<number>(n).fill(0);
  yield a.slice();
  for (let i = 0; i < n;) {
    if (c[i] < i) {
      const j = i % 2 === 0 ? 0 : c[i];
      [a[i], a[j]] = [a[j], a[i]];
      yield a.slice();
      c[i]++;
      i = 0;
    } else {
      c[i++] = 0;
    }
  }
}
