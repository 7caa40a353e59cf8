/**
 * Builds the Java side of `npm run bench:pc`: resolves bench/pc/pom.xml's classpath with
 * Maven and compiles bench/pc/src with javac, cached in `<repo>/.cache/pc/<hash>/`, where the
 * hash covers the pom and every Java source (so a fresh machine needs only Java 17 + Maven,
 * and a later run skips both steps).
 *
 * Environment: `JAVA_HOME` (which `java`/`javac`), `MVN` (which `mvn`), as in test/broker/broker.ts.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const POM = join(HERE, "pom.xml");
const SRC = join(HERE, "src", "main", "java");
const CACHE = resolve(HERE, "..", "..", ".cache", "pc");

/** The Java side, ready to run: `java -cp <classpath> offsetfrontier.bench.PcBench …`. */
export interface JavaSide {
  /** The `java` binary. */
  java: string;
  /** Compiled classes first, then every jar Maven resolved. */
  classpath: string;
  /** The cache key (pom + sources). */
  hash: string;
  /** True when this call ran Maven or javac (false: everything came from the cache). */
  built: boolean;
}

function bin(name: string): string {
  const home = process.env.JAVA_HOME;
  return home ? join(home, "bin", name) : name;
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.on("error", (e) => rej(new Error(`cannot run ${cmd}: ${e.message}`)));
    child.on("close", (code) => res({ code, output }));
  });
}

function javaSources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...javaSources(p));
    else if (name.endsWith(".java")) out.push(p);
  }
  return out;
}

/** Resolve and compile (or reuse the cache); throws with Maven's or javac's output on failure. */
export async function buildJavaSide(log: (line: string) => void = () => {}): Promise<JavaSide> {
  const sources = javaSources(SRC);
  const h = createHash("sha256").update(readFileSync(POM));
  for (const s of sources) h.update(relative(HERE, s)).update("\0").update(readFileSync(s));
  const hash = h.digest("hex").slice(0, 16);
  const dir = join(CACHE, hash);
  const cpFile = join(dir, "classpath.txt");
  const classes = join(dir, "classes");
  const stamp = join(classes, ".complete");
  let built = false;

  let jars = existsSync(cpFile) ? readFileSync(cpFile, "utf8").trim() : "";
  // ~/.m2 may have been cleaned since: trust the cached classpath only if every jar is there.
  if (!jars || !jars.split(":").every((j) => existsSync(j))) {
    mkdirSync(dir, { recursive: true });
    log(`bench:pc: resolving bench/pc/pom.xml with Maven (cached in .cache/pc/${hash})`);
    const tmp = `${cpFile}.${process.pid}.tmp`;
    const r = await run(process.env.MVN ?? "mvn", ["-q", "-B", "-f", POM, "dependency:build-classpath", `-Dmdep.outputFile=${tmp}`]);
    if (r.code !== 0 || !existsSync(tmp)) {
      rmSync(tmp, { force: true });
      throw new Error(`mvn dependency:build-classpath failed (exit ${r.code}):\n${r.output.slice(-4000)}`);
    }
    renameSync(tmp, cpFile);
    jars = readFileSync(cpFile, "utf8").trim();
    built = true;
  }
  if (!existsSync(stamp)) {
    log(`bench:pc: compiling ${sources.length} Java source(s)`);
    rmSync(classes, { recursive: true, force: true });
    mkdirSync(classes, { recursive: true });
    const r = await run(bin("javac"), ["--release", "17", "-encoding", "UTF-8", "-d", classes, "-cp", jars, ...sources]);
    if (r.code !== 0) throw new Error(`javac failed (exit ${r.code}):\n${r.output.slice(-4000)}`);
    writeFileSync(stamp, `${new Date().toISOString()}\n`);
    built = true;
  }
  return { java: bin("java"), classpath: `${classes}:${jars}`, hash, built };
}
