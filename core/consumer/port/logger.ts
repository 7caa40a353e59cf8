/**
 * What a consumer says when nobody listens. KafkaJS logs; Node's `EventEmitter` throws an
 * `error` nobody listens to. A consumer here never throws from an event, so it writes a line
 * through its {@link ConsumerLogger} instead (default: `console.warn`/`console.error`, i.e.
 * stderr), for what the user would otherwise never hear of: an `error` event without a
 * listener (a partition stopped after its retries, failing dead letters or commits, the
 * client's failure) and an outage without an `unavailable` listener. One line per change of
 * state, never one per retry: "the Kafka cluster is unavailable …, retrying" once, then
 * "the Kafka cluster answers again …"; a partition's first failed dead letter, not each
 * attempt; the first failed commit until one is acknowledged. `logger: false` (or a logger
 * that does nothing) turns it off; a listener of the event silences its line.
 *
 * @module
 */
import { describe, InvalidArgumentError, ShutdownCommitError } from "../../errors.ts";
import type { AvailableEvent, UnavailableEvent } from "./cluster.ts";
import type { ConsumerEvents, ErrorEvent } from "./metrics.ts";

/** Fields a logger may use beside the message (the error, the partition, the offset…). */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * Where a consumer writes what no listener heard. Any object with `warn` and `error` fits
 * (e.g. pino's or winston's logger, or `console`).
 *
 * @example
 * ```ts
 * import type { ConsumerLogger } from "offset-frontier";
 * const lines: string[] = [];
 * const logger: ConsumerLogger = { warn: (m) => lines.push(m), error: (m) => lines.push(m) };
 * ```
 */
export interface ConsumerLogger {
  /** Something the consumer waits out or tries again (an outage, a failed commit). */
  warn(message: string, fields?: LogFields): void;
  /** Something that needs a person (a stopped partition, the consumer's failure). */
  error(message: string, fields?: LogFields): void;
}

/** The default logger: one line on stderr through `console.warn` / `console.error`, prefixed `offset-frontier:`. */
export const consoleLogger: ConsumerLogger = {
  warn: (message) => console.warn(`offset-frontier: ${message}`),
  error: (message) => console.error(`offset-frontier: ${message}`),
};

/**
 * The `logger` option: `undefined` → {@link consoleLogger}, `false` → none, else a logger.
 * @throws {InvalidArgumentError} for anything else
 */
export function resolveLogger(value: unknown): ConsumerLogger | undefined {
  if (value === undefined) return consoleLogger;
  if (value === false) return undefined;
  const l = value as Partial<ConsumerLogger> | null;
  if (l === null || typeof l !== "object" || typeof l.warn !== "function" || typeof l.error !== "function") {
    throw new InvalidArgumentError(`logger must be false or an object with warn(message, fields) and error(message, fields); got ${describe(value)}`);
  }
  return l as ConsumerLogger;
}

/** `Name: message` of an error (its first line). */
function line(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.split("\n")[0];
}

/**
 * Turns a consumer's unheard events into log lines, once per change of state. Fed every
 * event the consumer emits ({@link Narrator.saw}, with whether a listener heard it) and
 * every acknowledged commit ({@link Narrator.committed}).
 */
export class Narrator {
  readonly #log: ConsumerLogger;
  readonly #maxUnavailableMs: number;
  #outage = false; // an "unavailable" line was written and no "answers again" yet
  #commitFailing = false; // a failed commit was logged and none acknowledged since
  #listenerLogged = false;
  readonly #deadLetters = new Set<string>(); // partitions whose failing dead letters were logged

  /**
   * @param logger where the lines go
   * @param maxUnavailableMs `cluster.maxUnavailableMs` (named in the outage line)
   */
  constructor(logger: ConsumerLogger, maxUnavailableMs: number) {
    this.#log = logger;
    this.#maxUnavailableMs = maxUnavailableMs;
  }

  /** A commit was acknowledged: a later failure is news again. */
  committed(): void {
    this.#commitFailing = false;
  }

  /**
   * The consumer emitted `event`.
   * @param heard whether a listener took it
   */
  saw<K extends keyof ConsumerEvents>(event: K, payload: ConsumerEvents[K], heard: boolean): void {
    try {
      if (event === "error") {
        if (!heard) this.#error(payload as ErrorEvent);
      } else if (event === "unavailable") {
        if (!heard) this.#unavailable(payload as UnavailableEvent);
      } else if (event === "available") {
        this.#available(payload as AvailableEvent);
      } else if (event === "deadLetter") {
        const e = payload as ConsumerEvents["deadLetter"];
        this.#deadLetters.delete(`${e.topic}/${e.partition}`);
      }
    } catch {
      // a logger that throws never breaks the consumer
    }
  }

  #unavailable(e: UnavailableEvent): void {
    if (this.#outage) return;
    this.#outage = true;
    const at = e.brokers.length > 0 ? ` at ${e.brokers.join(", ")}` : "";
    const until = this.#maxUnavailableMs === Infinity
      ? "until it answers (cluster.maxUnavailableMs is not set)"
      : `for up to cluster.maxUnavailableMs (${this.#maxUnavailableMs} ms) in all`;
    this.#log.warn(`the Kafka cluster${at} is unavailable (${line(e.lastError)}); retrying ${until}`, {
      brokers: e.brokers,
      error: e.lastError,
      attempts: e.attempts,
    });
  }

  #available(e: AvailableEvent): void {
    if (!this.#outage) return;
    this.#outage = false;
    this.#log.warn(`the Kafka cluster answers again, after ${e.downMs} ms and ${e.attempts} failed attempts`, { ...e });
  }

  #error(e: ErrorEvent): void {
    const where = e.topic !== undefined ? ` ${e.topic}/${e.partition}${e.offset !== undefined ? ` offset ${e.offset}` : ""}` : "";
    const fields = { kind: e.kind, error: e.error, topic: e.topic, partition: e.partition, offset: e.offset };
    const hint = ' (listen to the consumer\'s "error" event to handle it; logger: false silences these lines)';
    switch (e.kind) {
      case "partition-stopped":
        this.#deadLetters.delete(`${e.topic}/${e.partition}`);
        return this.#log.error(`${line(e.error)}${hint}`, fields);
      case "dead-letter": {
        const key = `${e.topic}/${e.partition}`;
        if (this.#deadLetters.has(key)) return;
        this.#deadLetters.add(key);
        return this.#log.error(`a dead letter of${where} failed (${line(e.error)}); it is retried, then the partition stops${hint}`, fields);
      }
      case "commit":
        if (e.error instanceof ShutdownCommitError) return this.#log.warn(line(e.error), fields); // the shutdown completed; the next owner redoes a bounded part
        if (this.#commitFailing) return;
        this.#commitFailing = true;
        return this.#log.warn(`a commit${where} failed (${line(e.error)}); the safe positions are proposed again${hint}`, fields);
      case "listener":
        if (this.#listenerLogged) return;
        this.#listenerLogged = true;
        return this.#log.error(`an event listener threw (${line(e.error)}); further listener errors are not logged`, fields);
      case "committed-read":
        return this.#log.warn(`the committed offsets could not be read at assignment (${line(e.error)}): records above them run again`, fields);
      default:
        return this.#log.error(`the Kafka client failed (${line(e.error)})${hint}`, fields);
    }
  }
}
