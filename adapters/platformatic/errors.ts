/**
 * How the `@platformatic/kafka` binding reads the client's errors: which mean "the cluster
 * is not reachable right now" (wait and try again), which mean "the cluster refused us for
 * good" (authentication, authorization, an unknown topic, a configuration it rejects: a
 * {@link ClusterRefusedError} at once), which broker an error names, and the binding's own
 * {@link CommitNotAcknowledgedError}.
 *
 * The client's errors carry `code` (`PLT_KFK_NETWORK`, `PLT_KFK_TIMEOUT`,
 * `PLT_KFK_AUTHENTICATION`, …), protocol errors an `apiId` (Kafka's error name), and
 * aggregates (`MultipleErrors`, `ResponseError`) their `errors`; causes are followed.
 *
 * @module
 */
import { ClusterRefusedError, OffsetFrontierError, type RefusalKind } from "../../core/errors.ts";
import type { CommitFailure } from "./commit_response.ts";
import { errorChain } from "../shared/error_chain.ts";
import { isUnreachableError, refusalKind } from "../shared/kafka_errors.ts";

interface ErrorLike {
  code?: unknown;
  apiId?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

const chain = (error: unknown): ErrorLike[] => errorChain<ErrorLike>(error, 20);

const UNREACHABLE_CODES = new Set(["PLT_KFK_NETWORK", "PLT_KFK_TIMEOUT"]);
/** Whether the error (or a cause) says the cluster, or the broker needed, did not answer: worth waiting for. */
export function isUnreachable(error: unknown): boolean {
  return chain(error).some((e) =>
    (typeof e.code === "string" && UNREACHABLE_CODES.has(e.code)) || isUnreachableError(e.apiId)
  );
}

/**
 * The group coordinator's own answers to a join or sync: the group is rebalancing, or it no
 * longer knows this member or generation. The broker answered; the member joins again.
 */
const GROUP_ANSWERS = new Set(["REBALANCE_IN_PROGRESS", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "MEMBER_ID_REQUIRED"]);

/**
 * Whether a failed join is only the group's own answer (see `GROUP_ANSWERS`; the client
 * gives up on it after its `retries`): not an outage, the member joins again at once. An
 * error that also holds a failure to reach the cluster is not.
 */
export function isGroupAnswer(error: unknown): boolean {
  return !isUnreachable(error) && chain(error).some((e) => typeof e.apiId === "string" && GROUP_ANSWERS.has(e.apiId));
}

/** Whether the error (or a cause) is the protocol error `apiId` (e.g. `"OFFSET_OUT_OF_RANGE"`). */
export function hasApiId(error: unknown, apiId: string): boolean {
  return chain(error).some((e) => e.apiId === apiId);
}

/** Broker addresses (`host:port`) named in the error's messages ("Connection to 127.0.0.1:9092 failed."). */
export function brokersOf(error: unknown): string[] {
  const out: string[] = [];
  for (const e of chain(error)) {
    if (typeof e.message !== "string") continue;
    for (const m of e.message.matchAll(/\b([A-Za-z0-9.\-_]+:\d{1,5})\b/g)) if (!out.includes(m[1])) out.push(m[1]);
  }
  return out;
}

/**
 * The topic a `UserError` "Unknown topic <name>." names (the client's answer, after its
 * retries, to a Metadata request for a topic the cluster does not know), or `undefined`.
 */
export function unknownTopicOf(error: unknown): string | undefined {
  for (const e of chain(error)) {
    if (e.code !== "PLT_KFK_USER" || typeof e.message !== "string") continue;
    const m = /^Unknown topic (.*)\.$/.exec(e.message);
    if (m) return m[1];
  }
  return undefined;
}

/**
 * The refusal an error stands for, or `undefined` when it is not one.
 * @param topics the subscribed topics (named by an `unknown-topic` or authorization refusal)
 * @param starting whether the error came from the start (join): only then does
 *   `UNKNOWN_TOPIC_OR_PARTITION` mean "no such topic"
 */
export function refusalOf(error: unknown, topics: readonly string[], starting: boolean): ClusterRefusedError | undefined {
  let kind: RefusalKind | undefined;
  for (const e of chain(error)) {
    kind = e.code === "PLT_KFK_AUTHENTICATION"
      ? "authentication"
      : refusalKind(e.apiId, starting) ?? (e.code === "PLT_KFK_UNSUPPORTED_API" || e.code === "PLT_KFK_USER" ? "configuration" : undefined);
    if (kind !== undefined) break;
  }
  if (kind === undefined) return undefined;
  const named = unknownTopicOf(error);
  if (named !== undefined) {
    // The client's "Unknown topic" (a metadata answer it gave up retrying), whenever it comes.
    return new ClusterRefusedError("unknown-topic", brokersOf(error)[0], topics.includes(named) ? [named] : topics, error);
  }
  const concerned = kind === "unknown-topic" || kind === "authorization" ? topics : [];
  return new ClusterRefusedError(kind, brokersOf(error)[0], concerned, error);
}

/** A commit the broker did not acknowledge for every partition (refused, unanswered, or unsent). */
export class CommitNotAcknowledgedError extends OffsetFrontierError {
  /** The partitions not acknowledged, with the broker's error code when it gave one. */
  readonly failures: readonly CommitFailure[];
  /** The client's error, when the request itself failed. */
  override readonly cause: unknown;
  /**
   * A commit not acknowledged for `failures`.
   * @param failures the partitions (and error codes) not acknowledged
   * @param cause the client's error, if any
   */
  constructor(failures: readonly CommitFailure[], cause?: unknown) {
    const named = failures.slice(0, 8).map((f) => `${f.topic}/${f.partition}${f.errorCode !== undefined ? ` (error ${f.errorCode})` : " (no answer)"}`);
    super(`the commit was not acknowledged for ${named.join(", ")}${failures.length > 8 ? ` and ${failures.length - 8} more` : ""}`);
    this.failures = failures;
    this.cause = cause;
  }
}
