/**
 * Typed errors. Every message names the offending value and what was expected;
 * an operation that throws has changed nothing.
 *
 * @module
 */

/** Base class of every error this library throws on purpose. */
export class OffsetFrontierError extends Error {
  /**
   * An error with a message that names the value and the expectation.
   * @param message what went wrong, naming the value and the expectation
   */
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** An offset (or `next` position) that is not an integer in [0, 2^53) given as number, bigint or decimal string. */
export class InvalidOffsetError extends OffsetFrontierError {
  /** The rejected input, exactly as given. */
  readonly value: unknown;
  /**
   * The error for one rejected offset input.
   * @param what which input it was (e.g. `offsets[3]`)
   * @param value the rejected input
   */
  constructor(what: string, value: unknown) {
    super(
      `${what} must be an integer in [0, 2^53) given as number, bigint or decimal string; got ${describe(value)}`,
    );
    this.value = value;
  }
}

/** A batch that breaks the registration rules: order, overlap with earlier batches, or its `next` position. */
export class InvalidBatchError extends OffsetFrontierError {}

/** Registering the batch would retain more entries than the tracker's capacity allows. */
export class CapacityError extends OffsetFrontierError {
  /** The tracker's capacity in entries. */
  readonly capacity: number;
  /** Entries retained when the batch was refused (pending plus completed-but-blocked). */
  readonly retained: number;
  /** Size of the refused batch. */
  readonly requested: number;
  /**
   * The error for one refused batch.
   * @param capacity limit
   * @param retained entries held
   * @param requested batch size
   */
  constructor(capacity: number, retained: number, requested: number) {
    super(
      `a batch of ${requested} records does not fit: ${retained} entries are retained (pending or completed behind a pending head) of a capacity of ${capacity}`,
    );
    this.capacity = capacity;
    this.retained = retained;
    this.requested = requested;
  }
}

/** The tracker was revoked: its positions can no longer be read and it accepts nothing. */
export class RevokedError extends OffsetFrontierError {}

/** An option or argument outside its allowed range or type. */
export class InvalidArgumentError extends OffsetFrontierError {}

/**
 * No tracker can be created: every slice of the handle space is held by a live tracker
 * or used up (see `core/tracker/handle_space.ts`). Revoke trackers that are done.
 */
export class HandleSpaceError extends OffsetFrontierError {}

/** The requested engine cannot run here (e.g. `engine: "wasm"` where WebAssembly is unavailable). */
export class EngineUnavailableError extends OffsetFrontierError {}

/** Why a cluster refused a client for good: retrying cannot help. */
export type RefusalKind = "authentication" | "authorization" | "unknown-topic" | "configuration";

/**
 * The cluster could not be reached for `maxUnavailableMs` (connect, group join,
 * coordinator lookup, commits): the consumer gave up. Names the brokers tried and the
 * last error.
 */
export class ClusterUnavailableError extends OffsetFrontierError {
  /** The broker addresses tried (as the client named them), or the bootstrap list. */
  readonly brokers: readonly string[];
  /** Milliseconds the consumer waited for the cluster. */
  readonly waitedMs: number;
  /** Failed attempts to reach it. */
  readonly attempts: number;
  /**
   * The last failure. When the client had reported none (`attempts` 0: its own retries
   * outlasted the bound), the failure of one direct attempt made on giving up, where the
   * binding can make one (`probed`).
   */
  override readonly cause: unknown;
  /** Whether `brokers` and `cause` come from a direct attempt made on giving up. */
  readonly probed: boolean;
  /**
   * The error of a consumer that gave up waiting for its cluster.
   * @param brokers broker addresses tried
   * @param waitedMs how long it waited
   * @param attempts failed attempts the client reported
   * @param cause the last failure
   * @param probed `brokers` and `cause` come from a direct attempt made on giving up
   */
  constructor(brokers: readonly string[], waitedMs: number, attempts: number, cause: unknown, probed = false) {
    const where = brokers.length > 0 ? ` at ${brokers.join(", ")}` : "";
    const retrying = "the client was still inside its own retries of its first attempt";
    const last = attempts > 0
      ? `${attempts} failed attempts; last error: ${errorLine(cause)}`
      : probed && cause !== undefined
      ? `${retrying}; a direct attempt on giving up failed: ${errorLine(cause)}`
      : probed && brokers.length > 0
      ? `${retrying}, though a direct connection succeeded: the client's handshake (TLS, SASL) or its group join did not finish`
      : `no attempt had failed yet: ${retrying} (KafkaJS retries a connection about 10 s by default before it reports a failure; give \`cluster.maxUnavailableMs\` more than that, or fewer \`retry.retries\` to the client)`;
    super(`the Kafka cluster${where} was unreachable for ${waitedMs} ms (${last})`);
    this.brokers = brokers;
    this.waitedMs = waitedMs;
    this.attempts = attempts;
    this.cause = cause;
    this.probed = probed;
  }
}

/**
 * The cluster answered but refused the client for a reason retrying cannot fix: failed
 * authentication, missing authorization, a topic that does not exist (with topic
 * creation off), or a client configuration it rejects. Raised at once, never waited out.
 */
export class ClusterRefusedError extends OffsetFrontierError {
  /** Why it was refused. */
  readonly kind: RefusalKind;
  /** The broker that refused (when known). */
  readonly broker: string | undefined;
  /** The topics concerned (for `unknown-topic`, subscribed or dead-letter ones, and topic authorization), if known. */
  readonly topics: readonly string[];
  /** The client's own error. */
  override readonly cause: unknown;
  /**
   * The error of a refusal.
   * @param kind why it was refused
   * @param broker the refusing broker's address, if known
   * @param topics the topics concerned
   * @param cause the client's error
   * @param role what the topics are to the consumer, for the message: `"topic"` (subscribed, the
   *   default) or `"dead-letter topic"`
   */
  constructor(kind: RefusalKind, broker: string | undefined, topics: readonly string[], cause: unknown, role: "topic" | "dead-letter topic" = "topic") {
    const what = kind === "unknown-topic"
      ? `${role} ${topics.map((t) => JSON.stringify(t)).join(", ")} does not exist (and topic creation is off)`
      : kind === "authorization"
      ? `not authorized${topics.length > 0 ? ` for topic ${topics.map((t) => JSON.stringify(t)).join(", ")}` : ""}`
      : kind === "authentication"
      ? "authentication failed"
      : "the client configuration was refused";
    super(`the Kafka cluster${broker !== undefined ? ` at ${broker}` : ""} refused the consumer: ${what} (${errorLine(cause)})`);
    this.kind = kind;
    this.broker = broker;
    this.topics = topics;
    this.cause = cause;
  }
}

/**
 * `consume()` (the entry points' start with signal handling) was shut down, by a process
 * signal or its `signal`, before the consumer joined its group: consuming never began.
 * Names what the start waited for: the failed attempts to reach the cluster, the brokers
 * they named and the last error (none: the cluster had not answered yet, nor had an attempt
 * failed). `start()` itself resolves in that case (the consumer is `stopped`).
 */
export class StartInterruptedError extends OffsetFrontierError {
  /** Milliseconds from the start to the shutdown. */
  readonly waitedMs: number;
  /** Failed attempts to reach the cluster in the outage the start was in (0: none failed). */
  readonly attempts: number;
  /** The broker addresses those attempts named. */
  readonly brokers: readonly string[];
  /** The last attempt's error, if one failed. */
  override readonly cause: unknown;
  /**
   * The error of a start cut short by a shutdown.
   * @param waitedMs how long the start had run
   * @param attempts failed attempts to reach the cluster
   * @param brokers broker addresses they named
   * @param cause the last attempt's error
   */
  constructor(waitedMs: number, attempts: number, brokers: readonly string[], cause: unknown) {
    const where = brokers.length > 0 ? ` at ${brokers.join(", ")}` : "";
    const why = attempts > 0
      ? `it never reached the Kafka cluster${where} (${attempts} failed attempt${attempts === 1 ? "" : "s"}; last error: ${errorLine(cause)})`
      : "it had not joined its group yet (no attempt to reach the Kafka cluster had failed)";
    super(`the consumer was shut down ${waitedMs} ms after it started, before it consumed anything: ${why}`);
    this.waitedMs = waitedMs;
    this.attempts = attempts;
    this.brokers = brokers;
    this.cause = cause;
  }
}

/** A partition whose shutdown commit was not acknowledged: where it had got to and what the broker holds. */
export interface UncommittedPartition {
  /** Topic name. */
  readonly topic: string;
  /** Partition number. */
  readonly partition: number;
  /** The safe position the shutdown tried to commit. */
  readonly safe: number;
  /** The last offset the broker acknowledged for this assignment (`undefined`: none). */
  readonly confirmed: number | undefined;
}

/**
 * A graceful shutdown could not get its final commit acknowledged within its grace (a
 * broker outage, a lost coordinator): it names each partition's safe position and the last
 * acknowledged one. The next owner starts from what the broker holds and redoes the records
 * finished above it (at most `safe − confirmed` offsets per partition, fewer where an
 * acknowledged completed set covers some). Reported as an `error` event of kind `commit`;
 * the shutdown itself completes.
 */
export class ShutdownCommitError extends OffsetFrontierError {
  /** The partitions left uncommitted. */
  readonly partitions: readonly UncommittedPartition[];
  /** The last commit attempt's error, if one failed (rather than ran out of time). */
  override readonly cause: unknown;
  /**
   * The report of a shutdown whose final commit did not land.
   * @param partitions the partitions left uncommitted
   * @param attempts commit attempts made during the shutdown
   * @param cause the last attempt's error
   */
  constructor(partitions: readonly UncommittedPartition[], attempts: number, cause: unknown) {
    const list = partitions.map((p) =>
      `${p.topic}/${p.partition} at ${p.safe} (last acknowledged ${p.confirmed ?? "none"})`
    ).join(", ");
    const upTo = partitions.reduce((n, p) => n + p.safe - (p.confirmed ?? p.safe), 0);
    super(
      `the shutdown could not commit ${list} after ${attempts} attempt${attempts === 1 ? "" : "s"}` +
        (cause !== undefined ? ` (last error: ${errorLine(cause)})` : "") +
        `: the next owner redoes what finished above the acknowledged offsets, up to ${upTo} offsets`,
    );
    this.partitions = partitions;
    this.cause = cause;
  }
}

/** One line naming an error: `Name: message`. */
function errorLine(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/** A binding was loaded on a runtime it cannot run on (e.g. the Confluent client's native addon on Bun or Deno). */
export class UnsupportedRuntimeError extends OffsetFrontierError {
  /** The runtime that loaded it: `"bun"`, `"deno"`, … */
  readonly runtime: string;
  /**
   * The error of a binding loaded on `runtime`.
   * @param runtime the runtime's name
   * @param message what cannot run there and what to use instead
   */
  constructor(runtime: string, message: string) {
    super(message);
    this.runtime = runtime;
  }
}

/** Renders a value for an error message: strings quoted, bigints with `n`, others by type. */
export function describe(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
    case "bigint":
      return `${value}n`;
    case "number":
      return Object.is(value, -0) ? "-0" : String(value);
    case "undefined":
      return "undefined";
    case "object":
      return value === null ? "null" : `an object (${Object.prototype.toString.call(value)})`;
    default:
      return `a ${typeof value}`;
  }
}

/**
 * Records of a topic's transactions arrived, and the client cannot tell which of them
 * belong to aborted transactions: they are refused rather than handed to a handler.
 */
export class UnverifiedTransactionsError extends OffsetFrontierError {
  /** The topic. */
  readonly topic: string;
  /** The partition. */
  readonly partition: number;
  /**
   * The error for one partition's refused batch.
   * @param topic the topic
   * @param partition the partition
   * @param why why the client's aborted-transaction filtering cannot be trusted
   */
  constructor(topic: string, partition: number, why: string) {
    super(`transactional records of ${JSON.stringify(topic)} partition ${partition} were refused: ${why}`);
    this.topic = topic;
    this.partition = partition;
  }
}
