#!/usr/bin/env node
// Installs @confluentinc/kafka-javascript (the Confluent binding's client, an optional
// peer dependency) into .cache/confluent/ for the tests, the chaos harness and the bench.
// It is not a devDependency: its install downloads a prebuilt native addon or, where
// that cannot be fetched, compiles librdkafka (about 2 minutes), which would make every
// `npm install` slow. CKJS_LINKING=dynamic makes that source build use the system's
// zlib and OpenSSL instead of downloading their sources. Does nothing when the pinned
// version is installed and built already.
//
//   node scripts/install-confluent.mjs        (also: import { ensureConfluent } from it)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

export const CONFLUENT_VERSION = "1.10.1";
export const CONFLUENT_PREFIX = join(dirname(fileURLToPath(import.meta.url)), "..", ".cache", "confluent");
const PKG = join(CONFLUENT_PREFIX, "node_modules", "@confluentinc", "kafka-javascript");

/** True when the pinned version is installed with its addon built. */
export function confluentInstalled() {
  try {
    const v = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8")).version;
    return v === CONFLUENT_VERSION && existsSync(join(PKG, "build", "Release", "confluent-kafka-javascript.node"));
  } catch {
    return false;
  }
}

/** Installs the pinned version unless present; returns the seconds it took (0 when present). Throws on failure. */
export function ensureConfluent({ quiet = false } = {}) {
  if (confluentInstalled()) return 0;
  const t0 = Date.now();
  mkdirSync(CONFLUENT_PREFIX, { recursive: true });
  const manifest = join(CONFLUENT_PREFIX, "package.json");
  if (!existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ name: "offset-frontier-confluent-cache", private: true }) + "\n");
  if (!quiet) console.error(`install-confluent: installing @confluentinc/kafka-javascript@${CONFLUENT_VERSION} into ${CONFLUENT_PREFIX}`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["install", "--no-audit", "--no-fund", "--prefix", CONFLUENT_PREFIX, `@confluentinc/kafka-javascript@${CONFLUENT_VERSION}`], {
    stdio: quiet ? "pipe" : ["ignore", "inherit", "inherit"],
    env: { ...process.env, CKJS_LINKING: process.env.CKJS_LINKING ?? "dynamic" },
    encoding: "utf8",
  });
  if (r.status !== 0 || !confluentInstalled()) {
    throw new Error(`install-confluent: npm install failed (exit ${r.status})${quiet ? `\n${r.stdout}\n${r.stderr}` : ""}`);
  }
  return (Date.now() - t0) / 1000;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes("--help") || process.argv.includes("-h")) {
    console.log("usage: node scripts/install-confluent.mjs\n\nInstalls @confluentinc/kafka-javascript@" + CONFLUENT_VERSION + " into .cache/confluent/ unless present.");
    process.exit(0);
  }
  try {
    const secs = ensureConfluent();
    console.log(secs === 0 ? `install-confluent: ${CONFLUENT_VERSION} present` : `install-confluent: installed in ${secs.toFixed(1)}s`);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
