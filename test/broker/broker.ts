/**
 * A real, throw-away Apache Kafka broker for integration tests, benchmarks and the demo.
 *
 * No Docker: Kafka's jars come from Maven (test/broker/pom.xml) and run on the local
 * JVM as one single-node KRaft process (`process.roles=broker,controller`) bound to
 * 127.0.0.1 on free ports, with its data in a fresh temp dir. Runs unchanged on Node 20
 * (via tsx), Bun and Deno: only `node:` built-ins plus kafkajs.
 *
 * Caches (in `<repo>/.cache/kafka/`, git-ignored, keyed by the pom's content hash):
 * - `classpath-<hash>.txt`: the resolved classpath, so later starts skip Maven;
 * - `cds-<hash>.jsa`: a JVM class-data-sharing archive written when the first broker
 *   stops; later JVMs map it and start about twice as fast.
 *
 * Environment knobs:
 * - `KAFKA_BROKERS`: `withBroker` uses this broker list instead of starting a broker;
 * - `KAFKA_JVM_OPTS`: extra JVM flags (space separated), appended to the defaults;
 * - `KAFKA_CDS=0`: neither use nor write the class-data-sharing archive;
 * - `JAVA_HOME`, `MVN`: which `java` and `mvn` to run (default: from PATH);
 * - `KAFKA_DEBUG_TIMING=1`: print format and spawn-to-ready times to stderr.
 *
 * Orphans: `stop()` ends the broker; a process 'exit' handler SIGKILLs brokers whose
 * `stop()` never ran; and a tiny `sh` watchdog SIGKILLs the broker when the process that
 * started it dies without running exit handlers (SIGKILL, an unhandled SIGTERM).
 *
 * Crashes (the chaos suite, test/chaos/): `kill()` SIGKILLs the JVM and keeps its data
 * dir and ports, `restart()` starts a new JVM on them; every JVM gets its own watchdog
 * and exit-hook entry, and `stop()` still removes the data dir. `advertisedPort` adds a
 * second client listener advertised at another port, for a TCP proxy in front of it.
 */
import { Buffer } from "node:buffer";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type AddressInfo, type Server } from "node:net";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel, Partitioners, type Admin } from "kafkajs";

/** A running broker started by {@link startBroker}. */
export interface Broker {
  /** Bootstrap address for clients, `"127.0.0.1:PORT"`. */
  brokers: string;
  /** Process id of the broker JVM (a new one after {@link Broker.restart}). */
  readonly pid: number;
  /** Temp dir holding server.properties and the Kafka log dirs; removed by `stop()`. */
  dataDir: string;
  /** The broker's stdout/stderr (inside `dataDir` unless `logDir` was given). */
  logFile: string;
  /**
   * With {@link BrokerOptions.advertisedPort}: the port the second client listener
   * (`PROXIED`) binds, which a proxy on the advertised port forwards to.
   */
  proxiedPort?: number;
  /** With {@link BrokerOptions.saslPlain}: the bootstrap address of the SASL listener, `"127.0.0.1:PORT"`. */
  saslBrokers?: string;
  /** Whether the broker JVM is running now (false between `kill()` and `restart()`). */
  readonly running: boolean;
  /** SIGTERM the broker (SIGKILL if it lingers), wait for it to exit, remove `dataDir`. */
  stop(): Promise<void>;
  /**
   * SIGKILL the broker JVM and wait for it to exit, keeping `dataDir` and the ports for
   * {@link Broker.restart} (a crash, not a shutdown). `stop()` and the exit hooks still
   * clean up afterwards. No-op when it is not running.
   */
  kill(): Promise<void>;
  /**
   * Start the broker JVM again on the same data dir and ports (no format: it recovers
   * its logs) and wait until it answers a metadata request. Rejects if it is running,
   * stopped, or does not answer within the start timeout.
   */
  restart(): Promise<void>;
}

/** Options for {@link startBroker}. */
export interface BrokerOptions {
  /** Write the broker log here (kept after `stop()`), not in the removed temp dir. */
  logDir?: string;
  /** How long to wait for the broker to answer a metadata request (default 60 s). */
  timeoutMs?: number;
  /**
   * Add a second client listener, `PROXIED`, on a free port ({@link Broker.proxiedPort})
   * that advertises `127.0.0.1:<advertisedPort>`: clients bootstrapping through a proxy on
   * that port keep going through it (metadata names the listener a request came in on).
   * `brokers` stays the direct listener.
   */
  advertisedPort?: number;
  /**
   * Add a client listener, `SASL` (SASL_PLAINTEXT, mechanism PLAIN), on a free port
   * ({@link Broker.saslBrokers}) that accepts only this user and password. `brokers`
   * stays the PLAINTEXT listener.
   */
  saslPlain?: { username: string; password: string };
  /**
   * The client listener's port on 127.0.0.1 (default: a free port). For a broker at a fixed
   * address such as `npm run broker`'s 127.0.0.1:9092; the other listeners stay on free ports.
   */
  port?: number;
}

const HERE = dirname(fileURLToPath(import.meta.url));
const POM = join(HERE, "pom.xml");
const CACHE_DIR = resolve(HERE, "..", "..", ".cache", "kafka");
const START_TIMEOUT_MS = 60_000;
/** Grace period after SIGTERM; longer when the JVM writes the CDS archive at exit. */
const STOP_GRACE_MS = 5_000;
const STOP_GRACE_DUMP_MS = 30_000;
const DEFAULT_JVM_OPTS = ["-Xms256m", "-Xmx1g", "-XX:+UseG1GC"];
/**
 * For a JVM restarted after a SIGKILL: the controller keeps the killed broker's
 * registration until its session expires (default 9 s) before the new incarnation may
 * register, so a shorter session makes a restart answer ~7 s sooner. (The broker
 * heartbeats its own controller in-process: a short session is safe here.)
 */
const RESTART_OVERRIDES = ["broker.session.timeout.ms=2500", "broker.heartbeat.interval.ms=500"];

const live = new Map<number, { dataDir: string }>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const [pid, { dataDir }] of live) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
      try {
        rmSync(dataDir, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
    live.clear();
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((res) => setTimeout(res, ms));
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Last `maxLines` lines of a file (reads at most the last 64 KiB). */
function tail(file: string, maxLines = 60): string {
  try {
    const size = statSync(file).size;
    const len = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(len);
    const fd = openSync(file, "r");
    try {
      readSync(fd, buf, 0, len, size - len);
    } finally {
      closeSync(fd);
    }
    return buf.toString("utf8").split("\n").slice(-maxLines).join("\n");
  } catch (e) {
    return `(no log: ${errorText(e)})`;
  }
}

/** Run a command to completion, collecting its output. */
function run(
  cmd: string,
  args: string[],
): Promise<{ code: number | null; signal: string | null; output: string }> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    child.stdout?.on("data", (c: Buffer) => chunks.push(c));
    child.stderr?.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", (e) => rej(new Error(`cannot run ${cmd}: ${errorText(e)}`)));
    child.on("close", (code, signal) =>
      res({ code, signal, output: Buffer.concat(chunks).toString("utf8") })
    );
  });
}

function javaBin(): string {
  const home = process.env.JAVA_HOME;
  return home ? join(home, "bin", "java") : "java";
}

function pomHash(): string {
  return createHash("sha256").update(readFileSync(POM)).digest("hex").slice(0, 16);
}

/** Resolve Kafka's classpath with Maven, cached in `.cache/kafka/` by the pom's hash. */
async function resolveClasspath(hash: string): Promise<string> {
  const cached = join(CACHE_DIR, `classpath-${hash}.txt`);
  if (existsSync(cached)) {
    const cp = readFileSync(cached, "utf8").trim();
    // ~/.m2 may have been cleaned since: only trust the cache if every jar is there.
    if (cp && cp.split(":").every((jar) => existsSync(jar))) return cp;
  }
  mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = `${cached}.${process.pid}.tmp`;
  const mvn = process.env.MVN ?? "mvn";
  const r = await run(mvn, [
    "-q",
    "-B",
    "-f",
    POM,
    "dependency:build-classpath",
    `-Dmdep.outputFile=${tmp}`,
  ]);
  if (r.code !== 0 || !existsSync(tmp)) {
    rmSync(tmp, { force: true });
    throw new Error(`mvn dependency:build-classpath failed (exit ${r.code}):\n${r.output.slice(-4000)}`);
  }
  renameSync(tmp, cached); // atomic: concurrent starts never read a half-written file
  return readFileSync(cached, "utf8").trim();
}

/** `n` distinct free TCP ports on 127.0.0.1 (held open together so they differ). */
async function freePorts(n: number): Promise<number[]> {
  const listen = (): Promise<Server> =>
    new Promise((res, rej) => {
      const s = createServer();
      s.once("error", rej);
      s.listen(0, "127.0.0.1", () => res(s));
    });
  const servers: Server[] = [];
  for (let i = 0; i < n; i++) servers.push(await listen());
  const ports = servers.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((res) => s.close(() => res()))));
  return ports;
}

/** A Kafka cluster id: 16 random bytes, base64url (must not start with '-': CLI args). */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}

/** `proxied`: the PROXIED listener's bound port and the port it advertises. */
function serverProperties(
  dataDir: string,
  port: number,
  cport: number,
  proxied?: { port: number; advertised: number },
  sasl?: { port: number; username: string; password: string },
): string {
  const saslListener = sasl ? `,SASL://127.0.0.1:${sasl.port}` : "";
  const extra = (proxied ? `,PROXIED://127.0.0.1:${proxied.port}` : "") + saslListener;
  const extraAdv = (proxied ? `,PROXIED://127.0.0.1:${proxied.advertised}` : "") + saslListener;
  const q = (v: string): string => JSON.stringify(v);
  const saslLines = sasl
    ? [
      "listener.name.sasl.sasl.enabled.mechanisms=PLAIN",
      "listener.name.sasl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required " +
      `username=${q(sasl.username)} password=${q(sasl.password)} user_${sasl.username}=${q(sasl.password)};`,
    ]
    : [];
  return [
    "process.roles=broker,controller",
    "node.id=1",
    `controller.quorum.voters=1@127.0.0.1:${cport}`,
    `listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${cport}${extra}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${port}${extraAdv}`,
    "controller.listener.names=CONTROLLER",
    "inter.broker.listener.name=PLAINTEXT",
    `listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT${proxied ? ",PROXIED:PLAINTEXT" : ""}${sasl ? ",SASL:SASL_PLAINTEXT" : ""}`,
    ...saslLines,
    `log.dirs=${join(dataDir, "logs")}`,
    "num.partitions=1",
    "auto.create.topics.enable=false",
    "group.initial.rebalance.delay.ms=0",
    "offsets.topic.replication.factor=1",
    "offsets.topic.num.partitions=1",
    "transaction.state.log.replication.factor=1",
    "transaction.state.log.min.isr=1",
    "transaction.state.log.num.partitions=1",
    "share.coordinator.state.topic.replication.factor=1",
    "share.coordinator.state.topic.min.isr=1",
    "",
  ].join("\n");
}

const LOG4J2 = [
  "status = warn",
  "appender.out.type = Console",
  "appender.out.name = STDOUT",
  "appender.out.layout.type = PatternLayout",
  "appender.out.layout.pattern = [%d] %p %m (%c)%n",
  "rootLogger.level = INFO",
  "rootLogger.appenderRef.out.ref = STDOUT",
  // The full config dump at every start is noise here.
  "logger.config.name = org.apache.kafka.common.config.AbstractConfig",
  "logger.config.level = WARN",
  "",
].join("\n");

/** Try one metadata round trip; true when the broker answers. */
async function probe(brokers: string): Promise<boolean> {
  const admin = new Kafka({
    clientId: "offset-frontier-probe",
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    await admin.listTopics();
    return true;
  } catch {
    return false;
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** Resolves when `child` has exited (immediately if it already has). */
function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((res) => child.once("exit", () => res()));
}

/**
 * Start the watchdog that, once this process is gone, SIGKILLs the broker `pid` and
 * removes `dataDir`. It ends by itself within a second of the broker's exit.
 */
function startWatchdog(pid: number, dataDir: string): ChildProcess | undefined {
  const script = 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
    'if ! kill -0 "$1" 2>/dev/null; then kill -9 "$2" 2>/dev/null; sleep 1; rm -rf "$3"; fi; exit 0';
  try {
    const args = ["-c", script, "kafka-watchdog", String(process.pid), String(pid), dataDir];
    const w = spawn("sh", args, {
      detached: true,
      stdio: "ignore",
    });
    w.on("error", () => {});
    w.unref();
    return w;
  } catch {
    return undefined;
  }
}

/**
 * Start a single-node KRaft broker on free 127.0.0.1 ports and wait until a KafkaJS
 * admin client can list topics. Fails after ~60 s with the tail of the broker log.
 */
export async function startBroker(opts: BrokerOptions = {}): Promise<Broker> {
  const timeoutMs = opts.timeoutMs ?? START_TIMEOUT_MS;
  const hash = pomHash();
  const cp = await resolveClasspath(hash);
  const java = javaBin();
  const extra = (process.env.KAFKA_JVM_OPTS ?? "").split(/\s+/).filter(Boolean);
  const useCds = process.env.KAFKA_CDS !== "0";
  const cds = join(CACHE_DIR, `cds-${hash}.jsa`);

  for (let attempt = 1;; attempt++) {
    const dataDir = mkdtempSync(join(tmpdir(), "offset-frontier-kafka-"));
    const [freePort, cport, pport, sport] = await freePorts(4);
    const port = opts.port ?? freePort;
    const proxied = opts.advertisedPort !== undefined ? { port: pport, advertised: opts.advertisedPort } : undefined;
    const sasl = opts.saslPlain ? { port: sport, ...opts.saslPlain } : undefined;
    const brokers = `127.0.0.1:${port}`;
    let logFile = join(dataDir, "broker.log");
    if (opts.logDir) {
      mkdirSync(opts.logDir, { recursive: true });
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      logFile = join(resolve(opts.logDir), `kafka-${stamp}-${port}.log`);
    }
    const props = join(dataDir, "server.properties");
    const log4j = join(dataDir, "log4j2.properties");
    writeFileSync(props, serverProperties(dataDir, port, cport, proxied, sasl));
    writeFileSync(log4j, LOG4J2);
    const common = [...DEFAULT_JVM_OPTS, `-Dlog4j2.configurationFile=${log4j}`];

    // Format the storage (static quorum: controller.quorum.voters, so neither
    // --standalone nor --initial-controllers). A short-lived tool: C1 only is faster.
    const haveCds = useCds && existsSync(cds);
    const fmtArgs = (withCds: boolean): string[] => [
      ...common,
      "-XX:TieredStopAtLevel=1",
      ...(withCds ? [`-XX:SharedArchiveFile=${cds}`] : []),
      "-cp",
      cp,
      "kafka.tools.StorageTool",
      "format",
      "-t",
      clusterId(),
      "-c",
      props,
    ];
    const tFmt = Date.now();
    let fmt = await run(java, fmtArgs(haveCds));
    if (process.env.KAFKA_DEBUG_TIMING) console.error(`format ${Date.now() - tFmt} ms`);
    let cdsOk = haveCds;
    if (haveCds && (fmt.code !== 0 || /\[cds/.test(fmt.output))) {
      // A stale (classpath or JDK changed) or broken archive: drop it, write a new one.
      rmSync(cds, { force: true });
      cdsOk = false;
      rmSync(join(dataDir, "logs"), { recursive: true, force: true });
      fmt = await run(java, fmtArgs(false));
    }
    if (fmt.code !== 0) {
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`kafka StorageTool format failed (exit ${fmt.code}):\n${fmt.output.slice(-4000)}`);
    }

    // Without a valid archive, have the JVM write one when it exits after SIGTERM;
    // stop() promotes it to `cds` only after a clean exit (a torn archive crashes a JVM).
    const dumpTo = useCds && !cdsOk ? `${cds}.${process.pid}.${port}.tmp` : undefined;
    const jvmArgs = (cdsArgs: string[], overrides: string[]): string[] => [
      ...common,
      ...cdsArgs,
      ...extra,
      "-cp",
      cp,
      "kafka.Kafka",
      props,
      ...overrides.flatMap((o) => ["--override", o]),
    ];

    /** One broker JVM on this data dir: its process and its watchdog. */
    interface Jvm {
      child: ChildProcess;
      pid: number;
      watchdog: ChildProcess | undefined;
      /** Writes the CDS archive to `dumpTo` at exit (the first JVM only, when there was none). */
      dumps: boolean;
    }
    const spawnJvm = (cdsArgs: string[], dumps: boolean, overrides: string[] = []): Jvm => {
      // `sh -c exec` makes the JVM's pid the child's pid and sends its output to the log
      // file without any pipe back to this process (works the same on Node, Bun, Deno).
      const child = spawn(
        "sh",
        ["-c", 'log="$1"; shift; exec "$@" >>"$log" 2>&1', "kafka", logFile, java, ...jvmArgs(cdsArgs, overrides)],
        { detached: true, stdio: "ignore" },
      );
      child.on("error", () => {});
      const pid = child.pid;
      if (pid === undefined) throw new Error(`could not spawn ${java}`);
      child.unref(); // a forgotten broker must not keep the test process alive
      installExitHook();
      live.set(pid, { dataDir });
      return { child, pid, watchdog: startWatchdog(pid, dataDir), dumps };
    };
    const isRunning = (j: Jvm): boolean => j.child.exitCode === null && j.child.signalCode === null;
    /** Ends a JVM (SIGTERM with `grace`, then SIGKILL; or SIGKILL at once with grace 0). True if it had to be SIGKILLed. */
    const endJvm = async (j: Jvm, grace: number): Promise<boolean> => {
      const gone = exited(j.child);
      // Keep the event loop alive while we wait (the child is unref'd).
      const keepAlive = setInterval(() => {}, 1_000);
      let killed = false;
      try {
        if (isRunning(j)) {
          if (grace > 0) {
            try {
              process.kill(j.pid, "SIGTERM");
            } catch {
              // already gone
            }
            let timeout: ReturnType<typeof setTimeout> | undefined;
            const timer = new Promise<"timeout">((res) => {
              timeout = setTimeout(() => res("timeout"), grace);
            });
            const outcome = await Promise.race([gone.then(() => "exited" as const), timer]);
            clearTimeout(timeout);
            if (outcome === "exited") return false;
          }
          killed = true;
          try {
            process.kill(j.pid, "SIGKILL");
          } catch {
            // already gone
          }
          await gone;
        }
        return killed;
      } finally {
        clearInterval(keepAlive);
        live.delete(j.pid);
        try {
          if (j.watchdog?.pid !== undefined) process.kill(j.watchdog.pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    };
    /** Waits until the broker answers a metadata request; the failure text, or undefined. */
    const ready = async (j: Jvm): Promise<string | undefined> => {
      const spawnedAt = Date.now();
      let failure: string | undefined;
      for (;;) {
        if (!isRunning(j)) {
          failure = `broker exited early (code ${j.child.exitCode}, signal ${j.child.signalCode})`;
          break;
        }
        if (await probe(brokers)) break;
        if (Date.now() - spawnedAt > timeoutMs) {
          failure = `broker did not answer within ${timeoutMs} ms`;
          break;
        }
        await sleep(100);
      }
      if (process.env.KAFKA_DEBUG_TIMING) console.error(`spawn->ready ${Date.now() - spawnedAt} ms`);
      return failure;
    };

    let jvm: Jvm;
    try {
      jvm = spawnJvm(
        cdsOk
          ? [`-XX:SharedArchiveFile=${cds}`]
          : dumpTo
          ? [`-XX:ArchiveClassesAtExit=${dumpTo}`, "-Xlog:cds=error,cds+dynamic=error"]
          : [],
        dumpTo !== undefined,
      );
    } catch (e) {
      rmSync(dataDir, { recursive: true, force: true });
      throw e;
    }
    let stopping: Promise<void> | undefined;
    let restarting: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopping ??= (async () => {
        await restarting?.catch(() => {});
        const j = jvm;
        let killed = true;
        try {
          killed = await endJvm(j, j.dumps ? STOP_GRACE_DUMP_MS : STOP_GRACE_MS);
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
          if (dumpTo) {
            // Exited by itself (SIGTERM -> exit 143): the archive was written whole.
            const clean = j.dumps && !killed && j.child.signalCode === null;
            if (clean && existsSync(dumpTo) && !existsSync(cds)) {
              try {
                renameSync(dumpTo, cds);
              } catch {
                // another broker got there first
              }
            }
            rmSync(dumpTo, { force: true });
          }
        }
      })();
      return stopping;
    };
    const kill = async (): Promise<void> => {
      if (stopping) return;
      await endJvm(jvm, 0);
    };
    const restart = (): Promise<void> => {
      if (stopping) return Promise.reject(new Error("the broker was stopped: it cannot restart"));
      if (restarting) return Promise.reject(new Error("the broker is already restarting"));
      if (isRunning(jvm)) return Promise.reject(new Error(`the broker is running (pid ${jvm.pid}): kill() it first`));
      restarting = (async () => {
        // A SIGKILLed JVM wrote no archive: use one if it exists now, else this JVM writes it.
        const haveArchive = useCds && existsSync(cds);
        const dumps = !haveArchive && dumpTo !== undefined;
        if (dumps) rmSync(dumpTo, { force: true });
        jvm = spawnJvm(
          haveArchive
            ? [`-XX:SharedArchiveFile=${cds}`]
            : dumps
            ? [`-XX:ArchiveClassesAtExit=${dumpTo}`, "-Xlog:cds=error,cds+dynamic=error"]
            : [],
          dumps,
          RESTART_OVERRIDES,
        );
        const failure = await ready(jvm);
        if (failure !== undefined) {
          await endJvm(jvm, 0);
          throw new Error(`restart: ${failure}; log ${logFile}:\n${tail(logFile)}`);
        }
      })().finally(() => {
        restarting = undefined;
      });
      return restarting;
    };

    // Wait until the broker answers a metadata request, or dies, or times out.
    const failure = await ready(jvm);
    if (failure === undefined) {
      return {
        brokers,
        get pid() {
          return jvm.pid;
        },
        get running() {
          return isRunning(jvm);
        },
        dataDir,
        logFile,
        ...(proxied ? { proxiedPort: proxied.port } : {}),
        ...(sasl ? { saslBrokers: `127.0.0.1:${sasl.port}` } : {}),
        stop,
        kill,
        restart,
      };
    }

    const logTail = tail(logFile);
    await stop();
    if (attempt < 3) {
      // Another process may have taken a port between picking and binding: retry.
      if (/BindException|Address already in use/.test(logTail)) continue;
      // A class-data-sharing archive the JVM cannot use: drop it and retry without.
      if (cdsOk && /A fatal error has been detected|\[cds|shared archive/i.test(logTail)) {
        rmSync(cds, { force: true });
        continue;
      }
    }
    throw new Error(`${failure}; log ${logFile}:\n${logTail}`);
  }
}

/**
 * Run `fn` against `process.env.KAFKA_BROKERS` when set, else against a broker
 * started for the occasion and always stopped afterwards.
 */
export async function withBroker<T>(fn: (brokers: string) => Promise<T>): Promise<T> {
  const env = process.env.KAFKA_BROKERS;
  if (env) return await fn(env);
  const broker = await startBroker();
  try {
    return await fn(broker.brokers);
  } finally {
    await broker.stop();
  }
}

/**
 * A KafkaJS client for `brokers` (comma separated). Silent: failures reach the caller
 * as rejected promises, and KafkaJS would log expected ones (e.g. an existing topic).
 */
function client(brokers: string): Kafka {
  return new Kafka({
    clientId: "offset-frontier-test",
    brokers: brokers.split(",").map((b) => b.trim()).filter(Boolean),
    logLevel: logLevel.NOTHING,
  });
}

async function withAdmin<T>(brokers: string, fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = client(brokers).admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

/**
 * Create `topic` with `partitions` partitions (replication factor 1) and wait for
 * their leaders. An existing topic with the same partition count is accepted; with
 * another count it is an error.
 */
export async function createTopic(brokers: string, topic: string, partitions: number): Promise<void> {
  // Right after startup the leader check can run ahead of the broker's metadata
  // ("This server does not host this topic-partition"): retry briefly.
  for (let attempt = 1; ; attempt++) {
    try {
      return await createTopicOnce(brokers, topic, partitions);
    } catch (error) {
      if (error instanceof PartitionCountError || attempt >= 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
}

class PartitionCountError extends Error {}

async function createTopicOnce(brokers: string, topic: string, partitions: number): Promise<void> {
  await withAdmin(brokers, async (admin) => {
    const created = await admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }],
      waitForLeaders: true,
    });
    if (created) return;
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    const have = meta.topics[0]?.partitions.length ?? 0;
    if (have !== partitions) {
      throw new PartitionCountError(`topic ${topic} exists with ${have} partitions, not ${partitions}`);
    }
  });
}

/**
 * Produce `messages` to `topic` with acks=-1, in size-bounded batches sent one after
 * another (so each partition keeps the input order). `partition` pins a record; the
 * others go by KafkaJS's default (murmur2 key hash, round robin without a key).
 */
export async function produce(
  brokers: string,
  topic: string,
  messages: Array<{ key?: string | null; value: string; partition?: number; headers?: Record<string, string> }>,
): Promise<void> {
  // Idempotent: a request retried after a timeout (a loaded machine, a broker just
  // started) is written once, so the topic holds exactly `messages` (tests count them).
  const producer = client(brokers).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    allowAutoTopicCreation: false,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await producer.connect();
  try {
    // Keep each request well under the broker's 1 MiB message.max.bytes.
    const MAX_BYTES = 512 * 1024;
    const MAX_COUNT = 10_000;
    let batch: typeof messages = [];
    let bytes = 0;
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await producer.send({ topic, acks: -1, messages: batch });
      batch = [];
      bytes = 0;
    };
    for (const m of messages) {
      const size = m.value.length + (m.key?.length ?? 0) + 64;
      if (batch.length > 0 && (bytes + size > MAX_BYTES || batch.length >= MAX_COUNT)) await flush();
      batch.push(m);
      bytes += size;
    }
    await flush();
  } finally {
    await producer.disconnect();
  }
}

/**
 * The offsets `groupId` has committed on `topic`, by partition (the next offset to
 * read, as a string). Partitions without a committed offset are left out.
 */
export async function committedOffsets(
  brokers: string,
  groupId: string,
  topic: string,
): Promise<Map<number, string>> {
  return await withAdmin(brokers, async (admin) => {
    const res = await admin.fetchOffsets({ groupId, topics: [topic] });
    const out = new Map<number, string>();
    for (const t of res) {
      for (const p of t.partitions) if (p.offset !== "-1") out.set(p.partition, p.offset);
    }
    return out;
  });
}

/** The end offset (high watermark) of every partition of `topic`, by partition. */
export async function endOffsets(brokers: string, topic: string): Promise<Map<number, string>> {
  return await withAdmin(brokers, async (admin) => {
    const res = await admin.fetchTopicOffsets(topic);
    return new Map(res.map((p) => [p.partition, p.high]));
  });
}
