/**
 * A fresh project as a new user makes it, for the pack tests: `npm pack` of this
 * repository (its `prepack` builds dist/), `npm init -y`, and the tarball and kafkajs
 * installed offline from this checkout. Other packages the docs' examples import (the
 * exporters' peers, another client) are linked in from this checkout's node_modules, so
 * they resolve their own dependencies there.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The repository's node_modules/.bin (node, bun, deno, tsx, tsc as the tests run them). */
export const BIN = join(ROOT, "node_modules", ".bin");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";

/** Runs a command to its end (2 minutes at most) and returns its stdout; throws on failure. */
export function sh(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 120_000 });
}

/** A project made by {@link packProject}. */
export interface PackProject {
  /** The temporary directory holding the tarball and the project. */
  dir: string;
  /** The project: `<dir>/your-service`. */
  project: string;
  /** Removes `dir` (kept, and printed, with KEEP_PACK_DIR=1). */
  remove(): void;
}

/**
 * Packs this repository and makes a project with the tarball and kafkajs installed.
 * `npm`: extra arguments run as `npm ...` in the project afterwards (e.g. `pkg set
 * type=module`); `links`: package name → directory, linked into its node_modules.
 */
export function packProject(opts: { prefix: string; npm?: string[][]; links?: Record<string, string> }): PackProject {
  const dir = mkdtempSync(join(tmpdir(), opts.prefix));
  const project = join(dir, "your-service");
  sh(NPM, ["pack", "--silent", "--pack-destination", dir], ROOT);
  const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  assert.ok(tarball, `npm pack wrote a tarball into ${dir}`);
  mkdirSync(project);
  sh(NPM, ["init", "-y"], project);
  sh(NPM, ["install", "--offline", "--no-audit", "--no-fund", join(dir, tarball), join(ROOT, "node_modules", "kafkajs")], project);
  for (const args of opts.npm ?? []) sh(NPM, args, project);
  for (const [name, target] of Object.entries(opts.links ?? {})) {
    const at = join(project, "node_modules", name);
    mkdirSync(dirname(at), { recursive: true });
    symlinkSync(target, at, "dir");
  }
  return {
    dir,
    project,
    remove() {
      if (process.env.KEEP_PACK_DIR) console.log(`kept ${dir}`);
      else rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * SIGKILLs what a failed run left: the child's process group (it was spawned detached), so
 * that tsx's own child goes too; killing only tsx orphaned a consumer that held the test's
 * pipes open, and the test file never ended.
 */
export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** A spawned child's output as it comes, and its end (see {@link watch}). */
export interface Watched {
  /** Everything it wrote to stdout so far. */
  readonly stdout: string;
  /** Everything it wrote to stderr so far. */
  readonly stderr: string;
  /** Whether it has ended. */
  readonly done: boolean;
  /** Its end: exit code or signal. */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  /** The end of its output, for an assertion's message. */
  tail(): string;
}

/**
 * Collects a child's output and its end, for the pack tests' runs.
 * @param child spawned with piped stdout and stderr
 * @param stdoutChars how much of stdout {@link Watched.tail} shows (stderr: its last 3,000 characters)
 */
export function watch(child: ChildProcess, stdoutChars = 2_000): Watched {
  let stdout = "", stderr = "", done = false;
  child.stdout?.on("data", (d) => (stdout += d));
  child.stderr?.on("data", (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal }))
  );
  void exited.then(() => (done = true));
  return {
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    get done() {
      return done;
    },
    exited,
    tail: () => `\n--- stderr ---\n${stderr.slice(-3000)}\n--- stdout ---\n${stdout.slice(-stdoutChars)}`,
  };
}
