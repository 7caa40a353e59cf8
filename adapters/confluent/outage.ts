/**
 * Broker outages as the Confluent binding reports them to the runner
 * (`ClientSink.unavailable` / `available`, see core/consumer/port/cluster.ts). librdkafka
 * reconnects by itself and says so only through error events: `ERR__ALL_BROKERS_DOWN`
 * (-187) when no broker connection is up, `ERR__TRANSPORT` (-195) when one connection
 * broke (also an idle connection the broker closed: harmless), `ERR__RESOLVE` (-193) when
 * a broker's name does not resolve. It has no event for "back": the end of an outage is a
 * sign of life (an acknowledged commit, an assignment) or a probe that got an answer (a
 * metadata request, sent after each backoff the runner hands out). A delivered batch is
 * no sign of life: librdkafka prefetched it, and the client keeps delivering its queue
 * long after the broker went away.
 *
 * - all brokers down: one failed attempt at once, then probes after each backoff;
 * - one connection broke (or a name did not resolve): a probe first, a failed attempt
 *   only if nobody answers it (an idle disconnect is no outage);
 * - while waiting, every failed probe is another failed attempt (the runner's capped
 *   backoff and its `maxUnavailableMs` bound apply); a probe that answers, or any sign of
 *   life, ends the outage.
 *
 * @module
 */

/** The internal (node-rdkafka) client's error events. */
export interface ErrorEventSource {
  /** Adds a listener. */
  on(event: "event.error", listener: (err: unknown) => void): unknown;
  /** Removes a listener. */
  removeListener(event: "event.error", listener: (err: unknown) => void): unknown;
}

/** What the watch reports to (the runner's sink, in practice). */
export interface OutageSink {
  /** A failed attempt to reach the cluster; returns the milliseconds to wait before the next one. */
  unavailable(error: unknown, brokers?: readonly string[]): number;
  /** The cluster answered. */
  available(): void;
  /** Aborted when the consumer stops waiting for the cluster. */
  readonly signal: AbortSignal;
}

/** librdkafka's error codes that say the cluster is (maybe) out of reach. */
export const OUTAGE_CODES = {
  ALL_BROKERS_DOWN: -187,
  TRANSPORT: -195,
  RESOLVE: -193,
} as const;

/**
 * The outage code of a librdkafka error event. The client's error events often carry code
 * -1 (the event's code is lost on the way to JavaScript) and only librdkafka's text
 * ("all broker connections are down", "broker transport failure", "host resolution
 * failure"), so the text counts too.
 */
export function outageCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === OUTAGE_CODES.ALL_BROKERS_DOWN || code === OUTAGE_CODES.TRANSPORT || code === OUTAGE_CODES.RESOLVE) return code;
  const text = String((err as { message?: unknown } | null)?.message ?? "");
  if (/all broker connections are down/i.test(text)) return OUTAGE_CODES.ALL_BROKERS_DOWN;
  if (/broker transport failure/i.test(text)) return OUTAGE_CODES.TRANSPORT;
  if (/host resolution failure/i.test(text)) return OUTAGE_CODES.RESOLVE;
  return undefined;
}

/** Broker addresses a librdkafka error message names (`host:port/id` or `host:port/bootstrap`). */
export function brokersNamed(err: unknown): string[] {
  const text = (err as { message?: unknown } | null)?.message;
  if (typeof text !== "string") return [];
  const out = new Set<string>();
  for (const m of text.matchAll(/([A-Za-z0-9._-]+:\d+)\/(?:\d+|bootstrap)/g)) out.add(m[1]);
  return [...out];
}

/**
 * Watches one consumer's error events and turns them into the runner's outage reports.
 * Call {@link OutageWatch.alive} on every sign of life and {@link OutageWatch.close} when
 * the consumer disconnects.
 */
export class OutageWatch {
  readonly #source: ErrorEventSource;
  readonly #sink: OutageSink;
  readonly #probe: () => Promise<void>;
  readonly #listener = (err: unknown): void => this.#onError(err);
  #waiting = false;
  #probing = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  #brokers: string[] = [];

  /**
   * Listens to `source`'s error events.
   * @param source the internal client that emits `event.error`
   * @param sink where outages and their ends go
   * @param probe resolves when a broker answered a request (e.g. a metadata request), rejects otherwise
   */
  constructor(source: ErrorEventSource, sink: OutageSink, probe: () => Promise<void>) {
    this.#source = source;
    this.#sink = sink;
    this.#probe = probe;
    source.on("event.error", this.#listener);
  }

  /** Whether an outage is being waited out (a failed attempt was reported and nothing answered since). */
  get waiting(): boolean {
    return this.#waiting;
  }

  /** A sign of life (an acknowledged commit, an assignment): an outage, if any, is over. */
  alive(): void {
    if (!this.#waiting || this.#closed) return;
    this.#end();
  }

  /** Stops listening and probing. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#source.removeListener("event.error", this.#listener);
  }

  #onError(err: unknown): void {
    if (this.#closed || this.#sink.signal.aborted) return;
    const code = outageCode(err);
    const named = brokersNamed(err);
    if (named.length > 0) this.#brokers = named;
    if (code === OUTAGE_CODES.ALL_BROKERS_DOWN) {
      if (!this.#waiting) this.#failed(err);
    } else if (code === OUTAGE_CODES.TRANSPORT || code === OUTAGE_CODES.RESOLVE) {
      if (!this.#waiting && !this.#probing) void this.#check(err);
    }
  }

  /** One failed attempt: reported, and the next probe after the backoff the runner hands out. */
  #failed(err: unknown): void {
    this.#waiting = true;
    const delayMs = this.#sink.unavailable(err, this.#brokers.length > 0 ? this.#brokers : undefined);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#check(err), Math.max(0, delayMs));
  }

  /** Probes: an answer ends the outage (if one was reported); no answer is another failed attempt. */
  async #check(err: unknown): Promise<void> {
    this.#timer = undefined;
    if (this.#closed || this.#sink.signal.aborted || this.#probing) return;
    this.#probing = true;
    let failure: unknown;
    let answered = false;
    try {
      await this.#probe();
      answered = true;
    } catch (e) {
      failure = e;
    } finally {
      this.#probing = false;
    }
    if (this.#closed || this.#sink.signal.aborted) return;
    if (answered) {
      if (this.#waiting) this.#end();
    } else {
      this.#failed(failure ?? err);
    }
  }

  #end(): void {
    this.#waiting = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#sink.available();
  }
}
