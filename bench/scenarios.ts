/**
 * The scenarios. Each is "one pass over N records" (register every record in batches
 * of 500, complete every record once), timed with `performance.now()` around the
 * work only: inputs are made before the subject exists, and forced GC runs between
 * passes, outside the timings. A row's rate is N divided by the median pass time.
 *
 * One file per family: scenarios_order.ts (in-order, random, slow-head), scenarios_gaps.ts,
 * scenarios_consumer.ts (partitions, batches), scenarios_memory.ts; what they share:
 * scenario_kit.ts.
 *
 * @module
 */
import type { Scenario } from "./scenario_kit.ts";
import { inOrder, random, slowHead } from "./scenarios_order.ts";
import { gapsCompacted, gapsTxn } from "./scenarios_gaps.ts";
import { batches, partitions } from "./scenarios_consumer.ts";
import { memCompacted, memDense, memTxn } from "./scenarios_memory.ts";

export { CHUNK, endScenario, kept, type Mode, type Plan, POOL, type Result, type Scenario } from "./scenario_kit.ts";

/** Every scenario, in report order. */
export const SCENARIOS: Scenario[] = [
  inOrder,
  random,
  slowHead,
  gapsTxn,
  gapsCompacted,
  partitions,
  batches,
  memDense,
  memTxn,
  memCompacted,
];
