/**
 * The tracker struct's layout in linear memory (field offsets in bytes), the completion
 * codes, and the sizes and run-ring accessors every part of the engine shares
 * (assembly/engine.ts describes the whole).
 */

// Tracker struct: field offsets in bytes. The first 24 bytes are all that the hot
// path (complete, completeMany) reads: LO and LEN are kept in step with HEAD/ISSUED.
// @ts-ignore: decorator
@inline export const LO: usize = 0; // f64: handle of the head record (base + head)
// @ts-ignore: decorator
@inline export const LEN: usize = 8; // u32: retained entries (issued - head), at most 2^30
// @ts-ignore: decorator
@inline export const MASK: usize = 12; // u32: ring size in bits - 1
// @ts-ignore: decorator
@inline export const BITS: usize = 16; // usize: the ring block (bitmap words, then summary words)
// @ts-ignore: decorator
@inline export const BLOCKED: usize = 20; // u32: completed records in [head, issued)
// @ts-ignore: decorator
@inline export const HEAD: usize = 24; // i64: seq of the oldest retained record
// @ts-ignore: decorator
@inline export const ISSUED: usize = 32; // i64: seq the next registered record gets
// @ts-ignore: decorator
@inline export const BASE: usize = 40; // f64: first handle (handles are base + seq)
// @ts-ignore: decorator
@inline export const NEXT: usize = 48; // i64: the last batch's next position (or the start; -1 unknown)
// @ts-ignore: decorator
@inline export const FIRST: usize = 56; // i64: first offset ever registered (-1 none)
// @ts-ignore: decorator
@inline export const LAST: usize = 64; // i64: last offset registered (-1 none)
// @ts-ignore: decorator
@inline export const RUN_HEAD: usize = 72; // i64: absolute index of the last run starting at or before head
// @ts-ignore: decorator
@inline export const RUN_TAIL: usize = 80; // i64: number of runs ever opened
// @ts-ignore: decorator
@inline export const RUNS: usize = 88; // usize: the runs block, 16 bytes per run (seq i64, offset i64)
// @ts-ignore: decorator
@inline export const RUN_MASK: usize = 92; // u32: runs held - 1
// @ts-ignore: decorator
@inline export const STRUCT_SIZE: usize = 96;

// @ts-ignore: decorator
@inline export const MIN_RING: u32 = 512; // bits: 64 bytes of bitmap + one summary word
// @ts-ignore: decorator
@inline export const MIN_RUNS: u32 = 4;

// Completion codes (core/tracker/engine.ts).
// @ts-ignore: decorator
@inline export const REJECTED: i32 = 0;
// @ts-ignore: decorator
@inline export const DUPLICATE: i32 = 1;
// @ts-ignore: decorator
@inline export const COMPLETED: i32 = 2;
// @ts-ignore: decorator
@inline export const ADVANCED: i32 = 3;

// @ts-ignore: decorator
@inline export const ONES: u64 = 0xffff_ffff_ffff_ffff;

/** Words of the bitmap of a ring of `mask + 1` bits. */
// @ts-ignore: decorator
@inline export function ringWords(mask: u32): u32 {
  return (mask + 1) >> 6;
}

/** Words of the summary of a ring of `mask + 1` bits (at least one). */
// @ts-ignore: decorator
@inline export function summaryWords(mask: u32): u32 {
  const w = ringWords(mask) >> 6;
  return w > 0 ? w : 1;
}

/** Bytes of the ring block. */
// @ts-ignore: decorator
@inline export function ringBytes(mask: u32): usize {
  return <usize>(ringWords(mask) + summaryWords(mask)) << 3;
}

/** Bytes of the runs block of `rm + 1` runs. */
// @ts-ignore: decorator
@inline export function runBytes(rm: u32): usize {
  return (<usize>rm + 1) << 4;
}

// @ts-ignore: decorator
@inline export function runSeq(runs: usize, rm: u32, i: i64): i64 {
  return load<i64>(runs + (<usize>(<u32>i & rm) << 4));
}

// @ts-ignore: decorator
@inline export function runOff(runs: usize, rm: u32, i: i64): i64 {
  return load<i64>(runs + (<usize>(<u32>i & rm) << 4), 8);
}
