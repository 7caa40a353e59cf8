// The Confluent binding's start (adapters/confluent/start.ts), driven by hand: fake consumers
// whose connects the test settles, a fake internal client (error events, metadata probes),
// the runner's unavailable/available out.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, test } from "node:test";
import { ConfluentStart, confluentRefusal, isUnanswered } from "../../adapters/confluent/start.ts";
import { ClusterRefusedError } from "../../core/errors.ts";

/** Waits until `ok()` holds (checked every 5 ms), at most 5 s. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
}

/** A fake internal client: error events, and metadata probes that answer as `answers` says. */
class Internal extends EventEmitter {
  answers = false;
  probes = 0;
  getMetadata(_o: { timeout?: number }, cb: (err: unknown) => void): void {
    this.probes++;
    const answers = this.answers;
    setTimeout(() => cb(answers ? undefined : { code: -195, message: "Local: Broker transport failure" }), 1);
  }
}

/** A fake consumer (or producer): its connect settles when the test says; it records what happened to it. */
class Fake {
  readonly log: string[] = [];
  readonly internal = new Internal();
  settle?: (error?: unknown) => void;
  connect(): Promise<void> {
    this.log.push("connect");
    return new Promise((resolve, reject) => (this.settle = (e) => (e === undefined ? resolve() : reject(e))));
  }
  disconnect(): Promise<void> {
    this.log.push("disconnect");
    return Promise.resolve();
  }
}

const unreachable = { code: -1, message: "broker transport failure" }; // as the client's connect rejects

function setup(options: { producer?: Fake } = {}) {
  const consumers: Fake[] = [new Fake()];
  const reports: string[] = [];
  const controller = new AbortController();
  const sink = {
    unavailable: (error: unknown) => {
      reports.push(`unavailable ${(error as { code?: number }).code}`);
      return 5;
    },
    available: () => void reports.push("available"),
    signal: controller.signal,
  };
  const start = new ConfluentStart<Fake>({
    first: consumers[0],
    create: () => {
      const c = new Fake();
      consumers.push(c);
      return c;
    },
    internal: (c) => c.internal,
    ...(options.producer ? { producer: options.producer } : {}),
    sink,
    topics: ["orders"],
    probeMs: 10,
    firstProbeMs: 5,
  });
  return { start, consumers, reports, controller };
}

describe("ConfluentStart", () => {
  test("no broker: probes report the outage while a connect is pending; a failed connect is left and a fresh consumer tried; an answer ends it", async () => {
    const producer = new Fake();
    const { start, consumers, reports } = setup({ producer });
    const connecting = start.connect();
    await until(() => reports.length >= 2);
    assert.ok(reports.every((r): boolean => r === "unavailable -195"), JSON.stringify(reports));
    consumers[0].settle!(unreachable); // librdkafka's metadata timeout
    await until(() => consumers.length === 2 && consumers[1].log.includes("connect"));
    assert.deepEqual(consumers[0].log, ["connect", "disconnect"], "the failed consumer is left disconnected before the next attempt");
    assert.ok(reports.includes("unavailable -1"), "the failed connect is a failed attempt");
    assert.deepEqual(producer.log, [], "the producer waits for the consumer");
    consumers[1].internal.answers = true;
    consumers[1].settle!();
    await until(() => producer.log.includes("connect"));
    producer.settle!();
    assert.equal(await connecting, consumers[1]);
    assert.equal(reports.at(-1), "available");
    assert.deepEqual(consumers[1].log, ["connect"], "the connected consumer stays connected");
    assert.equal(consumers.length, 2);
  });

  test("a refusal fails at once: seen as an error event while connecting, or as the connect's error", async () => {
    {
      const { start, consumers } = setup();
      const connecting = start.connect();
      consumers[0].internal.emit("event.error", { code: -1, message: "authentication failure" });
      await assert.rejects(connecting, (e: unknown) => e instanceof ClusterRefusedError && e.kind === "authentication");
      assert.deepEqual(consumers[0].log, ["connect"], "not disconnected while its connect is pending");
      consumers[0].settle!(unreachable);
      await start.settled;
      assert.deepEqual(consumers[0].log, ["connect", "disconnect"], "disconnected once its connect settled");
      assert.equal(consumers.length, 1, "no second attempt");
    }
    {
      const { start, consumers, reports } = setup();
      const connecting = start.connect();
      consumers[0].settle!({ code: 30, message: "Broker: Group authorization failed" });
      await assert.rejects(connecting, (e: unknown) => {
        assert.ok(e instanceof ClusterRefusedError && e.kind === "authorization", String(e));
        assert.deepEqual(e.topics, ["orders"]);
        return true;
      });
      assert.deepEqual(consumers[0].log, ["connect", "disconnect"]);
      assert.ok(!reports.includes("available"));
    }
  });

  test("another error (a bad configuration) fails at once as it is", async () => {
    const { start, consumers } = setup();
    const connecting = start.connect();
    const bad = new Error("Invalid value for configuration property \"session.timeout.ms\"");
    consumers[0].settle!(bad);
    await assert.rejects(connecting, (e: unknown) => e === bad);
    assert.equal(consumers.length, 1);
  });

  test("the signal (or close) ends the wait at once; a pending connect is disconnected once it settles", async () => {
    for (const how of ["abort", "close"] as const) {
      const { start, consumers, controller } = setup();
      const connecting = start.connect();
      await until(() => consumers[0].internal.probes >= 1);
      if (how === "abort") controller.abort();
      else start.close();
      assert.equal(await connecting, undefined, how);
      assert.deepEqual(consumers[0].log, ["connect"]);
      consumers[0].settle!(); // it connected after all
      await start.settled;
      assert.deepEqual(consumers[0].log, ["connect", "disconnect"], how);
    }
    {
      // during the backoff between attempts: nothing is connected, nothing more is tried
      const { start, consumers, controller } = setup();
      const connecting = start.connect();
      consumers[0].settle!(unreachable);
      await until(() => consumers[0].log.length === 2);
      controller.abort();
      assert.equal(await connecting, undefined);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(consumers.length, 1);
    }
    {
      // while the producer connects: both are disconnected once it settles
      const producer = new Fake();
      const { start, consumers, controller, reports } = setup({ producer });
      const connecting = start.connect();
      consumers[0].settle!();
      await until(() => producer.log.length === 1);
      controller.abort();
      assert.equal(await connecting, undefined);
      producer.settle!();
      await start.settled;
      assert.deepEqual(consumers[0].log, ["connect", "disconnect"]);
      assert.deepEqual(producer.log, ["connect", "disconnect"]);
      assert.ok(!reports.includes("available"));
    }
  });

  test("a producer that fails to connect fails the start with nothing left connected", async () => {
    const producer = new Fake();
    const { start, consumers } = setup({ producer });
    const connecting = start.connect();
    consumers[0].settle!();
    await until(() => producer.log.length === 1);
    producer.settle!({ code: -169, message: "Local: Authentication failure" });
    await assert.rejects(connecting, (e: unknown) => e instanceof ClusterRefusedError && e.kind === "authentication");
    assert.deepEqual(consumers[0].log, ["connect", "disconnect"]);
    assert.deepEqual(producer.log, ["connect", "disconnect"]);
  });
});

describe("confluentRefusal / isUnanswered", () => {
  test("librdkafka's codes, and the texts of its error events (code -1)", () => {
    assert.equal(confluentRefusal({ code: -169, message: "x" }, [])?.kind, "authentication");
    assert.equal(confluentRefusal({ code: -1, message: "sasl authentication failed" }, [])?.kind, "authentication");
    assert.equal(confluentRefusal({ code: 29, message: "Broker: Topic authorization failed" }, ["t"])?.topics[0], "t");
    assert.equal(confluentRefusal({ code: -1, message: "cluster authorization failed" }, [])?.kind, "authorization");
    assert.equal(confluentRefusal(unreachable, []), undefined);
    assert.equal(confluentRefusal(new Error("outer", { cause: { code: 58 } }), [])?.kind, "authentication", "a cause counts");
    for (const e of [unreachable, { code: -187 }, { code: -185 }, { code: 7 }, { code: -1, message: "all broker connections are down" }]) {
      assert.equal(isUnanswered(e), true, JSON.stringify(e));
    }
    assert.equal(isUnanswered(new Error("Invalid value for configuration property")), false);
    assert.equal(isUnanswered({ code: -186, message: "Local: Invalid argument or configuration" }), false);
  });
});
