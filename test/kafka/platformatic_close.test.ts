/**
 * Real broker, @platformatic/kafka binding: a shutdown while the group's rebalance waits for a
 * member that died. Member C (a child process) is SIGKILLed, so the group's next rebalance
 * waits for C's session (10 s) to end; member B joins, and member A, told to rebalance, sends
 * its JoinGroup, which the coordinator holds until the rebalance ends. A is then shut down.
 * Its drain takes no time (nothing runs), but `@platformatic/kafka`'s `Consumer.close()`
 * leaves the group only once that JoinGroup is answered: it took 5.9–8.4 s here before
 * `done` was bounded (test/chaos/README.md). Now A's `done` comes within the grace and the
 * binding's close bound (3 s), while the rebalance is still pending, and the client leaves
 * the group in the background once the rebalance ends. The join A had pending then fails on
 * its closed connections and the client emits that as `error`: the binding's listener stays
 * (before, it was removed at the close and the error was an uncaught exception, which fails
 * this file on Node and Bun).
 *
 * Runs on Bun, Deno and Node >= 22.22 (scripts/run-kafka-tests.mjs runs it on the pinned
 * Node 24 where the default Node is older); uses KAFKA_BROKERS when set, else starts its
 * own broker.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { createTopic, produce, withBroker } from "../broker/broker.ts";
import { bindings } from "./bindings.ts";
import { runtimeCommand, unique, waitFor } from "./helpers.ts";

const MEMBER = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "sigterm_member.ts");
const GRACE_MS = 400;
/** The binding's bound on the client's close (adapters/platformatic/client.ts). */
const CLOSE_BOUND_MS = 3_000;

for (const binding of bindings().filter((b) => b.name === "platformatic")) {
  test(`close during a rebalance that waits for a dead member (${binding.name}): done within the grace and the close bound`, { timeout: 120_000 }, async () => {
    await withBroker(async (brokers) => {
      const topic = unique("platformatic-close");
      const groupId = unique("platformatic-close-group");
      await createTopic(brokers, topic, 4);
      await produce(brokers, topic, Array.from({ length: 400 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
      const dir = mkdtempSync(join(tmpdir(), "platformatic-close-"));
      const log = join(dir, "c.log");
      const [cmd, args] = runtimeCommand(MEMBER);
      const c = spawn(cmd, args, {
        env: { ...process.env, KAFKA_BROKERS: brokers, TOPIC: topic, GROUP: groupId, LOG: log, GRACE_MS: String(GRACE_MS), BINDING: "platformatic" },
        stdio: ["ignore", "ignore", "inherit"],
      });
      const cExited = new Promise<void>((resolve) => c.once("exit", () => resolve()));
      const started = (): boolean => {
        try {
          return readFileSync(log, "utf8").includes("S ");
        } catch {
          return false;
        }
      };
      const members = [];
      try {
        await waitFor(started, 60_000, "member C started records");
        const aAssigned: number[][] = [];
        const a = binding.create({
          brokers,
          groupId,
          topics: [topic],
          fromBeginning: true,
          shutdownGraceMs: GRACE_MS,
          onAssignment: (partitions) => aAssigned.push(partitions),
          handler: () => {},
        });
        members.push(a);
        await a.start();
        await waitFor(() => aAssigned.some((p) => p.length > 0), 60_000, "A shares the partitions with C");
        c.kill("SIGKILL");
        await cExited;
        const killedAt = Date.now();
        const bAssigned: number[][] = [];
        const b = binding.create({ brokers, groupId, topics: [topic], fromBeginning: true, onAssignment: (partitions) => bAssigned.push(partitions), handler: () => {} });
        members.push(b);
        void b.start().catch(() => {});
        // A hears of the rebalance at its next heartbeat, revokes everything (eager) and sends its JoinGroup.
        const before = aAssigned.length;
        await waitFor(() => aAssigned.length > before && aAssigned[aAssigned.length - 1].length === 0, 30_000, "A revoked for the rebalance");
        const t0 = Date.now();
        await a.shutdown();
        const tookMs = Date.now() - t0;
        const pending = bAssigned.every((p) => p.length === 0);
        console.log(`# platformatic close: A's shutdown took ${tookMs} ms, ${Date.now() - killedAt} ms after C's SIGKILL; the rebalance ${pending ? "still pending" : "over"}`);
        assert.ok(pending, "the rebalance was still pending when A's shutdown ended (what this test is about)");
        assert.ok(tookMs < GRACE_MS + CLOSE_BOUND_MS + 1_500, `A's done within the grace and the close bound (${tookMs} ms)`);
        assert.equal(a.state, "stopped");
        // The rebalance ends once C's session does: B gets every partition (A left in the background).
        await waitFor(() => bAssigned.length > 0 && bAssigned[bAssigned.length - 1].length === 4, 60_000, "B assigned every partition");
      } finally {
        c.kill("SIGKILL");
        await Promise.all(members.map((m) => m.shutdown().catch(() => {})));
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
