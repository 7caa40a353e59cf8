/**
 * Zombie fencing in exactly-once mode, against a real broker with child processes.
 *
 * Member A consumes both partitions of a topic, producing one output per input in its
 * transactions, while records keep arriving. A is SIGSTOPped inside a transaction (it
 * stops itself just before the EndTxn, on the test's SIGUSR2), past its transaction
 * timeout and its session; member B joins, and once A's
 * session expired B owns both partitions and has committed a transaction on each (so its
 * producers' InitProducerId fenced A's). The output topic is read committed: A's outputs
 * from its first assignment are counted. A is SIGCONTed: its timers fire, its finished
 * records try to commit — and must fail, reported `fenced` (the broker said so, also to the
 * transaction whose timeout fired at the wake-up). Woken in its stale generation, A must
 * cost B nothing: it makes no new producer (whose InitProducerId would fence B's) until it
 * rejoined, and not one of B's transactions after the wake-up is lost to it. The one loss
 * that is not the zombie's is counted apart: A's rejoin is an ordinary rebalance, and a
 * transaction B still has in flight for a partition that moves to A is aborted by A's
 * rightful InitProducerId (KafkaJS rejoins without awaiting the revoke when it notices the
 * rebalance between fetches, so B's last transaction may race the handover). After everything is consumed the output topic, read
 * committed again, holds not one more output of A's first assignment, and every input has
 * exactly one output.
 *
 * Through KafkaJS (zombie_member.ts) and through `@platformatic/kafka`
 * (zombie_member_platformatic.ts, run on the pinned Node 24 of scripts/install-node.mjs: the
 * client needs Node >= 22.22). Node only (child processes). Uses KAFKA_BROKERS when set
 * (`npm run test:crash`), else starts its own broker.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel } from "kafkajs";
import { type Broker, committedOffsets, createTopic, endOffsets, startBroker } from "../broker/broker.ts";
import { readCommitted } from "../kafka/read_committed.ts";
import { ensureNode } from "../../scripts/install-node.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Line {
  member: string;
  at: number;
  ev: string;
  [k: string]: unknown;
}

class Member {
  readonly lines: Line[] = [];
  readonly proc: ChildProcess;
  readonly exited: Promise<void>;
  stderr = "";
  constructor(client: ZombieClient, name: string, brokers: string, topic: string, group: string) {
    this.proc = spawn(client.node(), ["--import", "tsx", join(HERE, client.member), JSON.stringify({ name, brokers, topic, group })], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: "1" },
    });
    let buf = "";
    this.proc.stdout!.setEncoding("utf8");
    this.proc.stdout!.on("data", (d: string) => {
      buf += d;
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          this.lines.push(JSON.parse(line) as Line);
        } catch {
          // not ours
        }
      }
    });
    this.proc.stderr!.setEncoding("utf8");
    this.proc.stderr!.on("data", (d: string) => (this.stderr = (this.stderr + d).slice(-4_000)));
    this.exited = new Promise((r) => this.proc.on("exit", () => r()));
  }
  signal(sig: NodeJS.Signals): void {
    try {
      process.kill(this.proc.pid!, sig);
    } catch {
      // gone
    }
  }
  async until(what: string, cond: (lines: Line[]) => boolean, timeoutMs: number): Promise<void> {
    const t0 = Date.now();
    while (!cond(this.lines)) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; stderr: ${this.stderr}`);
      await sleep(50);
    }
  }
}

/** A client binding the members run through: the member script and the Node that runs it. */
interface ZombieClient {
  readonly name: string;
  readonly member: string;
  readonly node: () => string;
}
const CLIENTS: ZombieClient[] = [
  { name: "kafkajs", member: "zombie_member.ts", node: () => process.execPath },
  { name: "platformatic", member: "zombie_member_platformatic.ts", node: () => ensureNode(24, { quiet: true }) },
];

for (const client of CLIENTS) describe(`exactly-once (${client.name}): a SIGSTOPped member whose partitions were reassigned commits nothing for them after SIGCONT`, () => {
  let broker: Broker | undefined;
  let brokers: string;
  const members: Member[] = [];
  const r = {
    beforeCont: 0, // A's first-assignment outputs, read committed, after B took over
    afterAll: 0, // the same count at the end
    aFailedAfterCont: 0, // A's transactions that failed (fenced or aborted) after SIGCONT
    aOutcomesAfterCont: {} as Record<string, number>, // A's reported outcomes after SIGCONT, by outcome
    bFailedAfterCont: 0, // B's (the rightful owner's) transactions fenced or aborted after SIGCONT
    bLostToZombie: 0, // of those, all but the handover's (below)
    bLostAtHandover: 0, // of those, on a partition A's rejoin gave A, after A's rightful producer for it was made
    bOutcomesAfterCont: {} as Record<string, number>,
    stoppedMs: 0, // from A's stop inside a transaction to SIGCONT (A's transaction timeout is 5 s)
    aRejoinedAfterCont: false,
    aProducersBeforeRejoin: 0, // producers A made after SIGCONT and before its first join after it
    aCommittedBeforeStop: 0,
    inputs: 0,
    duplicates: 0,
    missing: 0,
  };

  let stopProduction = (): Promise<void> => Promise.resolve();

  before(async () => {
    if (process.env.KAFKA_BROKERS) brokers = process.env.KAFKA_BROKERS;
    else {
      broker = await startBroker();
      brokers = broker.brokers;
    }
    const stamp = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
    const topic = `zombie-${stamp}`, group = `${topic}-group`;
    await createTopic(brokers, topic, 2);
    await createTopic(brokers, `${topic}.out`, 2);
    const kafka = new Kafka({ clientId: "zombie-test", brokers: [brokers], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    let producing = true, seq = 0;
    const production = (async () => {
      while (producing) {
        const messages = Array.from({ length: 20 }, () => ({ key: `k${seq % 50}`, value: String(seq++) }));
        await producer.send({ topic, acks: -1, messages });
        await sleep(100);
      }
    })();
    // A failed or timed-out before() goes on running (node:test does not cancel it): after()
    // ends the production, or it went on producing for ever and the file never ended (a
    // clean-clone npm test at load 35 hung in this file for over 50 minutes).
    stopProduction = async () => {
      producing = false;
      await production.catch(() => {});
      await producer.disconnect().catch(() => {});
    };

    const a = new Member(client, "A", brokers, topic, group);
    members.push(a);
    await a.until("A owning both partitions with a committed transaction on each", (ls) =>
      ls.some((l) => l.ev === "join" && (l.partitions as number[]).length === 2) &&
      new Set(ls.filter((l) => l.ev === "tx" && l.outcome === "committed" && (l.records as number) > 0).map((l) => l.partition)).size === 2, 60_000);
    await sleep(700); // A is mid-cycle: records running, finished ones staged
    r.aCommittedBeforeStop = a.lines.filter((l) => l.ev === "tx" && l.outcome === "committed").length;
    a.signal("SIGUSR2"); // A stops itself inside its next transaction, before the EndTxn
    await a.until("A stopped inside a transaction", (ls) => ls.some((l) => l.ev === "stopping"), 10_000);
    const stoppedAt = Date.now();

    const b = new Member(client, "B", brokers, topic, group);
    members.push(b);
    await b.until("B owning both partitions with a committed transaction on each after its join", (ls) => {
      const j = ls.find((l) => l.ev === "join" && (l.partitions as number[]).length === 2);
      return !!j && new Set(ls.filter((l) => l.ev === "tx" && l.outcome === "committed" && l.at > j.at).map((l) => l.partition)).size === 2;
    }, 60_000);
    const isFirstOfA = (o: { headers: Record<string, string> }): boolean => o.headers.by === "A" && o.headers.join === "1";
    r.beforeCont = (await readCommitted(brokers, `${topic}.out`)).filter(isFirstOfA).length;
    const contAt = Date.now();
    r.stoppedMs = contAt - stoppedAt;
    a.signal("SIGCONT");
    console.error(`zombie (${client.name}): A stopped ${((contAt - stoppedAt) / 1000).toFixed(1)} s; ${r.beforeCont} outputs of A's first assignment committed`);
    await sleep(8_000); // A wakes: its finished records try to commit, it rejoins the group
    await stopProduction();

    // Everything consumed and committed (by B, or by A again in a later assignment).
    const total = (m: Map<number, string>): number => [...m.values()].reduce((n, v) => n + Number(v), 0);
    const end = total(await endOffsets(brokers, topic));
    const t0 = Date.now();
    while (total(await committedOffsets(brokers, group, topic)) < end) {
      if (Date.now() - t0 > 60_000) throw new Error("the group did not commit every input within 60 s");
      await sleep(250);
    }
    for (const m of members) m.signal("SIGTERM");
    await Promise.race([Promise.all(members.map((m) => m.exited)), sleep(30_000)]);
    const outputs = await readCommitted(brokers, `${topic}.out`);
    r.afterAll = outputs.filter(isFirstOfA).length;
    r.aFailedAfterCont = a.lines.filter((l) => l.ev === "tx" && l.outcome !== "committed" && l.at >= contAt).length;
    const tally = (m: Member): Record<string, number> => {
      const t: Record<string, number> = {};
      for (const l of m.lines) if (l.ev === "tx" && l.at >= contAt) t[l.outcome as string] = (t[l.outcome as string] ?? 0) + 1;
      return t;
    };
    r.aOutcomesAfterCont = tally(a);
    r.bOutcomesAfterCont = tally(b);
    const rejoin = a.lines.find((l) => l.ev === "join" && l.at >= contAt);
    r.aRejoinedAfterCont = rejoin !== undefined;
    r.aProducersBeforeRejoin = a.lines.filter((l) => l.ev === "producer" && l.at >= contAt && (!rejoin || l.at < rejoin.at)).length;
    const bFailed = b.lines.filter((l) => l.ev === "tx" && l.outcome !== "committed" && l.at >= contAt);
    r.bFailedAfterCont = bFailed.length;
    const handedAt = new Map<number, number>(); // partition A's rejoin gave it -> when A made its producer
    for (const l of a.lines) {
      if (!rejoin || l.ev !== "producer" || l.at < rejoin.at) continue;
      const id = String(l.id);
      const p = Number(id.slice(id.lastIndexOf("-") + 1));
      if ((rejoin.partitions as number[]).includes(p) && !handedAt.has(p)) handedAt.set(p, l.at);
    }
    r.bLostAtHandover = bFailed.filter((l) => l.at >= (handedAt.get(l.partition as number) ?? Infinity)).length;
    r.bLostToZombie = r.bFailedAfterCont - r.bLostAtHandover;
    const count = new Map<string, number>();
    for (const o of outputs) count.set(o.headers.from, (count.get(o.headers.from) ?? 0) + 1);
    r.inputs = end;
    for (let p = 0; p < 2; p++) {
      const e = Number((await endOffsets(brokers, topic)).get(p));
      for (let o = 0; o < e; o++) {
        const n = count.get(`${p}:${o}`) ?? 0;
        if (n === 0) r.missing++;
        if (n > 1) r.duplicates += n - 1;
      }
    }
    console.error(`zombie (${client.name}): ${JSON.stringify(r)}`);
    // What happened after the wake-up, in order (ms after SIGCONT): joins, producers made, transactions not committed.
    const timeline = members.flatMap((m) => m.lines)
      .filter((l) => l.at >= contAt && (l.ev === "join" || l.ev === "producer" || (l.ev === "tx" && l.outcome !== "committed")))
      .sort((x, y) => x.at - y.at)
      .map((l) => `${l.at - contAt} ${l.member} ${l.ev}${l.ev === "join" ? ` ${JSON.stringify(l.partitions)}` : l.ev === "tx" ? ` p${l.partition} ${l.outcome} (${l.error})` : ` ${l.id}`}`);
    console.error(`zombie timeline (${client.name}): ${timeline.join("; ")}`);
  }, { timeout: 360_000 });

  after(async () => {
    await stopProduction();
    for (const m of members) m.signal("SIGKILL");
    await broker?.stop();
  });

  test("A had committed transactions before it was stopped", () => {
    assert.ok(r.aCommittedBeforeStop > 0);
    assert.ok(r.beforeCont > 0, "A's first assignment committed outputs before the stop");
  });

  test("after the reassignment the output topic gains nothing from A's first assignment", () => {
    assert.equal(r.afterAll, r.beforeCont);
  });

  test("A's transactions after SIGCONT were refused (fenced or aborted), not committed", () => {
    assert.ok(r.aFailedAfterCont > 0, "A tried no transaction after SIGCONT");
  });

  test("A's refused transactions are reported fenced: the broker said so", () => {
    assert.ok(r.stoppedMs > 5_000, `A's stop (${r.stoppedMs} ms) outlasted its transaction timeout: the in-flight one timed out at the wake-up`);
    assert.ok((r.aOutcomesAfterCont.fenced ?? 0) > 0, `A reported no fenced transaction after SIGCONT: ${JSON.stringify(r.aOutcomesAfterCont)}`);
    assert.equal(r.aOutcomesAfterCont.aborted ?? 0, 0, `A reported aborted, not fenced: ${JSON.stringify(r.aOutcomesAfterCont)}`);
  });

  test("woken in its stale generation, A makes no producer until it rejoined", () => {
    assert.ok(r.aRejoinedAfterCont, "A rejoined the group after SIGCONT");
    assert.equal(r.aProducersBeforeRejoin, 0, "producers A made after SIGCONT before its rejoin (each fences B's)");
  });

  test("B, the rightful owner, loses no transaction to the woken zombie", () => {
    assert.equal(r.bLostToZombie, 0, `B's transactions after SIGCONT: ${JSON.stringify(r.bOutcomesAfterCont)}, ${r.bLostAtHandover} at the handover`);
  });

  test("every input has exactly one committed output", () => {
    assert.ok(r.inputs > 0);
    assert.equal(r.missing, 0, "inputs without an output");
    assert.equal(r.duplicates, 0, "outputs beyond the first");
  });
});
