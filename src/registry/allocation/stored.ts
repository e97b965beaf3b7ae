// A range whose taken values live in the store as one RangeAllocation object,
// where upstream keeps them in etcd (`ranges/serviceips`,
// `ranges/servicenodeports`): every change reads that object, changes its
// bitmap and writes it back only if nobody wrote it meanwhile, so servers
// sharing a store never hand out one value twice.

import type { Backend, KeyValue } from '../../storage/backend.js';
import { lostRace } from '../storage-errors.js';
import { rfc3339Now } from '../../machinery/time.js';
import { AllocationBitmap } from './bitmap.js';
import type { ValueRange } from './ranges.js';

export type AllocationFailure = 'full' | 'allocated' | 'notInRange';

/** Why a value could not be handed out, in upstream's words (`range is full`, `provided IP is already allocated`). */
export class AllocationError extends Error {
  constructor(readonly reason: AllocationFailure, message: string) {
    super(message);
  }
}

interface RangeAllocation {
  apiVersion: 'v1';
  kind: 'RangeAllocation';
  metadata: { creationTimestamp?: string };
  range: string;
  data: string;
}

/** A read of the stored range: its bitmap and the revision a write must find. */
export interface RangeSnapshot {
  bitmap: AllocationBitmap;
  /** 0 when nothing is stored yet. */
  modRevision: number;
  /** The range the stored object says it covers ('' when none is stored). */
  storedRange: string;
}

interface PendingChange {
  edit(bitmap: AllocationBitmap): unknown;
  needed(bitmap: AllocationBitmap): boolean;
  resolve(answer: unknown): void;
  reject(error: unknown): void;
}

export class StoredRange<V> {
  /** `what` names a value in messages: `IP`, `port`. */
  constructor(
    private readonly backend: Backend,
    readonly key: string,
    readonly range: ValueRange<V>,
    private readonly what: 'IP' | 'port',
    private readonly random?: (below: number) => number,
  ) {}

  /** Changes asked for and not yet in a write. */
  private waiting: PendingChange[] = [];
  /** A batch of changes is being read, edited and written. */
  private writing = false;

  /** Takes `value`; an AllocationError when it is outside the range or taken. */
  async allocate(value: V): Promise<void> {
    const offset = this.range.offsetOf(value);
    if (offset === undefined) throw new AllocationError('notInRange', this.range.notInRange(value));
    await this.change((bitmap) => {
      if (!bitmap.allocate(offset)) throw new AllocationError('allocated', `provided ${this.what} is already allocated`);
    });
  }

  /** Takes a free value (upper part of the range first) and answers it; an AllocationError when full. */
  async allocateNext(): Promise<V> {
    return this.change((bitmap) => {
      const offset = bitmap.allocateNext();
      if (offset === undefined) throw new AllocationError('full', 'range is full');
      return this.range.valueAt(offset);
    });
  }

  /** Gives `value` back; a value outside the range or not taken is no change. */
  async release(value: V): Promise<void> {
    const offset = this.range.offsetOf(value);
    if (offset === undefined) return;
    await this.change((bitmap) => bitmap.release(offset), (bitmap) => bitmap.has(offset));
  }

  /** The stored bitmap (empty when nothing is stored, or when it was stored for another range). */
  async read(): Promise<RangeSnapshot> {
    const kv = await this.backend.get(this.key);
    return this.decode(kv);
  }

  /**
   * Stores `bitmap` in place of what `read` answered; false when the stored
   * object changed since (the caller reads again).
   */
  async replace(bitmap: AllocationBitmap, modRevision: number): Promise<boolean> {
    try {
      await this.write(bitmap, modRevision);
      return true;
    } catch (e) {
      if (lostRace(e)) return false;
      throw e;
    }
  }

  /** A new, empty bitmap over this range. */
  emptyBitmap(): AllocationBitmap {
    return new AllocationBitmap(this.range.size, this.range.staticBand, this.random);
  }

  /**
   * Applies `edit` to the stored bitmap and writes it back unless another
   * writer came first (then again, on what that writer stored). `needed`
   * says whether there is anything to write. Changes asked for while one
   * write is on its way are made together in the next: 200 Services created
   * at once cost a few writes of the bitmap, not 200 rounds of lost races.
   */
  private change<T>(edit: (bitmap: AllocationBitmap) => T, needed: (bitmap: AllocationBitmap) => boolean = () => true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ edit, needed, resolve: resolve as (value: unknown) => void, reject });
      if (!this.writing) void this.writeWaiting();
    });
  }

  private async writeWaiting(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) await this.writeBatch(this.waiting.splice(0));
    } finally {
      this.writing = false;
    }
  }

  /**
   * One read, every change of the batch in order, one write. Each change is
   * all or nothing (an edit that refuses leaves the bitmap as it was), so one
   * caller's refusal does not undo the others; answers are given only once
   * the write is in, and a lost race runs every change again on the newer bitmap.
   */
  private async writeBatch(batch: PendingChange[]): Promise<void> {
    for (;;) {
      let outcomes: { answer?: unknown; error?: unknown }[];
      try {
        const { bitmap, modRevision, storedRange } = await this.read();
        if (storedRange && storedRange !== this.range.text) {
          throw new Error(`the stored range ${storedRange} at ${this.key} is not the configured ${this.range.text}: it is rebuilt at start`);
        }
        let changed = false;
        outcomes = batch.map((change) => {
          if (!change.needed(bitmap)) return {};
          try {
            const answer = change.edit(bitmap);
            changed = true;
            return { answer };
          } catch (error) {
            return { error };
          }
        });
        if (changed) await this.write(bitmap, modRevision);
      } catch (e) {
        if (lostRace(e)) continue;
        for (const change of batch) change.reject(e);
        return;
      }
      batch.forEach((change, i) => {
        const outcome = outcomes[i]!;
        if ('error' in outcome) change.reject(outcome.error);
        else change.resolve(outcome.answer);
      });
      return;
    }
  }

  private decode(kv: KeyValue | undefined): RangeSnapshot {
    const bitmap = this.emptyBitmap();
    if (!kv) return { bitmap, modRevision: 0, storedRange: '' };
    let stored: Partial<RangeAllocation>;
    try {
      stored = JSON.parse(kv.value.toString('utf8')) as Partial<RangeAllocation>;
    } catch {
      stored = {};
    }
    const storedRange = typeof stored.range === 'string' ? stored.range : '';
    if (storedRange === this.range.text && typeof stored.data === 'string') bitmap.restore(Buffer.from(stored.data, 'base64'));
    return { bitmap, modRevision: kv.modRevision, storedRange };
  }

  private async write(bitmap: AllocationBitmap, modRevision: number): Promise<void> {
    const object: RangeAllocation = {
      apiVersion: 'v1', kind: 'RangeAllocation', metadata: { creationTimestamp: rfc3339Now() },
      range: this.range.text, data: bitmap.snapshot().toString('base64'),
    };
    const bytes = Buffer.from(JSON.stringify(object));
    if (modRevision === 0) await this.backend.create(this.key, bytes);
    else await this.backend.update(this.key, bytes, modRevision);
  }
}
