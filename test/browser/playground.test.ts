/**
 * The playground page (playground/, `npm run playground`) in headless Chromium: for the
 * WASM and the JS tracker engine, it builds and serves the page with scripts/playground.mjs,
 * drives each of the four simulations through its controls (buttons, inputs, and the
 * frontier's records from the keyboard) and checks the counters the real library produced
 * in the page, and that the page logged no console error. Chromium is Debian's package,
 * installed here when missing; where it cannot be, the test is skipped with the reason printed.
 *
 * `PLAYGROUND_SCREENSHOTS=DIR` also writes one PNG per simulation (WASM run) into DIR.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Browser } from "./cdp.ts";
import { findChromium } from "./chromium.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const found = findChromium();
const skip = "reason" in found ? `headless Chromium is not available: ${found.reason}` : false;
if (skip) process.stdout.write(`\n*** browser test SKIPPED: ${skip} ***\n\n`);
const shots = process.env.PLAYGROUND_SCREENSHOTS;
let shooting = false; // screenshots of the first (WASM) run only

let server: ChildProcess | undefined;
let url = "";
let out = "";

before(async () => {
  if (skip) return;
  out = mkdtempSync(join(tmpdir(), "of-playground-"));
  server = spawn(process.execPath, [join(root, "scripts", "playground.mjs"), "--out", out, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  url = await new Promise<string>((resolve, reject) => {
    let text = "";
    server!.stdout!.setEncoding("utf8");
    server!.stdout!.on("data", (chunk: string) => {
      text += chunk;
      const m = /playground: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(text);
      if (m) resolve(m[1]);
    });
    server!.once("exit", (code) => reject(new Error(`scripts/playground.mjs exited ${code} before serving`)));
  });
});

after(() => {
  server?.kill("SIGTERM");
  if (out) rmSync(out, { recursive: true, force: true });
});

const counter = (b: Browser, name: string): Promise<number> =>
  b.evaluate<number>(`Number(document.querySelector('[data-counter="${name}"]').textContent.replaceAll(",", ""))`);
const set = (b: Browser, id: string, value: string | boolean): Promise<unknown> =>
  b.evaluate(typeof value === "boolean" ? `document.getElementById("${id}").checked = ${value}` : `document.getElementById("${id}").value = "${value}"`);
const click = (b: Browser, id: string): Promise<unknown> => b.evaluate(`document.getElementById("${id}").click()`);
const runTo = async (b: Browser, section: string, button: string, state = "done"): Promise<void> => {
  await b.evaluate(`document.getElementById("${section}").querySelector(".sim").dataset.state = "clicked"`);
  await click(b, button);
  await b.waitFor(`document.querySelector("#${section} .sim").dataset.state === "${state}"`, 30_000);
};
const shot = async (b: Browser, section: string, name = section): Promise<void> => {
  if (!shots || !shooting) return;
  mkdirSync(shots, { recursive: true });
  writeFileSync(join(shots, `${name}.png`), await b.screenshot(`#${section}`));
};

for (const engine of ["wasm", "js"] as const) {
  test(`playground in headless Chromium, ${engine} engine`, { skip, timeout: 180_000 }, async (t) => {
    shooting = engine === "wasm";
    const b = await Browser.launch((found as { path: string }).path);
    try {
      await b.send("Page.navigate", { url: `${url}?engine=${engine}` });
      await b.waitFor(`document.body?.dataset.ready === "true" || document.querySelector("#errors p")`);
      assert.equal(await b.evaluate<string>(`document.getElementById("engine").dataset.engine`), engine);

      await t.test("dispatch: key ordering keeps per-key order, the shared pool breaks it", async () => {
        await runTo(b, "dispatch", "dispatch-run");
        for (const mode of ["unordered", "key"]) {
          assert.equal(await counter(b, `dispatch-${mode}-done`), 40, mode);
          assert.equal(await counter(b, `dispatch-${mode}-committed`), 40, mode);
          assert.ok(await counter(b, `dispatch-${mode}-running`) <= 8, mode);
        }
        assert.equal(await counter(b, "dispatch-key-breaks"), 0);
        assert.ok(await counter(b, "dispatch-unordered-breaks") > 0);
        await shot(b, "dispatch");
      });

      await t.test("frontier: the watermark pins at an unfinished record; the next owner redoes only it", async () => {
        const offsets = [23, 5, 12, 0, 18, 9, 2, 21, 14, 4, 1, 16, 10, 22, 6, 19, 11, 8, 15, 20, 13, 17]; // all but 3 (and 7, never delivered)
        for (const [i, o] of offsets.entries()) {
          await b.evaluate(`document.querySelector('#frontier [data-offset="${o}"]').focus()`);
          await b.press(i % 2 === 0 ? "Enter" : " "); // from the keyboard
        }
        await b.waitFor(`document.querySelector("#frontier .sim").dataset.inflight === "0"`); // the last commit landed
        assert.equal(await counter(b, "frontier-confirmed"), 3);
        assert.equal(await counter(b, "frontier-safe"), 3);
        assert.equal(await counter(b, "frontier-blocked"), 19);
        assert.match(await b.evaluate<string>(`document.querySelector('#frontier [data-offset="3"]').textContent`), /⟵ safe/);
        const size = await b.evaluate<string>(`document.querySelector('[data-counter="frontier-size"]').textContent`);
        assert.match(size, /^[1-9]\d* \/ 4,?096$/);
        await click(b, "frontier-crash");
        await shot(b, "frontier");
        assert.equal(await counter(b, "frontier-redo"), 1);
        assert.equal(await b.evaluate<string>(`document.querySelector('#frontier .redo').dataset.offset`), "3");
        assert.equal(await counter(b, "frontier-skip"), 19);
        assert.equal(await counter(b, "frontier-twice"), 0);
        assert.equal(await counter(b, "frontier-lost"), 0);
        assert.equal(await counter(b, "frontier-next-safe"), 3);
        // A crash with the commit still in flight: what finished since the last acknowledged commit is redone, nothing is lost.
        await set(b, "frontier-latency", "5000");
        await click(b, "frontier-reset");
        for (const o of [0, 1, 2, 4]) await b.evaluate(`document.querySelector('#frontier [data-offset="${o}"]').click()`);
        await click(b, "frontier-crash");
        assert.equal(await counter(b, "frontier-twice"), 4);
        assert.equal(await counter(b, "frontier-redo"), 23);
        assert.equal(await counter(b, "frontier-lost"), 0);
        await set(b, "frontier-latency", "30");
        await click(b, "frontier-reset");
      });

      await t.test("backpressure: fetching faster than the drain pauses each partition within the marks", async () => {
        await set(b, "bp-seconds", "2");
        await runTo(b, "backpressure", "bp-run");
        assert.ok(await counter(b, "bp-pauses-0") > 0);
        assert.ok(await counter(b, "bp-pauses-1") > 0);
        const max = await counter(b, "bp-max-retained");
        assert.ok(max >= 200 && max <= 200 + 50, `most retained ${max}: between the high mark and the high mark plus a batch`);
        await shot(b, "backpressure");
        await set(b, "bp-batch", "1");
        await set(b, "bp-interval", "100");
        await runTo(b, "backpressure", "bp-run");
        assert.equal(await counter(b, "bp-pauses-0"), 0);
        assert.equal(await counter(b, "bp-pauses-1"), 0);
        await set(b, "bp-batch", "50");
        await set(b, "bp-interval", "20");
      });

      await t.test("rebalance gap: stale overwrites unguarded, none guarded, none when the drain covers the slow records", async () => {
        await runTo(b, "gap", "gap-run");
        const late = await counter(b, "gap-late");
        assert.ok(late > 0);
        assert.equal(await counter(b, "gap-stale"), late);
        assert.ok(await counter(b, "gap-wrong") > 0);
        assert.equal(await counter(b, "gap-lost"), 0);
        await shot(b, "gap");
        await set(b, "gap-guard", true);
        await runTo(b, "gap", "gap-run");
        assert.ok(await counter(b, "gap-late") > 0);
        assert.equal(await counter(b, "gap-stale"), 0);
        assert.equal(await counter(b, "gap-refused"), await counter(b, "gap-late"));
        assert.equal(await counter(b, "gap-wrong"), 0);
        assert.equal(await counter(b, "gap-lost"), 0);
        await shot(b, "gap", "gap-guarded");
        await set(b, "gap-guard", false);
        await set(b, "gap-drain", "1500");
        await set(b, "gap-slow-ms", "400");
        await runTo(b, "gap", "gap-run");
        assert.equal(await counter(b, "gap-late"), 0);
        assert.equal(await counter(b, "gap-stale"), 0);
        assert.equal(await counter(b, "gap-wrong"), 0);
      });

      assert.deepEqual(b.errors, [], "console errors in the page");
    } finally {
      await b.close();
    }
  });
}
