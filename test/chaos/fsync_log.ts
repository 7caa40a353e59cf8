/**
 * The chaos members' log (test/chaos/member.ts, member_confluent.ts): append-only,
 * group-committed fsyncs.
 *
 * @module
 */
import { fdatasync, openSync, writeSync } from "node:fs";

/** An append-only log whose `append` resolves once the line is written and fdatasynced. */
export class FsyncLog {
  readonly #fd: number;
  #lines: string[] = [];
  #waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  #flushing = false;

  constructor(path: string) {
    this.#fd = openSync(path, "a");
  }

  /** Writes `line` at once, without waiting for an fsync (events; the next batch syncs them). */
  note(line: string): void {
    writeSync(this.#fd, line);
  }

  /** Queues `line`; resolves after the batch holding it is written and fsynced. */
  append(line: string): Promise<void> {
    this.#lines.push(line);
    const done = new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    if (!this.#flushing) void this.#flush();
    return done;
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    // Invariant: a waiter resolves only after its line went through writeSync and fdatasync.
    while (this.#lines.length > 0) {
      const text = this.#lines.join("");
      const waiters = this.#waiters;
      this.#lines = [];
      this.#waiters = [];
      try {
        writeSync(this.#fd, text);
        await new Promise<void>((resolve, reject) => fdatasync(this.#fd, (e) => (e ? reject(e) : resolve())));
        for (const w of waiters) w.resolve();
      } catch (e) {
        for (const w of waiters) w.reject(e);
      }
    }
    this.#flushing = false;
  }
}

