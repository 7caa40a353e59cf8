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
