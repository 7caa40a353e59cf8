/**
 * What Kafka's protocol errors (by their protocol names, e.g. `NOT_COORDINATOR`) mean to a
 * consumer, for every binding that sees the names (KafkaJS as `type`, @platformatic/kafka
 * as `apiId`): which say the cluster, or the part of it needed, is not answering right now
 * (wait and try again), and which are a refusal for good.
 *
 * @module
 */
import type { RefusalKind } from "../../core/errors.ts";

/** Errors a broker restart, a moving coordinator or leader, or a slow replica causes (older aliases included). */
const UNREACHABLE = new Set([
  "COORDINATOR_NOT_AVAILABLE",
  "GROUP_COORDINATOR_NOT_AVAILABLE",
  "NOT_COORDINATOR",
  "NOT_COORDINATOR_FOR_GROUP",
  "COORDINATOR_LOAD_IN_PROGRESS",
  "GROUP_LOAD_IN_PROGRESS",
  "LEADER_NOT_AVAILABLE",
  "NOT_LEADER_FOR_PARTITION",
  "NOT_LEADER_OR_FOLLOWER",
  "FENCED_LEADER_EPOCH",
  "REQUEST_TIMED_OUT",
  "NETWORK_EXCEPTION",
  "BROKER_NOT_AVAILABLE",
  "REPLICA_NOT_AVAILABLE",
  "NOT_ENOUGH_REPLICAS",
  "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
  "KAFKA_STORAGE_ERROR",
]);
const AUTHENTICATION = new Set(["SASL_AUTHENTICATION_FAILED", "UNSUPPORTED_SASL_MECHANISM", "ILLEGAL_SASL_STATE"]);
const AUTHORIZATION = new Set([
  "TOPIC_AUTHORIZATION_FAILED",
  "GROUP_AUTHORIZATION_FAILED",
  "CLUSTER_AUTHORIZATION_FAILED",
  "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
]);
const CONFIGURATION = new Set([
  "INVALID_SESSION_TIMEOUT",
  "INVALID_GROUP_ID",
  "INCONSISTENT_GROUP_PROTOCOL",
  "INVALID_REQUEST",
  "INVALID_CONFIG",
  "UNSUPPORTED_VERSION",
  "INVALID_TOPIC_EXCEPTION",
]);

/**
 * Whether the protocol error `name` says the cluster, or the broker needed, did not answer.
 * @param name the protocol error name
 */
export function isUnreachableError(name: unknown): boolean {
  return typeof name === "string" && UNREACHABLE.has(name);
}

/**
 * The refusal the protocol error `name` stands for, or `undefined` when it is none.
 * @param name the protocol error name
 * @param starting whether it came from subscribing or joining: only then does
 *   `UNKNOWN_TOPIC_OR_PARTITION` mean "no such topic" (later it can be a passing state)
 */
export function refusalKind(name: unknown, starting: boolean): RefusalKind | undefined {
  if (typeof name !== "string") return undefined;
  if (AUTHENTICATION.has(name)) return "authentication";
  if (AUTHORIZATION.has(name)) return "authorization";
  if (starting && name === "UNKNOWN_TOPIC_OR_PARTITION") return "unknown-topic";
  if (CONFIGURATION.has(name)) return "configuration";
  return undefined;
}
