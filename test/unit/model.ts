/**
 * An independent reference model of one tracker: a plain array of every registered
 * record, nothing clever. Tests compare the real trackers against it after every step.
 */
import { Completion } from "../../core/mod.ts";

export type ModelError = "InvalidOffsetError" | "InvalidBatchError" | "CapacityError" | "RevokedError";

export class Model {
  offsets: number[] = [];
  done: boolean[] = [];
  next: number | undefined;
  revoked = false;

  constructor(start: number | undefined, readonly capacity: number) {
    this.next = start;
  }

  /** Index of the first unfinished record (the head), or the record count. */
  head(): number {
    let i = 0;
    while (i < this.done.length && this.done[i]) i++;
    return i;
  }

  safe(): number | undefined {
    const h = this.head();
    return h < this.offsets.length ? this.offsets[h] : this.next;
  }

  retained(): number {
    return this.offsets.length - this.head();
  }

  blocked(): number {
    let n = 0;
    for (let i = this.head(); i < this.done.length; i++) if (this.done[i]) n++;
    return n;
  }

  /**
   * The unfinished records from the head on as maximal pairs (startOffset, length) of
   * consecutive delivered offsets, flattened: record by record, a pending record extends
   * the last pair when the record before it is pending too and its offset is next.
   */
  unfinishedRuns(): number[] {
    const out: number[] = [];
    const head = this.head();
    for (let i = head; i < this.offsets.length; i++) {
      if (this.done[i]) continue;
      if (i > head && !this.done[i - 1] && this.offsets[i - 1] + 1 === this.offsets[i]) out[out.length - 1]++;
      else out.push(this.offsets[i], 1);
    }
    return out;
  }

  /** Returns the index of the batch's first record, or the error the tracker must throw. */
  register(offsets: readonly number[], next: number): number | ModelError {
    if (this.revoked) return "RevokedError";
    for (const o of [...offsets, next]) if (!Number.isSafeInteger(o) || o < 0) return "InvalidOffsetError";
    const floor = this.next ?? 0;
    for (let i = 0; i < offsets.length; i++) {
      if (i === 0 ? offsets[0] < floor : offsets[i] <= offsets[i - 1]) return "InvalidBatchError";
    }
    if (offsets.length > 0 ? next <= offsets[offsets.length - 1] : next < floor) return "InvalidBatchError";
    if (this.retained() + offsets.length > this.capacity) return "CapacityError";
    const first = this.offsets.length;
    for (const o of offsets) {
      this.offsets.push(o);
      this.done.push(false);
    }
    this.next = next;
    return first;
  }

  complete(index: number): Completion {
    if (this.revoked || !Number.isInteger(index) || index < 0 || index >= this.offsets.length) return Completion.Rejected;
    if (this.done[index]) return Completion.Duplicate;
    const before = this.safe();
    this.done[index] = true;
    return this.safe() === before ? Completion.Completed : Completion.Advanced;
  }

  completeOffset(offset: number): Completion {
    if (this.revoked) return Completion.Rejected;
    const i = this.offsets.indexOf(offset);
    if (i >= 0) return this.complete(i);
    const safe = this.safe();
    const first = this.offsets[0];
    return safe !== undefined && first !== undefined && offset >= first && offset < safe
      ? Completion.Duplicate
      : Completion.Rejected;
  }
}
