// The Confluent binding's outage watch (adapters/confluent/outage.ts), driven by hand:
// librdkafka's error events and a fake probe in, the runner's unavailable/available out.
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import { describe, test } from "node:test";
import { brokersNamed, OUTAGE_CODES, outageCode, OutageWatch } from "../../adapters/confluent/outage.ts";

/** Waits until `ok()` holds (checked every 5 ms), at most 5 s. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 5));
}

function setup(probe: () => Promise<void>) {
  const source = new EventEmitter();
  const reports: string[] = [];
  const controller = new AbortController();
  const sink = {
    unavailable: (error: unknown, brokers?: readonly string[]) => {
      reports.push(`unavailable ${(error as { code?: number }).code ?? String(error)} ${JSON.stringify(brokers ?? [])}`);
      return 1;
    },
    available: () => void reports.push("available"),
    signal: controller.signal,
  };
  const watch = new OutageWatch(source, sink, probe);
  return { source, reports, watch, controller };
}

const down = { code: OUTAGE_CODES.ALL_BROKERS_DOWN, message: "1/1 brokers are down" };
const transport = { code: OUTAGE_CODES.TRANSPORT, message: "127.0.0.1:9092/1: Disconnected (after 600000ms in state UP)" };

describe("OutageWatch", () => {
  test("all brokers down: reported at once; failed probes are more attempts; an answering probe ends it", async () => {
    let answers = false;
    let probes = 0;
    const { source, reports, watch } = setup(() => {
      probes++;
      return answers ? Promise.resolve() : Promise.reject({ code: -185, message: "timed out" });
    });
    source.emit("event.error", transport); // names the broker; its probe fails
    source.emit("event.error", down);
    await until(() => probes >= 3);
    assert.equal(watch.waiting, true);
    assert.ok(reports.length >= 3 && !reports.includes("available"), JSON.stringify(reports));
    assert.ok(reports.includes(`unavailable -187 ["127.0.0.1:9092"]`), JSON.stringify(reports));
    answers = true;
    await until(() => reports.includes("available"));
    assert.equal(reports.at(-1), "available");
    assert.equal(watch.waiting, false);
    const n = reports.length;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(reports.length, n, "nothing more once the cluster answered");
    watch.close();
  });

  test("one connection broke but a broker answers: no outage at all", async () => {
    let probes = 0;
    const { source, reports, watch } = setup(() => (probes++, Promise.resolve()));
    source.emit("event.error", transport);
    await until(() => probes >= 1);
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(reports, []);
    assert.equal(watch.waiting, false);
    source.emit("event.error", { code: -1, message: "some other error" });
    assert.deepEqual(reports, [], "other errors are not outages");
    watch.close();
  });

  test("a sign of life ends the outage; after close or abort nothing is reported", () => {
    const { source, reports, watch, controller } = setup(() => new Promise<void>(() => {})); // never answers
    source.emit("event.error", down);
    assert.equal(watch.waiting, true);
    watch.alive();
    assert.deepEqual(reports, ["unavailable -187 []", "available"]);
    watch.alive();
    assert.equal(reports.length, 2, "alive without an outage reports nothing");
    controller.abort();
    source.emit("event.error", down);
    assert.equal(reports.length, 2, "aborted: nothing more");
    watch.close();
    assert.equal(source.listenerCount("event.error"), 0);
  });

  test("outageCode: librdkafka's code, or its text when the event lost the code (-1)", () => {
    assert.equal(outageCode({ code: -1, message: "all broker connections are down" }), OUTAGE_CODES.ALL_BROKERS_DOWN);
    assert.equal(outageCode({ code: -1, message: "broker transport failure" }), OUTAGE_CODES.TRANSPORT);
    assert.equal(outageCode({ code: -193 }), OUTAGE_CODES.RESOLVE);
    assert.equal(outageCode({ code: -1, message: "Broker: Unknown topic or partition" }), undefined);
  });

  test("brokersNamed reads librdkafka's host:port/id", () => {
    assert.deepEqual(brokersNamed({ message: "GroupCoordinator: 127.0.0.1:40073/1: Connect to ipv4#127.0.0.1:40073 failed" }), ["127.0.0.1:40073"]);
    assert.deepEqual(brokersNamed({ message: "kafka-1:9092/bootstrap: Connection refused" }), ["kafka-1:9092"]);
    assert.deepEqual(brokersNamed(undefined), []);
  });
});
