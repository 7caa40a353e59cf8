/**
 * Verified commits for the Confluent binding. The client's `commitOffsets` resolves as
 * soon as librdkafka queued the commit (`commitAsync`), before the broker answered, so a
 * commit the broker refused (e.g. metadata above `offset.metadata.max.bytes`) would look
 * like a success. librdkafka reports each commit's outcome to its `offset_commit_cb`,
 * which the client re-emits as the internal client's `offset.commit` event `(err,
 * offsets)`; `err` is set when any partition of the commit failed (its error code, or
 * the request's). A commit here resolves only when that event reported it without error.
 *
 * @module
 */

import { OffsetFrontierError } from "../core/errors.ts";

/** The internal (node-rdkafka) client's event surface used here. */
export interface CommitEventSource {
  /** Adds a listener. */
  on(event: "offset.commit", listener: (err: unknown, offsets: unknown) => void): unknown;
  /** Removes a listener. */
  removeListener(event: "offset.commit", listener: (err: unknown, offsets: unknown) => void): unknown;
}

/** A commit the broker refused, or whose outcome librdkafka never reported. */
export class CommitRefusedError extends OffsetFrontierError {
  /** The librdkafka or broker error code (e.g. 12 `OFFSET_METADATA_TOO_LARGE`), when known. */
  readonly code: number | undefined;
  /**
   * A refused or unconfirmed commit.
   * @param message what happened, naming the partitions
   * @param code the error code, when known
   */
  constructor(message: string, code?: number) {
    super(message);
    this.code = code;
  }
}

interface Pending {
  readonly signature: string;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

type Offset = { readonly topic: string; readonly partition: number; readonly offset: number | string };

/** The commit's identity: its partitions and offsets, order-independent. */
export function commitSignature(offsets: readonly Offset[]): string {
  return offsets.map((o) => `${o.topic}\u0000${o.partition}\u0000${Number(o.offset)}`).sort().join("\u0001");
}

function codeOf(err: unknown): number | undefined {
  if (typeof err === "number") return err;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/**
 * Matches commits with their `offset.commit` outcome. One instance per consumer; call
 * {@link CommitVerifier.close} when the consumer disconnects (pending commits then fail).
 */
export class CommitVerifier {
  readonly #source: CommitEventSource;
  readonly #timeoutMs: number;
  readonly #pending = new Set<Pending>();
  readonly #listener = (err: unknown, offsets: unknown): void => this.#onResult(err, offsets);

  /**
   * Listens to `source`'s commit outcomes.
   * @param source the internal client that emits `offset.commit`
   * @param timeoutMs how long to wait for an outcome before the commit counts as failed
   */
  constructor(source: CommitEventSource, timeoutMs = 60_000) {
    this.#source = source;
    this.#timeoutMs = timeoutMs;
    source.on("offset.commit", this.#listener);
  }

  /**
   * Sends a commit through `send` and resolves once librdkafka reported it acknowledged;
   * rejects when `send` fails, when the broker refused any partition, or after the timeout.
   */
  async commit(offsets: readonly Offset[], send: () => Promise<void>): Promise<void> {
    let pending!: Pending;
    const outcome = new Promise<void>((resolve, reject) => {
      pending = { signature: commitSignature(offsets), resolve, reject };
    });
    this.#pending.add(pending); // before sending: the outcome may come back before `send` resolves
    const timer = setTimeout(() => {
      pending.reject(new CommitRefusedError(`no outcome of the commit of ${describeOffsets(offsets)} within ${this.#timeoutMs} ms`));
    }, this.#timeoutMs);
    try {
      await send();
      await outcome;
    } finally {
      clearTimeout(timer);
      this.#pending.delete(pending);
    }
  }

  /** Stops listening; every pending commit fails (its outcome is unknown). */
  close(): void {
    this.#source.removeListener("offset.commit", this.#listener);
    for (const p of this.#pending) p.reject(new CommitRefusedError("the consumer disconnected before the commit's outcome was known"));
    this.#pending.clear();
  }

  #onResult(err: unknown, offsets: unknown): void {
    if (this.#pending.size === 0 || !Array.isArray(offsets)) return;
    const signature = commitSignature(offsets as Offset[]);
    for (const p of this.#pending) {
      if (p.signature !== signature) continue;
      this.#pending.delete(p);
      if (err === undefined || err === null || codeOf(err) === 0) p.resolve();
      else {
        const code = codeOf(err);
        const text = (err as { message?: unknown } | null)?.message;
        p.reject(new CommitRefusedError(
          `the broker refused the commit of ${describeOffsets(offsets as Offset[])}: ` +
            `${typeof text === "string" ? text : "error"}${code !== undefined ? ` (code ${code})` : ""}`,
          code,
        ));
      }
      return;
    }
  }
}

function describeOffsets(offsets: readonly Offset[]): string {
  return offsets.map((o) => `${o.topic}/${o.partition}@${o.offset}`).join(", ");
}
