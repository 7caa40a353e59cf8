/**
 * What a consumer says when nobody listens (core/consumer/port/logger.ts), through a capturing
 * logger: a partition stopped after its retries, failing dead letters, failing commits and an
 * outage each write a line when no listener takes the event, once per change of state (not
 * once per retry attempt); a listener, or `logger: false`, silences them. And the start of
 * `consume()` (core/consumer/start_consuming.ts): a shutdown before the consumer joined its
 * group rejects it with a StartInterruptedError naming what it waited for, where `start()`
 * resolves. Issue 42: a consumer over an unreachable broker waited without a word, and a
 * Ctrl-C then resolved `consume()`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type ClientSink,
  type ConsumerLogger,
  InvalidArgumentError,
  type LogFields,
  ParallelConsumer,
  type ParallelConsumerOptions,
  StartInterruptedError,
} from "../../core/mod.ts";
import { startConsuming } from "../../core/consumer/start_consuming.ts";
import { MemoryClient, type Msg, sleep, until } from "./runner_client.ts";

interface Line {
  level: "warn" | "error";
  message: string;
  fields: LogFields | undefined;
}

function capture(): { logger: ConsumerLogger; lines: Line[] } {
  const lines: Line[] = [];
  return {
    lines,
    logger: {
      warn: (message, fields) => void lines.push({ level: "warn", message, fields }),
      error: (message, fields) => void lines.push({ level: "error", message, fields }),
    },
  };
}

function consumer(client: MemoryClient, options: Omit<ParallelConsumerOptions<Msg>, "handler"> & { handler?: ParallelConsumerOptions<Msg>["handler"] }) {
  return new ParallelConsumer<Msg>(client, { handler: () => {}, commit: { mode: "interval", intervalMs: 5 }, ...options });
}

const failing = (): never => {
  throw new Error("boom");
};

describe("the consumer's logger, for events nobody listens to", () => {
  test("a partition stopped after its retries: one error line naming it; none with an error listener or logger: false", async () => {
    for (const setup of ["unheard", "listener", "off"] as const) {
      const { logger, lines } = capture();
      const client = new MemoryClient();
      const heard: string[] = [];
      const c = consumer(client, {
        handler: failing,
        retry: { retries: 2, initialDelayMs: 1, maxDelayMs: 1 },
        logger: setup === "off" ? false : logger,
        ...(setup === "listener" ? { on: { error: (e) => void heard.push(e.kind) } } : {}),
      });
      await c.start();
      client.sink.assigned([{ topic: "t", partition: 0 }]);
      client.deliver("t", 0, [0, 1]);
      await until(() => c.metrics().partitions[0]?.state === "stopped", 2_000, "the partition stopped");
      await sleep(20);
      await c.shutdown();
      if (setup === "unheard") {
        assert.equal(lines.length, 1, JSON.stringify(lines));
        assert.equal(lines[0].level, "error");
        assert.match(lines[0].message, /partition t\/0 stopped: the record at offset 0 failed for good/);
        assert.match(lines[0].message, /boom/);
        assert.match(lines[0].message, /"error" event/);
        assert.equal(lines[0].fields?.kind, "partition-stopped");
      } else {
        assert.deepEqual(lines, [], setup);
        if (setup === "listener") assert.deepEqual(heard, ["partition-stopped"]);
      }
    }
  });

  test("failing dead letters: one line for the partition, not one per attempt, then the stop", async () => {
    const { logger, lines } = capture();
    let produced = 0;
    const client = new MemoryClient({
      deadLetter: () => {
        produced++;
        return Promise.reject(new Error("UNKNOWN_TOPIC_OR_PARTITION t.DLT"));
      },
    });
    const c = consumer(client, { handler: failing, retry: { retries: 3, initialDelayMs: 1, maxDelayMs: 1 }, logger });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    client.deliver("t", 0, [0]);
    await until(() => c.metrics().partitions[0]?.state === "stopped", 2_000, "the partition stopped");
    await c.shutdown();
    assert.equal(produced, 4, "the dead letter was tried 4 times");
    assert.deepEqual(lines.map((l) => l.fields?.kind), ["dead-letter", "partition-stopped"], JSON.stringify(lines));
    assert.match(lines[0].message, /a dead letter of t\/0 offset 0 failed \(Error: UNKNOWN_TOPIC_OR_PARTITION t\.DLT\); it is retried, then the partition stops/);
  });

  test("failing commits: one warning until a commit is acknowledged, then one again", async () => {
    const { logger, lines } = capture();
    const client = new MemoryClient();
    let failing = true;
    client.commitImpl = () => failing ? Promise.reject(new Error("NOT_COORDINATOR")) : Promise.resolve();
    const c = consumer(client, { logger });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    client.deliver("t", 0, [0]);
    await until(() => client.commits.length >= 4, 2_000, "failed commits");
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.match(lines[0].message, /a commit t\/0 offset 1 failed \(Error: NOT_COORDINATOR\); the safe positions are proposed again/);
    failing = false;
    await until(() => client.committed.get("t/0") === 1, 2_000, "the commit acknowledged");
    failing = true;
    client.deliver("t", 0, [1]);
    const before = client.commits.length;
    await until(() => client.commits.length >= before + 3, 2_000, "failed commits again");
    await c.shutdown(0);
    const commitLines = lines.filter((l) => l.fields?.kind === "commit" && !/shutdown/.test(l.message));
    assert.equal(commitLines.length, 2, JSON.stringify(lines));
  });

  test("an outage: one warning when it begins (not one per attempt), one when the cluster answers again; none with an unavailable listener", async () => {
    for (const heard of [false, true]) {
      const { logger, lines } = capture();
      const client = new MemoryClient();
      const c = consumer(client, { logger, cluster: { initialDelayMs: 1, maxDelayMs: 2 }, ...(heard ? { on: { unavailable: () => {} } } : {}) });
      await c.start();
      for (const round of [1, 2]) {
        for (let i = 0; i < 5; i++) client.sink.unavailable(new Error(`connect ECONNREFUSED 127.0.0.1:1 (round ${round})`), ["127.0.0.1:1"]);
        client.sink.available();
      }
      await c.shutdown();
      if (heard) {
        assert.deepEqual(lines, []);
        continue;
      }
      assert.equal(lines.length, 4, JSON.stringify(lines));
      assert.match(lines[0].message, /the Kafka cluster at 127\.0\.0\.1:1 is unavailable \(Error: connect ECONNREFUSED 127\.0\.0\.1:1 \(round 1\)\); retrying until it answers/);
      assert.match(lines[1].message, /the Kafka cluster answers again, after \d+ ms and 5 failed attempts/);
      assert.match(lines[2].message, /round 2/);
      assert.ok(lines.every((l) => l.level === "warn"));
    }
  });

  test("a listener that throws is logged once; a logger that throws never breaks the consumer", async () => {
    const { logger, lines } = capture();
    const client = new MemoryClient();
    const c = consumer(client, { logger, on: { pause: () => failing(), resume: () => failing() }, highWaterMark: 1, lowWaterMark: 0 });
    await c.start();
    client.sink.assigned([{ topic: "t", partition: 0 }]);
    c.pause();
    c.resume();
    c.pause();
    await c.shutdown();
    assert.equal(lines.length, 1, JSON.stringify(lines));
    assert.match(lines[0].message, /an event listener threw \(Error: boom\); further listener errors are not logged/);

    const throwing: ConsumerLogger = { warn: failing, error: failing };
    const client2 = new MemoryClient();
    const c2 = consumer(client2, { logger: throwing });
    await c2.start();
    client2.sink.unavailable(new Error("down"), []);
    client2.sink.available();
    await c2.shutdown();
    assert.equal(c2.state, "stopped");
  });

  test("a logger that is not one is refused, naming it", () => {
    for (const bad of [true, "console", {}, { warn: () => {} }, null]) {
      assert.throws(() => consumer(new MemoryClient(), { logger: bad as never }), (e: unknown) => e instanceof InvalidArgumentError && /logger must be false or an object with warn/.test(e.message));
    }
  });
});

/** A client whose cluster never answers: its start retries with the sink's backoff until the sink's signal aborts. */
class UnreachableClient extends MemoryClient {
  attempts = 0;
  constructor(readonly fail: boolean) {
    super();
  }
  override async start(sink: ClientSink<Msg>): Promise<void> {
    this.sink = sink;
    while (!sink.signal.aborted) {
      if (this.fail) {
        this.attempts++;
        sink.unavailable(new Error("connect ECONNREFUSED 127.0.0.1:9"), ["127.0.0.1:9"]);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 5);
        sink.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
      });
    }
  }
}

describe("consume()'s start, ended by a shutdown before the consumer joined its group", () => {
  test("rejects with a StartInterruptedError naming the failed attempts and the broker (start() itself resolves)", async () => {
    const client = new UnreachableClient(true);
    const controller = new AbortController();
    const c = consumer(client, { signal: controller.signal, logger: false, cluster: { initialDelayMs: 5, maxDelayMs: 5 } });
    const starting = startConsuming(c);
    await until(() => client.attempts >= 3, 2_000, "attempts");
    controller.abort();
    await assert.rejects(starting, (e: unknown) => {
      assert.ok(e instanceof StartInterruptedError, String(e));
      assert.ok(e.attempts >= 3);
      assert.deepEqual(e.brokers, ["127.0.0.1:9"]);
      assert.match(e.message, /shut down \d+ ms after it started, before it consumed anything: it never reached the Kafka cluster at 127\.0\.0\.1:9 \(\d+ failed attempts; last error: Error: connect ECONNREFUSED/);
      return true;
    });
    assert.equal(c.state, "stopped");
    await c.done; // a stop, not a failure
  });

  test("with no failed attempt yet it says the consumer had not joined its group; a consumer that runs resolves", async () => {
    const controller = new AbortController();
    const quiet = consumer(new UnreachableClient(false), { signal: controller.signal, logger: false });
    const starting = startConsuming(quiet);
    await sleep(20);
    controller.abort();
    await assert.rejects(starting, (e: unknown) => e instanceof StartInterruptedError && e.attempts === 0 && /had not joined its group yet/.test(e.message));

    const running = consumer(new MemoryClient(), {});
    await startConsuming(running);
    assert.equal(running.state, "running");
    await running.shutdown();
  });
});
