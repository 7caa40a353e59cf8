/**
 * The consumer configuration the Confluent binding runs with: the user's, with
 * `enable.auto.commit: false` and the binding's rebalance callback; a config that turns
 * auto-commit on or brings its own `rebalance_cb` is refused.
 *
 * @module
 */
import { InvalidArgumentError, describe } from "../../core/errors.ts";
import type {
  ConfluentAssignmentFns,
  ConfluentConsumerConfig,
  ConfluentRebalanceError,
  ConfluentStartingPartition,
  ConfluentTopicPartition,
} from "./types.ts";

const shown = (v: unknown): string => (typeof v === "boolean" ? String(v) : describe(v));

/** The consumer config the binding runs with: the user's, auto-commit off, its rebalance callback. */
export function consumerConfig(
  config: ConfluentConsumerConfig,
  fromBeginning: boolean | undefined,
  rebalance: (
    err: ConfluentRebalanceError,
    assignment: ConfluentTopicPartition[],
    fns: ConfluentAssignmentFns,
  ) => Promise<ConfluentStartingPartition[] | undefined>,
): ConfluentConsumerConfig {
  if (config === null || typeof config !== "object") {
    throw new InvalidArgumentError(`config must be the consumer configuration object; got ${describe(config)}`);
  }
  const auto = config["enable.auto.commit"];
  if (auto !== undefined && auto !== false && auto !== "false") {
    throw new InvalidArgumentError(`config["enable.auto.commit"] must be false or absent (the consumer commits); got ${shown(auto)}`);
  }
  const kjs = config.kafkaJS;
  if (kjs !== undefined && kjs.autoCommit !== undefined && kjs.autoCommit !== false) {
    throw new InvalidArgumentError(`config.kafkaJS.autoCommit must be false or absent (the consumer commits); got ${shown(kjs.autoCommit)}`);
  }
  if (config.rebalance_cb !== undefined) {
    throw new InvalidArgumentError(`config.rebalance_cb must be absent: the consumer installs its own; got ${describe(config.rebalance_cb)}`);
  }
  const out: ConfluentConsumerConfig = { ...config, "enable.auto.commit": false, rebalance_cb: rebalance };
  if (fromBeginning !== undefined && out["auto.offset.reset"] === undefined && kjs?.fromBeginning === undefined) {
    out["auto.offset.reset"] = fromBeginning ? "earliest" : "latest";
  }
  return out;
}

/** Whether a partition without a committed offset starts at the earliest offset under `config`. */
export function startsEarliest(config: ConfluentConsumerConfig): boolean {
  return resetPolicy(config) === "earliest";
}

/**
 * Where a partition without a committed offset starts under `config` (`auto.offset.reset`,
 * else `kafkaJS.fromBeginning`, else librdkafka's default, the latest); `undefined` for any
 * other policy (e.g. `error`), which only the client itself applies.
 */
export function resetPolicy(config: ConfluentConsumerConfig): "earliest" | "latest" | undefined {
  const reset = config["auto.offset.reset"];
  if (reset === undefined) return config.kafkaJS?.fromBeginning === true ? "earliest" : "latest";
  if (reset === "earliest" || reset === "smallest" || reset === "beginning") return "earliest";
  if (reset === "latest" || reset === "largest" || reset === "end") return "latest";
  return undefined;
}
