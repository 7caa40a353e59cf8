/**
 * How the Confluent binding's start waits out an unreachable cluster (issue 18), the
 * counterpart of the KafkaJS binding's start.
 *
 * What the client does when no broker answers (`@confluentinc/kafka-javascript` 1.10,
 * lib/kafkajs/_consumer.js `connect`, lib/client.js `connect`): the native client is
 * created at once, then `connect()` waits for a metadata answer with node-rdkafka's
 * default timeout (30 s) and rejects after it with librdkafka's first error event
 * (`broker transport failure`, code -1: the event's code is lost on the way to JavaScript),
 * the native client disconnected. librdkafka's error events reach JavaScript only when that
 * attempt ends (nothing polls the consumer's queue before it is connected). A consumer
 * connects once: a second `connect()` throws `Connect has already been called elsewhere`
 * (the same for the producer; confluent-kafka-javascript #243). So:
 *
 * - each attempt connects a fresh consumer (the first one is the binding's own); a failed
 *   one is disconnected before the backoff, so nothing is half-connected between attempts;
 * - while an attempt is pending, a metadata request of its own (the outage probe) asks
 *   every backoff whether a broker answers: each unanswered probe is a failed attempt
 *   (`sink.unavailable`, whose returned backoff paces the next probe), so the outage is
 *   reported within seconds, not after the 30 s of the connect;
 * - an attempt that fails for want of a broker is reported too and followed, after the
 *   backoff, by the next; one that connects ends the wait (`sink.available()`), and then
 *   the dead-letter producer connects (it too connects only once, and it is the user's:
 *   it is connected only once the cluster answered the consumer);
 * - refusals (SASL authentication, authorization: librdkafka's codes and texts below)
 *   fail at once with a {@link ClusterRefusedError}: as soon as one is seen among the
 *   client's error events or as the attempt's error, i.e. at the latest when the first
 *   attempt ends; other errors (a bad configuration) fail at once as they are;
 * - `sink.signal` (shutdown, or the runner giving up after `cluster.maxUnavailableMs`) or
 *   {@link ConfluentStart.close} ends the wait at once: {@link ConfluentStart.connect}
 *   resolves `undefined`. An attempt still pending then cannot be cut short (librdkafka
 *   holds it until its metadata request times out): it is disconnected in the background
 *   once it settles ({@link ConfluentStart.settled}).
 *
 * @module
 */
import { ClusterRefusedError, InvalidArgumentError, type RefusalKind } from "../../core/errors.ts";
import { type OutageSink, outageCode } from "./outage.ts";

/** A client of the Confluent package that connects once: the consumer or the dead-letter producer. */
export interface Connectable {
  /** Connects (once per instance). */
  connect(): Promise<void>;
  /** Disconnects (a no-op when not connected). */
  disconnect(): Promise<void>;
}

/** The internal (node-rdkafka) client of a consumer whose connect began: its error events and metadata requests. */
export interface ProbedClient {
  /** Adds an error-event listener. */
  on(event: "event.error", listener: (err: unknown) => void): unknown;
  /** Removes an error-event listener. */
  removeListener(event: "event.error", listener: (err: unknown) => void): unknown;
  /** A metadata request: `cb()` without an error once a broker answered. */
  getMetadata(options: { timeout?: number }, cb: (err: unknown) => void): unknown;
}

/** What a {@link ConfluentStart} connects and where it reports. */
export interface ConfluentStartOptions<C extends Connectable> {
  /** The consumer of the first attempt (not connected yet). */
  first: C;
  /** A fresh consumer for each later attempt (same configuration). */
  create: () => C;
  /** The consumer's internal client once its `connect()` was called, if it exposes one. */
  internal: (consumer: C) => ProbedClient | undefined;
  /** Connected once the consumer is: the dead-letter producer. */
  producer?: Connectable;
  /** Where failed attempts and the answer go; its signal ends the wait. */
  sink: OutageSink;
  /** The subscribed topic names (named by an authorization refusal). */
  topics: readonly string[];
  /** How long a probe waits for a broker's answer. Default 3,000 ms. */
  probeMs?: number;
  /** How long after an attempt began the first probe goes out. Default 1,000 ms. */
  firstProbeMs?: number;
}

/** librdkafka's codes of a refusal, and the texts its error events carry instead (their code is lost: -1). */
const REFUSALS: ReadonlyArray<{ code: number; text: string; kind: RefusalKind }> = [
  { code: -169, text: "authentication failure", kind: "authentication" }, // ERR__AUTHENTICATION (SASL)
  { code: 58, text: "sasl authentication failed", kind: "authentication" }, // ERR_SASL_AUTHENTICATION_FAILED
  { code: 33, text: "unsupported sasl mechanism", kind: "authentication" }, // ERR_UNSUPPORTED_SASL_MECHANISM
  { code: 34, text: "request not valid in current sasl state", kind: "authentication" }, // ERR_ILLEGAL_SASL_STATE
  { code: 29, text: "topic authorization failed", kind: "authorization" }, // ERR_TOPIC_AUTHORIZATION_FAILED
  { code: 30, text: "group authorization failed", kind: "authorization" }, // ERR_GROUP_AUTHORIZATION_FAILED
  { code: 31, text: "cluster authorization failed", kind: "authorization" }, // ERR_CLUSTER_AUTHORIZATION_FAILED
];

/** librdkafka's codes (besides the outage codes) and texts that mean no broker answered in time: worth waiting for. */
const UNANSWERED_CODES = new Set<number>([-185, 7, -181]); // ERR__TIMED_OUT, ERR_REQUEST_TIMED_OUT, ERR__SSL (as KafkaJS's connection errors)
const UNANSWERED_TEXT = /timed out|broker transport failure|all broker connections are down|host resolution failure|ssl error/i;

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
}

/** The error and its causes, outermost first, at most 5. */
function chain(error: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  for (let e = error; e !== null && typeof e === "object" && out.length < 5 && !out.includes(e as ErrorLike); e = (e as ErrorLike).cause) {
    out.push(e as ErrorLike);
  }
  return out;
}

/** The text of an error as librdkafka words it (lower case, without its `Local: ` / `Broker: ` origin). */
function text(e: ErrorLike): string {
  const m = typeof e.message === "string" ? e.message.toLowerCase() : "";
  return m.replace(/^(local|broker): /, "");
}

/**
 * The refusal a librdkafka error stands for, or `undefined` when it is not one.
 * @param error an error event of the client, or the error of a connect
 * @param topics the subscribed topic names (named by an authorization refusal)
 */
export function confluentRefusal(error: unknown, topics: readonly string[]): ClusterRefusedError | undefined {
  for (const e of chain(error)) {
    const t = text(e);
    const hit = REFUSALS.find((r) => e.code === r.code || t.startsWith(r.text));
    if (hit) return new ClusterRefusedError(hit.kind, undefined, hit.kind === "authorization" ? topics : [], error);
  }
  return undefined;
}

/** Whether a librdkafka error says that no broker answered (in time): the cluster is waited for. */
export function isUnanswered(error: unknown): boolean {
  return chain(error).some((e) =>
    outageCode(e) !== undefined || (typeof e.code === "number" && UNANSWERED_CODES.has(e.code)) || UNANSWERED_TEXT.test(text(e))
  );
}

type Outcome = { kind: "settled"; error?: unknown; failed: boolean } | { kind: "probe"; error?: unknown; answered: boolean } | {
  kind: "timeout";
} | { kind: "aborted" };

/** A connect's outcome (never rejects). */
function outcomeOf(connecting: Promise<void>): Promise<Outcome> {
  return connecting.then(
    (): Outcome => ({ kind: "settled", failed: false }),
    (error: unknown): Outcome => ({ kind: "settled", error, failed: true }),
  );
}

/** `work`'s outcome, or `timeout` after `ms`, or `aborted` once any of `signals` aborts (the work goes on). */
function raced(work: Promise<Outcome> | undefined, ms: number, signals: readonly AbortSignal[]): Promise<Outcome> {
  if (signals.some((s) => s.aborted)) return Promise.resolve({ kind: "aborted" });
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const done = (o: Outcome): void => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener("abort", onAbort);
      resolve(o);
    };
    const onAbort = (): void => done({ kind: "aborted" });
    for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
    if (ms !== Infinity) timer = setTimeout(() => done({ kind: "timeout" }), Math.max(0, ms));
    void work?.then(done);
  });
}

/**
 * One start of the Confluent binding: connects its consumer (a fresh one per attempt) and
 * its dead-letter producer, waiting out an unreachable cluster (see the module doc).
 *
 * @example
 * ```ts
 * const start = new ConfluentStart({ first: kafka.consumer(config), create: () => kafka.consumer(config),
 *   internal: (c) => c._getInternalClient(), sink, topics: ["orders"] });
 * const consumer = await start.connect(); // undefined: aborted while waiting
 * ```
 */
export class ConfluentStart<C extends Connectable> {
  readonly #o: ConfluentStartOptions<C>;
  readonly #probeMs: number;
  readonly #firstProbeMs: number;
  readonly #closing = new AbortController();
  /** Disconnects of what was left connecting when the wait ended, settled. */
  #cleanup: Promise<unknown>[] = [];
  #connecting = false;

  /**
   * A start (nothing happens before {@link ConfluentStart.connect}).
   * @param options the consumers, the producer, the sink and the probe timing
   */
  constructor(options: ConfluentStartOptions<C>) {
    this.#o = options;
    this.#probeMs = options.probeMs ?? 3_000;
    this.#firstProbeMs = options.firstProbeMs ?? 1_000;
  }

  /**
   * Connects: resolves the connected consumer (the producer connected too), or
   * `undefined` when the sink's signal aborted or {@link ConfluentStart.close} was called
   * first. Rejects with a {@link ClusterRefusedError} for a refusal, or with the client's
   * error when it is neither a refusal nor an unanswered request; nothing is left
   * connected then. Call it once.
   */
  async connect(): Promise<C | undefined> {
    if (this.#connecting) throw new InvalidArgumentError("ConfluentStart.connect() was already called: a start connects once");
    this.#connecting = true;
    const { sink } = this.#o;
    const signals = [sink.signal, this.#closing.signal];
    let consumer = this.#o.first;
    for (;;) {
      if (signals.some((s) => s.aborted)) return undefined;
      let connected: boolean;
      try {
        connected = await this.#attempt(consumer);
      } catch (error) {
        if (signals.some((s) => s.aborted)) return undefined;
        if (error instanceof ClusterRefusedError || !isUnanswered(error)) throw error;
        const delayMs = sink.unavailable(error, []);
        if ((await raced(undefined, delayMs, signals)).kind === "aborted") return undefined;
        consumer = this.#o.create();
        continue;
      }
      if (!connected) return undefined;
      break;
    }
    const producer = this.#o.producer;
    if (producer) {
      let connecting: Promise<void>;
      try {
        connecting = producer.connect();
      } catch (error) {
        connecting = Promise.reject(error);
      }
      const settled = outcomeOf(connecting);
      const r = await raced(settled, Infinity, signals);
      if (r.kind !== "settled") {
        void this.#leave(consumer, producer, settled);
        return undefined;
      }
      if (r.failed) {
        // The producer connects once: its failure cannot be waited out (the consumer goes too).
        await this.#leave(consumer, producer);
        throw confluentRefusal(r.error, this.#o.topics) ?? r.error;
      }
    }
    if (signals.some((s) => s.aborted)) {
      void this.#leave(consumer, producer);
      return undefined;
    }
    sink.available();
    return consumer;
  }

  /** Ends the wait: {@link ConfluentStart.connect} resolves `undefined`; what a pending attempt connects is disconnected once it settles. */
  close(): void {
    this.#closing.abort();
  }

  /** Resolves once everything a wait that ended left connecting is disconnected. */
  get settled(): Promise<void> {
    return Promise.allSettled(this.#cleanup).then(() => {});
  }

  /** Disconnects `consumer` (and `producer`) once `pending` (their connect) settled; never rejects. */
  #leave(consumer: Connectable, producer?: Connectable, pending?: Promise<unknown>): Promise<unknown> {
    const after = pending ?? Promise.resolve();
    const done = after.then(() => Promise.allSettled([consumer.disconnect(), producer?.disconnect()]));
    this.#cleanup.push(done);
    return done;
  }

  /**
   * One attempt: `true` once connected, `false` when the wait ended first (the consumer is
   * disconnected once its connect settles); throws the connect's error or a refusal seen
   * among the client's error events (the consumer is then disconnected, or will be).
   */
  async #attempt(consumer: C): Promise<boolean> {
    const { sink, topics } = this.#o;
    let connecting: Promise<void>;
    try {
      connecting = consumer.connect();
    } catch (error) {
      connecting = Promise.reject(error);
    }
    const settled = outcomeOf(connecting);
    const found = this.#o.internal(consumer);
    // Only a client that has what is asked of it (a fake or another version may not): else the connect alone decides.
    const internal = found && typeof found.on === "function" && typeof found.removeListener === "function" &&
        typeof found.getMetadata === "function"
      ? found
      : undefined;
    const refused = new AbortController();
    let refusal: ClusterRefusedError | undefined;
    const listener = (err: unknown): void => {
      refusal ??= confluentRefusal(err, topics);
      if (refusal) refused.abort();
    };
    internal?.on("event.error", listener);
    const signals = [sink.signal, this.#closing.signal, refused.signal];
    try {
      let delayMs = this.#firstProbeMs;
      for (;;) {
        let r = await raced(settled, delayMs, signals);
        if (r.kind === "timeout") {
          // No answer yet: does any broker answer a metadata request?
          r = await raced(Promise.race([settled, this.#probe(internal)]), Infinity, signals);
          if (r.kind === "probe") {
            // Unanswered: a failed attempt (reported), the next probe after the backoff. Answered: the connect follows.
            delayMs = r.answered ? Infinity : sink.unavailable(r.error, []);
            continue;
          }
        }
        if (r.kind === "aborted") {
          void this.#leave(consumer, undefined, settled); // a pending connect cannot be cut short
          if (refusal) throw refusal;
          return false;
        }
        if (r.kind === "settled") {
          if (r.failed) {
            // A failed connect left the client disconnected already: to be sure.
            await this.#leave(consumer);
            throw refusal ?? confluentRefusal(r.error, topics) ?? r.error;
          }
          return true; // connected: a broker accepted it
        }
      }
    } finally {
      internal?.removeListener("event.error", listener);
    }
  }

  /** A metadata request on the attempt's own client: answered, or not (within the probe's timeout). */
  #probe(internal: ProbedClient | undefined): Promise<Outcome> {
    if (!internal) return new Promise(() => {}); // nothing to ask: the connect decides
    return new Promise((resolve) => {
      try {
        internal.getMetadata({ timeout: this.#probeMs }, (err) =>
          resolve(err ? { kind: "probe", error: err, answered: false } : { kind: "probe", answered: true }));
      } catch (error) {
        resolve({ kind: "probe", error, answered: false });
      }
    });
  }
}
