/**
 * The playground page's entry point: picks the tracker engine (`?engine=js` or `wasm`,
 * default `wasm`, compiled asynchronously with `ready()` as a browser requires for a
 * module over 4 KiB), shows which engine the trackers really use, and builds the four
 * simulations into their sections of index.html.
 *
 * @module
 */
import { type EngineChoice, ready, Tracker } from "../core/mod.ts";
import { backpressureSimulation } from "./backpressure.ts";
import { dispatchSimulation } from "./dispatch.ts";
import { el, reportError } from "./dom.ts";
import { frontierSimulation } from "./frontier_sim.ts";
import { rebalanceSimulation } from "./rebalance_gap.ts";

async function main(): Promise<void> {
  const engine: EngineChoice = new URLSearchParams(location.search).get("engine") === "js" ? "js" : "wasm";
  if (engine === "wasm") await ready();
  const probe = new Tracker({ engine });
  const used = probe.engine;
  probe.revoke();
  const status = document.getElementById("engine")!;
  status.dataset.engine = used;
  status.replaceChildren(`Tracker engine in this tab: ${used === "wasm" ? "WASM (inlined, compiled by the browser)" : "JS"} · switch to `,
    el("a", { href: `?engine=${used === "wasm" ? "js" : "wasm"}`, text: used === "wasm" ? "JS" : "WASM" }));
  const builders: Array<[string, (section: HTMLElement, engine: EngineChoice) => void]> = [
    ["dispatch", dispatchSimulation],
    ["frontier", frontierSimulation],
    ["backpressure", backpressureSimulation],
    ["gap", rebalanceSimulation],
  ];
  for (const [id, build] of builders) build(document.querySelector<HTMLElement>(`#${id} .sim`)!, engine);
  document.body.dataset.ready = "true";
}

main().catch(reportError);
