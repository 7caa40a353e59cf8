/**
 * The chaos suite, short: one round per member runtime (node, bun, deno) of 3,000
 * records under faults (test/chaos/harness.ts): members SIGKILLed and SIGTERMed and
 * replaced, a late joiner, a broker SIGKILL + restart on the same data dir and port,
 * dropped proxied connections. Each round starts its own broker (it is killed on purpose),
 * so KAFKA_BROKERS is not used.
 *
 * Asserted: nothing lost, the group's committed offsets equal the end offsets, no member
 * exited on its own, the poison record dead-lettered (and nothing else), key order kept
 * within every assignment, every log line names a produced record — and that the faults
 * really happened. Duplicates are measured, not bounded (see `npm run chaos`).
 *
 * The harness runs on the runtime of the test; `npm run test:chaos` runs it on Node.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type MemberRuntime, runChaos, summaryLine } from "./harness.ts";

const RUNTIMES: MemberRuntime[] = ["node", "bun", "deno"];
const SEEDS: Record<MemberRuntime, number> = { node: 7, bun: 11, deno: 13 };

describe("chaos: one short round per member runtime", () => {
  for (const runtime of RUNTIMES) {
    test(`members on ${runtime}: lose nothing, commit the end, dead-letter the poison`, { timeout: 240_000 }, async () => {
      const [r] = await runChaos({
        rounds: 1,
        runtime,
        records: 3_000,
        faultMs: 12_000,
        drainTimeoutMs: 120_000,
        seed: SEEDS[runtime],
        progress: (line) => console.error(line),
      });
      const why = summaryLine(r);
      assert.equal(r.error, undefined, why);
      assert.equal(r.records - r.produceDuplicates, 3_000, why);
      assert.ok(r.sigkills >= 1 && r.sigterms >= 1, `a SIGKILL and a SIGTERM: ${why}`);
      assert.equal(r.brokerRestarts, 1, why);
      assert.ok(r.connectionsDropped >= 1, `a dropped connection: ${why}`);
      assert.equal(r.lost, 0, why);
      assert.equal(r.committedEqualsEnd, true, why);
      assert.equal(r.exitedOnOwn, 0, why);
      assert.equal(r.deadLettered, true, why);
      assert.equal(r.poisonFinished, false, why);
      assert.equal(r.orderViolations, 0, why);
      assert.equal(r.mismatches, 0, why);
    });
  }
});
