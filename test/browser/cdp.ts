/**
 * A minimal Chrome DevTools Protocol client over `--remote-debugging-pipe` (no WebSocket,
 * no dependency): Chromium reads NUL-terminated JSON commands on fd 3 and answers on fd 4.
 * It opens one page, evaluates expressions in it, presses keys, takes screenshots, and
 * collects console errors and uncaught exceptions.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";

type Json = Record<string, unknown>;
interface Pending {
  resolve: (v: Json) => void;
  reject: (e: Error) => void;
}

/** Flags that work here (root, closed network). */
const FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--remote-debugging-pipe",
];

/** One headless Chromium with one page attached. */
export class Browser {
  /** Console errors and uncaught exceptions seen in the page. */
  readonly errors: string[] = [];
  readonly #proc: ChildProcess;
  readonly #out: Writable;
  readonly #pending = new Map<number, Pending>();
  readonly #profile: string;
  #nextId = 1;
  #session = "";
  #buffer = "";

  private constructor(executable: string) {
    this.#profile = mkdtempSync(join(tmpdir(), "of-chromium-"));
    this.#proc = spawn(executable, [...FLAGS, `--user-data-dir=${this.#profile}`, "about:blank"], {
      stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"],
    });
    this.#out = this.#proc.stdio[3] as Writable;
    const input = this.#proc.stdio[4] as Readable;
    input.setEncoding("utf8");
    input.on("data", (chunk: string) => this.#read(chunk));
    this.#proc.on("exit", () => {
      for (const p of this.#pending.values()) p.reject(new Error("chromium exited"));
      this.#pending.clear();
    });
  }

  /** Starts Chromium and attaches to its page (console and exceptions recorded). */
  static async launch(executable: string): Promise<Browser> {
    const b = new Browser(executable);
    const { targetInfos } = await b.send("Target.getTargets") as { targetInfos: Array<{ targetId: string; type: string }> };
    const page = targetInfos.find((t) => t.type === "page");
    if (!page) throw new Error("no page target");
    const { sessionId } = await b.send("Target.attachToTarget", { targetId: page.targetId, flatten: true }) as { sessionId: string };
    b.#session = sessionId;
    await b.send("Runtime.enable");
    await b.send("Log.enable");
    await b.send("Page.enable");
    await b.send("Emulation.setDeviceMetricsOverride", { width: 1200, height: 900, deviceScaleFactor: 1, mobile: false });
    return b;
  }

  /** Sends a command (to the page's session once attached) and resolves with its result. */
  send(method: string, params: Json = {}): Promise<Json> {
    const id = this.#nextId++;
    const message: Json = { id, method, params };
    if (this.#session) message.sessionId = this.#session;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#out.write(`${JSON.stringify(message)}\0`);
    });
  }

  /** Evaluates `expression` in the page (awaiting a promise) and returns its JSON value. */
  async evaluate<T>(expression: string): Promise<T> {
    const r = await this.send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }) as {
      result: { value: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }

  /** Resolves once `expression` is truthy in the page, polling; rejects after `timeoutMs`. */
  async waitFor(expression: string, timeoutMs = 20_000): Promise<void> {
    const t0 = Date.now();
    while (!(await this.evaluate<boolean>(`Boolean(${expression})`))) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${expression}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Presses a key on the focused element (keyDown with its text, then keyUp). */
  async press(key: "Enter" | " "): Promise<void> {
    const code = key === "Enter" ? { key, code: "Enter", windowsVirtualKeyCode: 13, text: "\r" } : { key, code: "Space", windowsVirtualKeyCode: 32, text: " " };
    await this.send("Input.dispatchKeyEvent", { type: "keyDown", ...code });
    await this.send("Input.dispatchKeyEvent", { type: "keyUp", key: code.key, code: code.code, windowsVirtualKeyCode: code.windowsVirtualKeyCode });
  }

  /** A PNG of the element matching `selector` (scrolled into view). */
  async screenshot(selector: string): Promise<Uint8Array> {
    const rect = await this.evaluate<{ x: number; y: number; width: number; height: number }>(
      `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
        return { x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height }; })()`,
    );
    const { data } = await this.send("Page.captureScreenshot", {
      format: "png", captureBeyondViewport: true, clip: { ...rect, scale: 1 },
    }) as { data: string };
    return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  }

  /** Ends Chromium (Browser.close, then SIGTERM, then SIGKILL) and removes its profile, best effort. */
  async close(): Promise<void> {
    const exited = new Promise((r) => this.#proc.once("exit", r));
    const within = (ms: number): Promise<unknown> => Promise.race([exited, new Promise((r) => setTimeout(r, ms))]);
    if (this.#proc.exitCode === null) {
      this.#session = "";
      this.send("Browser.close").catch(() => {}); // its answer may not come: the browser is going
      await within(5_000);
    }
    if (this.#proc.exitCode === null && this.#proc.signalCode === null) {
      this.#proc.kill("SIGTERM");
      await within(3_000);
    }
    if (this.#proc.exitCode === null && this.#proc.signalCode === null) this.#proc.kill("SIGKILL");
    try {
      rmSync(this.#profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
    } catch {
      // Its helper processes may still be writing: a profile left in the temp folder is harmless.
    }
  }

  #read(chunk: string): void {
    this.#buffer += chunk;
    let end: number;
    while ((end = this.#buffer.indexOf("\0")) >= 0) {
      const message = JSON.parse(this.#buffer.slice(0, end)) as Json;
      this.#buffer = this.#buffer.slice(end + 1);
      this.#dispatch(message);
    }
  }

  #dispatch(m: Json): void {
    if (typeof m.id === "number") {
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      const error = m.error as { message: string } | undefined;
      if (error) p?.reject(new Error(error.message));
      else p?.resolve((m.result ?? {}) as Json);
      return;
    }
    const params = (m.params ?? {}) as Json;
    if (m.method === "Runtime.consoleAPICalled" && (params.type === "error" || params.type === "assert")) {
      const args = (params.args as Array<{ value?: unknown; description?: string }>) ?? [];
      this.errors.push(`console.${params.type}: ${args.map((a) => a.description ?? String(a.value)).join(" ")}`);
    } else if (m.method === "Runtime.exceptionThrown") {
      const d = params.exceptionDetails as { text: string; exception?: { description?: string } };
      this.errors.push(`uncaught: ${d.exception?.description ?? d.text}`);
    } else if (m.method === "Log.entryAdded") {
      const e = params.entry as { level: string; text: string; url?: string };
      if (e.level === "error") this.errors.push(`log: ${e.text}${e.url ? ` (${e.url})` : ""}`);
    }
  }
}
