/**
 * An in-memory TransactionalPort for the runner's exactly-once unit tests: it keeps what a
 * broker would (committed offsets with metadata, the committed outputs, every transaction
 * it was given) and can fail the next transactions.
 */
import type { CommittedPosition, OpenPartition, OutputRecord, PartitionTransaction, TransactionalPort, TransactionOutcome } from "../../core/mod.ts";
import { type Msg, sleep } from "./runner_client.ts";

/** What a broker would hold, and a switch to fail the next transactions. */
export class MemoryPort implements TransactionalPort {
  readonly committed = new Map<string, { offset: number; metadata?: string }>();
  readonly outputs: OutputRecord[] = [];
  readonly opened: OpenPartition[][] = [];
  readonly transactions: PartitionTransaction[] = [];
  failNext = 0;
  /** Fails the transaction it returns `true` for (`n`: how many transactions came before it). */
  fail: (t: PartitionTransaction, n: number) => boolean = () => false;
  /** Called after a successful open with the committed offset: the test redelivers from there (the seek). */
  onOpen: (p: OpenPartition, offset: number | undefined) => void = () => {};
  closed = false;

  open(partitions: readonly OpenPartition[]): Promise<readonly CommittedPosition[]> {
    this.opened.push([...partitions]);
    const out = partitions.map((p) => {
      const c = this.committed.get(`${p.topic}/${p.partition}`);
      return { topic: p.topic, partition: p.partition, offset: c?.offset, metadata: c?.metadata };
    });
    setTimeout(() => partitions.forEach((p, i) => this.onOpen(p, out[i].offset)), 1); // once the runner released the lane
    return Promise.resolve(out);
  }

  async commit(txs: readonly PartitionTransaction[]): Promise<readonly TransactionOutcome[]> {
    await sleep(1);
    return txs.map((t) => {
      const n = this.transactions.length;
      this.transactions.push(t);
      if (this.fail(t, n)) return { ok: false, fenced: false, error: new Error("simulated abort") };
      if (this.failNext > 0) {
        this.failNext--;
        return { ok: false, fenced: false, error: new Error("simulated abort") };
      }
      this.outputs.push(...t.outputs);
      this.committed.set(`${t.topic}/${t.partition}`, { offset: t.offset, ...(t.metadata !== undefined ? { metadata: t.metadata } : {}) });
      return { ok: true };
    });
  }

  release(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  deadLetter(message: unknown, info: { topic: string; partition: number; offset: number }): OutputRecord {
    return { topic: `${info.topic}.DLT`, value: (message as Msg).value };
  }
}
