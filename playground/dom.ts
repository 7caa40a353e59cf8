/**
 * Small DOM helpers shared by the playground's simulations: element creation, labelled
 * counters (readable by people and by the browser test through `data-counter`), buttons
 * and number inputs that work from the keyboard.
 *
 * @module
 */

/** Attributes and properties of a new element. */
export type Attrs = Record<string, string | number | boolean | undefined>;

/** Creates an element with attributes (`text` sets its text) and children. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (name === "text") e.textContent = String(value);
    else e.setAttribute(name, value === true ? "" : String(value));
  }
  e.append(...children);
  return e;
}

/** A list of named counters; `set` updates one (its `data-counter` is `prefix-name`). */
export class Counters {
  /** The `<dl>` to place on the page. */
  readonly element: HTMLDListElement;
  readonly #values = new Map<string, HTMLElement>();

  /**
   * @param prefix the simulation's id, prefixed to every counter's `data-counter`
   * @param labels counter name → what it means, in the order shown
   */
  constructor(prefix: string, labels: ReadonlyArray<readonly [string, string]>) {
    this.element = el("dl", { class: "counters" });
    for (const [name, label] of labels) {
      const value = el("dd", { "data-counter": `${prefix}-${name}`, text: "–" });
      this.element.append(el("div", {}, el("dt", { text: label }), value));
      this.#values.set(name, value);
    }
  }

  /** Shows `value` for counter `name`. */
  set(name: string, value: number | string | undefined): void {
    const e = this.#values.get(name);
    if (!e) throw new Error(`no counter ${name}`);
    e.textContent = value === undefined ? "–" : typeof value === "number" ? value.toLocaleString("en") : value;
  }
}

/** A button that runs `action` (click, Enter or Space); disabled while the action's promise runs. */
export function button(id: string, label: string, action: () => void | Promise<void>): HTMLButtonElement {
  const b = el("button", { id, type: "button", text: label });
  b.addEventListener("click", () => {
    b.disabled = true;
    Promise.resolve().then(action).catch(reportError).finally(() => (b.disabled = false));
  });
  return b;
}

/** A labelled number input; `read()` returns its value clamped to [min, max]. */
export function numberInput(id: string, label: string, value: number, min: number, max: number): { element: HTMLElement; read: () => number } {
  const input = el("input", { id, type: "number", value, min, max, step: 1 });
  const element = el("label", { for: id }, `${label} `, input);
  const read = (): number => Math.min(max, Math.max(min, Math.round(Number(input.value) || min)));
  return { element, read };
}

/** A labelled checkbox. */
export function checkbox(id: string, label: string, checked: boolean): { element: HTMLElement; read: () => boolean } {
  const input = el("input", { id, type: "checkbox", checked });
  return { element: el("label", { for: id }, input, ` ${label}`), read: () => input.checked };
}

/** Shows an error on the page and in the console (the browser test fails on console errors). */
export function reportError(error: unknown): void {
  console.error(error);
  const log = document.getElementById("errors");
  if (log) log.append(el("p", { role: "alert", text: `Error: ${error instanceof Error ? error.message : String(error)}` }));
}

/** Milliseconds sleep. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A deterministic pseudo-random source (mulberry32), so a run can be repeated. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
