/**
 * Simulation 2, the frontier: one partition's delivered records as buttons; completing
 * them in any order moves the real `Tracker`'s safe position only over a finished prefix.
 * Each completion is followed by a commit through the real `Frontier` (safe position plus
 * the completed set in its metadata), acknowledged by the simulated coordinator after a
 * latency. "Crash" drops the owner at once; the next owner reads the commit back with
 * `decodeCompletedSet`, registers the records from the committed offset and completes the
 * claimed ones without running them: what is left is what it redoes.
 *
 * @module
 */
import { decodeCompletedSet, DEFAULT_BUDGET, type EngineChoice, Frontier, type Tracker } from "../core/mod.ts";
import { button, Counters, el, numberInput, sleep } from "./dom.ts";
import { SimBroker } from "./sim_broker.ts";

const TOPIC = "orders";
const GAP = 7; // an offset never delivered (a transaction marker): the safe position must not wait for it

const COUNTERS = [
  ["safe", "safe position (tracker)"],
  ["confirmed", "confirmed (acknowledged commit)"],
  ["blocked", "finished behind an unfinished record"],
  ["size", `completed set: characters of the ${DEFAULT_BUDGET}-character budget`],
  ["redo", "next owner redoes"],
  ["skip", "next owner skips (claimed finished)"],
  ["twice", "finished, yet redone (work done twice)"],
  ["lost", "unfinished, yet skipped (lost)"],
  ["next-safe", "next owner's safe position before any work"],
] as const;

/** Builds the frontier simulation into `section`. */
export function frontierSimulation(section: HTMLElement, engine: EngineChoice): void {
  const count = numberInput("frontier-records", "records", 24, 9, 4000);
  const latency = numberInput("frontier-latency", "commit latency (ms)", 30, 0, 2000);
  const counters = new Counters("frontier", COUNTERS);
  const grid = el("div", { class: "grid", role: "group", "aria-label": "delivered records: press one to complete it" });
  const next = el("div", { class: "grid", "aria-label": "the next owner: ↻ redo, ⤼ skip" });
  const metadata = el("code", { id: "frontier-metadata", text: "–" });
  let frontier: Frontier, tracker: Tracker, first = 0, offsets: number[] = [], broker: SimBroker, crashed = false, epoch = 0;
  let lastSafe: number | undefined;
  const finished = new Set<number>();
  const cells = new Map<number, HTMLButtonElement>();

  const render = (): void => {
    if (!crashed) { // after a crash the dead owner's last figures stay on show
      lastSafe = tracker.safe;
      counters.set("safe", lastSafe);
      counters.set("confirmed", frontier.positions(TOPIC, 0)?.confirmed);
      counters.set("blocked", tracker.blocked);
    }
    const safe = lastSafe;
    const committed = broker.committed.get(0);
    metadata.textContent = committed?.metadata ?? "(none)";
    counters.set("size", `${committed?.metadata?.length ?? 0} / ${DEFAULT_BUDGET}`);
    for (const [o, cell] of cells) {
      const done = finished.has(o);
      cell.textContent = `${done ? "✓" : ""}${o}${o === safe ? " ⟵ safe" : ""}`;
      cell.className = `cell ${done ? "done" : "queued"}${o === safe ? " safe" : ""}`;
      cell.setAttribute("aria-pressed", String(done));
    }
  };

  // Coalesced, as the runner commits: one commit in flight, the newest safe position and set when it goes out.
  let committing = false, again = false;
  const commit = async (): Promise<void> => {
    if (committing) {
      again = true;
      return;
    }
    committing = true;
    section.dataset.inflight = "1";
    const mine = epoch;
    try {
      do {
        again = false;
        const proposal = frontier.propose();
        if (!proposal) break;
        await sleep(latency.read());
        if (crashed || mine !== epoch) return; // the owner died with its commit in flight: never acknowledged
        broker.commit("A", proposal.offsets);
        frontier.confirm(proposal);
        render();
      } while (again);
    } finally {
      if (mine === epoch) {
        committing = false;
        section.dataset.inflight = "0";
      }
    }
  };

  const complete = (o: number): void => {
    if (crashed || finished.has(o)) return;
    tracker.complete(first + offsets.indexOf(o));
    finished.add(o);
    render();
    void commit();
  };

  const reset = (): void => {
    frontier?.close();
    crashed = false;
    epoch++;
    committing = false;
    section.dataset.inflight = "0";
    finished.clear();
    cells.clear();
    const n = count.read();
    broker = new SimBroker(TOPIC, 1, n, () => "k");
    broker.owners.set(0, "A");
    frontier = new Frontier({ engine });
    tracker = frontier.assign(TOPIC, 0, 0);
    offsets = Array.from({ length: n }, (_, i) => i).filter((o) => o !== GAP);
    first = tracker.register(offsets, n);
    grid.replaceChildren(...Array.from({ length: n }, (_, o) => {
      if (o === GAP) return el("span", { class: "cell gap", title: `offset ${o} was never delivered`, text: `${o} (gap)` });
      const cell = el("button", { type: "button", class: "cell", "data-offset": o });
      cell.addEventListener("click", () => complete(o));
      cells.set(o, cell);
      return cell;
    }));
    next.replaceChildren();
    for (const name of ["redo", "skip", "twice", "lost", "next-safe"]) counters.set(name, undefined);
    section.dataset.state = "ready";
    render();
  };

  const crash = (): void => {
    if (crashed) return;
    crashed = true;
    frontier.close(); // SIGKILL: no drain, no final commit; a commit in flight never lands
    const committed = broker.committed.get(0);
    const base = committed?.offset ?? 0;
    const claim = decodeCompletedSet(TOPIC, 0, base, committed?.metadata);
    const heir = new Frontier({ engine });
    const t = heir.assign(TOPIC, 0, base);
    const rest = offsets.filter((o) => o >= base);
    const h = rest.length > 0 ? t.register(rest, count.read()) : 0;
    let redo = 0, skip = 0, twice = 0, lost = 0;
    next.replaceChildren(...rest.map((o, i) => {
      const skipped = claim.ok && claim.set.isFinished(o);
      if (skipped) t.complete(h + i);
      if (skipped) skip++;
      else redo++;
      if (!skipped && finished.has(o)) twice++;
      if (skipped && !finished.has(o)) lost++;
      return el("span", { class: `cell ${skipped ? "skip" : "redo"}`, "data-offset": o, text: `${skipped ? "⤼" : "↻"}${o}` });
    }));
    for (const o of offsets) if (o < base && !finished.has(o)) lost++;
    counters.set("redo", redo);
    counters.set("skip", skip);
    counters.set("twice", twice);
    counters.set("lost", lost);
    counters.set("next-safe", t.safe);
    heir.close();
    section.dataset.state = "crashed";
    render();
  };

  const everyOther = button("frontier-every-other", "Complete every other record", () => {
    offsets.forEach((o, i) => i % 2 === 1 && complete(o));
  });
  section.append(
    el("div", { class: "controls" }, count.element, latency.element, button("frontier-reset", "New assignment", reset), everyOther,
      button("frontier-crash", "Crash the owner", crash)),
    el("p", { class: "legend", text: `✓ finished · ⟵ safe: the resume position · offset ${GAP} was never delivered (a transaction marker)` }),
    grid,
    counters.element,
    el("p", {}, "Committed metadata (the completed set): ", metadata),
    el("h3", { text: "After the crash: the next owner" }),
    el("p", { class: "legend", text: "↻ redone (run again) · ⤼ skipped: the completed set claims it finished" }),
    next,
  );
  reset();
}
