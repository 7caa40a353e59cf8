/**
 * offset-frontier/tracker: the completed prefix of one partition assignment, without the
 * consumer. A {@link Tracker} follows one assignment; a {@link Frontier} holds every
 * assignment of a consumer and the commit protocol (propose, confirm, fail). No I/O, no
 * client: use it to build your own consumer loop over any Kafka client.
 *
 * @example
 * ```ts
 * import { Tracker } from "offset-frontier/tracker";
 * const t = new Tracker({ start: 100 });
 * const first = t.register([100, 104, 105], 106);
 * t.complete(first + 2);
 * t.safe; // 100: offset 100 is unfinished
 * t.complete(first);
 * t.safe; // 104
 * ```
 *
 * @module
 */
export { Completion, type Engine, type EngineTracker } from "./engine.ts";
export { type EngineChoice, resolveEngine } from "./engines.ts";
export {
  CapacityError,
  EngineUnavailableError,
  HandleSpaceError,
  InvalidArgumentError,
  InvalidBatchError,
  InvalidOffsetError,
  OffsetFrontierError,
  RevokedError,
} from "../errors.ts";
export {
  type CommitProposal,
  Frontier,
  type FrontierOptions,
  type PartitionCommit,
  type PartitionPositions,
  type PartitionStats,
} from "./frontier.ts";
export { jsEngine } from "./js_engine.ts";
export { ready } from "./wasm_engine.ts"; // importing it registers the WASM engine: "auto" means WASM
export { OFFSET_LIMIT, type OffsetInput, toOffset } from "./offset.ts";
export { DEFAULT_CAPACITY, type Handle, MAX_CAPACITY, Tracker, type TrackerOptions, type TrackerStats } from "./tracker.ts";
export {
  CompletedSet,
  decodeCompletedSet,
  type DecodeResult,
  DEFAULT_BUDGET,
  type Encoded,
  encodeCompletedSet,
  type EncodeOptions,
  MAX_METADATA_LENGTH,
  type RunsInput,
  unionOfClaims,
} from "./completed_set/mod.ts";
