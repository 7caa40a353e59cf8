/**
 * How the KafkaJS binding reads KafkaJS's errors: which mean "the cluster is not
 * reachable right now" (wait and try again), which mean "the cluster refused us for
 * good" (authentication, authorization, an unknown topic: fail at once with a
 * {@link ClusterRefusedError}), and which broker addresses an error names.
 *
 * KafkaJS wraps the cause of repeated failures (`KafkaJSNumberOfRetriesExceeded.cause`)
 * and names the broker of a connection error (`KafkaJSConnectionError.broker`); both
 * are followed here.
 *
 * @module
 */
import { ClusterRefusedError, type RefusalKind } from "../../core/errors.ts";
import { errorChain } from "../shared/error_chain.ts";
import { isUnreachableError, refusalKind } from "../shared/kafka_errors.ts";

interface KafkaJSErrorLike {
  name?: unknown;
  type?: unknown;
  retriable?: unknown;
  broker?: unknown;
  host?: unknown;
  port?: unknown;
  cause?: unknown;
  errors?: unknown;
}

const chain = (error: unknown): KafkaJSErrorLike[] => errorChain<KafkaJSErrorLike>(error, 10);

/** Errors (by name) that mean the cluster, or the part of it needed, did not answer. */
const UNREACHABLE_NAMES = new Set([
  "KafkaJSConnectionError",
  "KafkaJSConnectionClosedError",
  "KafkaJSRequestTimeoutError",
  "KafkaJSNoBrokerAvailableError",
  "KafkaJSGroupCoordinatorNotFound",
  "KafkaJSBrokerNotFound",
  "KafkaJSMetadataNotLoaded",
  "KafkaJSTopicMetadataNotLoaded",
  "KafkaJSLockTimeout",
]);
/** Broker addresses (`host:port`) named anywhere in the error's chain. */
export function brokersOf(error: unknown): string[] {
  const out: string[] = [];
  for (const e of chain(error)) {
    let b: string | undefined;
    if (typeof e.broker === "string" && e.broker !== "") b = e.broker;
    else if (typeof e.host === "string" && (typeof e.port === "number" || typeof e.port === "string")) b = `${e.host}:${e.port}`;
    if (b !== undefined && !out.includes(b)) out.push(b);
  }
  return out;
}

/** Whether the error (or a cause) says the cluster, or the broker needed, did not answer: worth waiting for. */
export function isUnreachable(error: unknown): boolean {
  return chain(error).some((e) =>
    (typeof e.name === "string" && UNREACHABLE_NAMES.has(e.name)) || isUnreachableError(e.type)
  );
}

/** Whether this is one of KafkaJS's own errors (which are worth waiting out unless they are a refusal). */
export function isKafkaJSError(error: unknown): boolean {
  return chain(error).some((e) => typeof e.name === "string" && e.name.startsWith("KafkaJS"));
}

/**
 * The refusal an error stands for, or `undefined` when it is not one.
 * @param error a KafkaJS error
 * @param topics the subscribed topic names (named by an `unknown-topic` or authorization refusal)
 * @param broker the broker that answered last, when the error names none
 * @param subscribing whether the error came from subscribing: only then does
 *   `UNKNOWN_TOPIC_OR_PARTITION` mean "no such topic" (later it can be a passing state)
 */
export function refusalOf(
  error: unknown,
  topics: readonly string[],
  broker: string | undefined,
  subscribing: boolean,
): ClusterRefusedError | undefined {
  let kind: RefusalKind | undefined;
  for (const e of chain(error)) {
    kind = e.name === "KafkaJSSASLAuthenticationError"
      ? "authentication"
      : refusalKind(e.type, subscribing) ?? (e.name === "KafkaJSServerDoesNotSupportApiKey" ? "configuration" : undefined);
    if (kind !== undefined) break;
  }
  if (kind === undefined) return undefined;
  const named = brokersOf(error)[0] ?? broker;
  const concerned = kind === "unknown-topic" || kind === "authorization" ? topics : [];
  return new ClusterRefusedError(kind, named, concerned, error);
}
