/**
 * A delivered batch's offsets as the tracker registers them in one call: a
 * `Float64Array`, parsed from the decimal strings both KafkaJS-shaped clients deliver.
 *
 * @module
 */

/**
 * The offsets of `messages` (in delivery order). Both clients deliver a batch in offset
 * order, and strictly increasing integers from first to first + n - 1 are exactly those n
 * (the common, dense batch): then only two offset strings are parsed. Otherwise each one
 * is (the tracker checks them).
 */
export function batchOffsets(messages: ReadonlyArray<{ readonly offset: string }>): Float64Array {
  const n = messages.length;
  const offsets = new Float64Array(n);
  if (n === 0) return offsets;
  const first = Number(messages[0].offset);
  if (Number(messages[n - 1].offset) - first === n - 1 && Number.isSafeInteger(first)) {
    for (let i = 0; i < n; i++) offsets[i] = first + i;
  } else {
    for (let i = 0; i < n; i++) offsets[i] = Number(messages[i].offset);
  }
  return offsets;
}
