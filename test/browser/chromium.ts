/**
 * Finds Debian's Chromium for the browser test, installing it (`apt-get update`, then
 * `apt-get install -y chromium`) when `/usr/bin/chromium` is missing. Returns the path, or
 * the reason it cannot be had (not root, no apt-get, the install failed): the test then
 * skips with that reason printed, never silently.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import process from "node:process";
import { pathToFileURL } from "node:url";

/** Where Debian's package puts the browser. */
export const CHROMIUM = "/usr/bin/chromium";

/** `{ path }` when Chromium is (now) installed, else `{ reason }`. */
export function findChromium(): { path: string } | { reason: string } {
  if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    return { reason: `${CHROMIUM} is missing and installing it needs root (run: apt-get update && apt-get install -y chromium)` };
  }
  const run = (args: string[]): string | undefined => {
    process.stderr.write(`browser test: apt-get ${args.join(" ")} …\n`);
    const r = spawnSync("apt-get", args, { encoding: "utf8", timeout: 600_000, env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    if (r.error) return `apt-get ${args.join(" ")} could not run: ${r.error.message}`;
    if (r.status !== 0) return `apt-get ${args.join(" ")} exited ${r.status}: ${(r.stderr || r.stdout).trim().split("\n").slice(-3).join(" | ")}`;
    return undefined;
  };
  const failed = run(["update"]) ?? run(["install", "-y", "chromium"]);
  if (failed) return { reason: failed };
  return existsSync(CHROMIUM) ? { path: CHROMIUM } : { reason: `apt-get installed chromium but ${CHROMIUM} is still missing` };
}

// `node --import tsx test/browser/chromium.ts` (npm test's background step): installs it if
// missing and prints one line saying where it is or why it cannot be had; exits 0 either way.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const found = findChromium();
  console.log("path" in found ? `chromium at ${found.path}` : `no chromium: ${found.reason}`);
}
