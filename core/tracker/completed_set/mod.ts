/**
 * The completed-set codec: which records above the committed offset are already finished,
 * written into a commit's metadata string, so that the next owner of a partition skips them
 * instead of redoing them.
 *
 * ## Model
 *
 * A claim is bound to (topic, partition, base) where `base` is the committed offset. It covers
 * [base, end): inside it every offset is finished except those in a sorted list of disjoint
 * *unfinished runs*; every offset ≥ end (or < base) is unknown, i.e. unfinished. Offsets that
 * were never delivered (compaction, transaction markers) count as finished. `base` itself may
 * be finished or not.
 *
 * ## Format (version 2)
 *
 * Alphabet: the 91 printable ASCII characters `!`…`~` without `"`, `'` and `\` (no space), in
 * ASCII order; a character's *index* is its position in that list.
 *
 * The string `c0 c1 … c(n−1)` carries a bit stream (most significant bit first):
 * - `c0` has index `16·F + h` with F the format number (2 = runs, 3 = bitmap) and h the stream's
 *   first 4 bits. F = 0 and 1 were version 1 (the same layout checked by a CRC-32): refused,
 *   with a reason, never read (below). An index ≥ 64 is an unknown format (room for later
 *   versions): ignored, with a reason.
 * - then each pair `c(2i+1) c(2i+2)` is `13` bits, value `91·index₁ + index₂` (< 8192, so
 *   6.5 bits per character against base64's 6); a single last character is 6 bits (index < 64).
 * So n characters carry T(n) = 4 + 13·⌊(n−1)/2⌋ + 6·((n−1) mod 2) bits; the encoder uses the
 * smallest n whose T(n) holds its bits. There is no length field: the string's length tells.
 * - the **last 32 bits** are the check: the first 32 bits (big-endian) of SHA-256 over the format
 *   number (1 byte), n (4 bytes), the partition (4 bytes), the base offset (8 bytes), the topic's
 *   UTF-8 length (2 bytes) and bytes, then the payload (the first T(n) − 32 bits, packed into
 *   bytes, zero-filled). The base is not written anywhere else: the decoder knows the committed
 *   offset, and a set read back with another offset, topic or partition, or corrupted, truncated,
 *   bit-flipped, fails the check and is ignored.
 * - why a hash: version 1's CRC-32 is linear over GF(2). For one payload the CRC of offset X
 *   differs from that of Y by a linear function of X XOR Y, which maps the 53 offset bits onto
 *   32, so for offsets ≥ 2^32 a 21-dimensional space of differences left the check unchanged: a
 *   string written at X verified at Y and claimed records that never finished there. Truncated
 *   SHA-256 has no such structure: a string read anywhere but where it was written (or with any
 *   bit changed) passes with probability 2^−32 (SHA-256 taken as a random function), whatever
 *   the difference. Version 1 strings are not read, since their check cannot tell X from such a
 *   Y: after an upgrade, the records above each partition's committed offset are redone once.
 * - the **payload**: the encoding's bits, then zero padding (fewer than 7 bits). Zero padding
 *   can never complete a code (below), so it never decodes into a claim.
 *
 * Payload of format 2, **runs**: the alternating runs of [base, end), finished and unfinished,
 * each length ≥ 1, the last one finished (a trailing unfinished run is left out: beyond `end`
 * everything is unfinished anyway).
 * - 1 bit: the first run (the one at `base`) is finished (1) or unfinished (0);
 * - 6 bits: the code of the unfinished runs' lengths, 6 bits: the code of the finished runs';
 *   code c < 32 is Exp-Golomb of order c, code c ≥ 32 is Golomb-Rice of order c − 32;
 * - the runs' lengths minus 1, alternating, each with its class's code. Exp-Golomb of order k
 *   writes v + 2^k (N bits) after N − 1 − k zeros; Rice of order k writes ⌊v / 2^k⌋ zeros, a 1,
 *   then the low k bits. Both start with zeros and a 1, so an all-zero tail never completes one.
 * The encoder tallies, in one pass over the runs, the exact size of every code for each class
 * (a histogram of bit lengths for Exp-Golomb, of set bits for Rice) and takes the smallest.
 *
 * Payload of format 3, **bitmap**: bit i = 1 when base + i is finished, for i in [0, end − base);
 * trailing zeros (padding included) are unfinished, so they are harmless. `end` is read back as
 * one past the last 1 bit.
 *
 * Per commit the smaller of the two wins. Over the budget (the broker's
 * `offset.metadata.max.bytes`, 4,096 by default, limits the metadata's length), the set is not
 * dropped: the longest prefix [base, end′) that fits is encoded, in whichever format keeps the
 * most finished records; everything ≥ end′ is then unfinished (redone by the next owner).
 *
 * ## Decoding
 *
 * Untrusted input: anything that cannot be verified is ignored (`ok: false` with a reason), never
 * trusted, and decoding never throws. The check guards against accidents (a corrupted, cut or
 * stale string, one written for another topic, partition or offset — an offset reset, a topic
 * recreated, a string copied — another tool's metadata): such a string passes with probability
 * 2^−32. It does not guard against someone who can commit for the group on purpose: they could
 * commit any offset anyway. It is bounded: at most {@link MAX_METADATA_LENGTH} characters, the
 * run count is bounded by the payload's bits, every claim by 2^53 (no offset ≥ 2^53 is claimed).
 *
 * @example
 * ```ts
 * import { decodeCompletedSet, encodeCompletedSet } from "offset-frontier/tracker";
 * // committed offset 100; 100 and 103..104 unfinished, 101..102 and 105..109 finished
 * const runs = new Float64Array([100, 1, 103, 2]);
 * const e = encodeCompletedSet("orders", 0, { base: 100, end: 110, runs, count: 2 });
 * // e.metadata is a short ASCII string, e.end === 110, e.finished === 7
 * const d = decodeCompletedSet("orders", 0, 100, e?.metadata);
 * if (d.ok) d.set.isFinished(101); // true
 * ```
 *
 * @module
 */
export { CompletedSet, unionOfClaims } from "./claim.ts";
export { decodeCompletedSet, type DecodeResult } from "./decode.ts";
export { type Encoded, encodeCompletedSet, type EncodeOptions } from "./encode.ts";
export { type RunsInput } from "./input.ts";
export { DEFAULT_BUDGET, MAX_METADATA_LENGTH } from "./wire.ts";
