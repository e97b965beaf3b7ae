// What consumers derive from cached bytes (the decoded object, a watch event's
// encoded frame) is shared between every reader of the same version or event,
// but it is not kept as long as that version or event: all of it lives in one
// least-recently-used cache bounded in bytes, process-wide. The stored bytes
// are the one copy the watch cache holds for sure; a decode or an encoding
// that was dropped is simply derived again on the next use.
//
// Why one bound for the process and not a map per value: a map per value is
// kept as long as the value (every cached object decoded once stays decoded;
// every event in the window keeps its frames), so memory followed the number
// of reads and writes instead of the data. A single LRU keeps what is in use
// now (the event being fanned out to a thousand watchers, the objects a
// controller keeps reading) and forgets the rest.

/** Per-owner scratch space, backed by the shared bounded cache. */
export interface Memo {
  get(key: string): unknown;
  /** `bytes`: about how much memory `value` holds, counted against the bound. */
  set(key: string, value: unknown, bytes: number): void;
}

interface Entry {
  slots: Map<string, Entry>;
  key: string;
  value: unknown;
  bytes: number;
  /** `DerivedCache.clock` when last moved to the young end: a hit within the young half moves nothing. */
  stamp: number;
}

/** Default bound of the process-wide derived cache. */
export const defaultDerivedBytes = 32 * 1024 * 1024;

export class DerivedCache {
  /** Every entry, least recently used first (a Set iterates in insertion order). */
  private readonly entries = new Set<Entry>();
  private total = 0;
  private clock = 0;

  constructor(private maxBytes = defaultDerivedBytes) {}

  /** Bytes held now (never above the bound once a set() returns). */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  get limit(): number {
    return this.maxBytes;
  }

  /** Change the bound; evicts at once when it shrinks. */
  resize(maxBytes: number): void {
    this.maxBytes = maxBytes;
    this.evict();
  }

  /** A memo whose entries live in this cache (created empty; cheap until used). */
  memo(): Memo {
    return new SlotMemo(this);
  }

  /** @internal */
  touch(entry: Entry): void {
    // Entries used again soon after they moved stay where they are: a thousand
    // watchers reading one decode do not reorder the set a thousand times.
    if (this.clock - entry.stamp < this.entries.size / 2) return;
    entry.stamp = ++this.clock;
    this.entries.delete(entry);
    this.entries.add(entry);
  }

  /** @internal */
  add(slots: Map<string, Entry>, key: string, value: unknown, bytes: number): void {
    const old = slots.get(key);
    if (old) this.remove(old);
    if (bytes > this.maxBytes) return; // larger than the whole cache: not kept
    const entry: Entry = { slots, key, value, bytes, stamp: ++this.clock };
    slots.set(key, entry);
    this.entries.add(entry);
    this.total += bytes;
    this.evict();
  }

  private evict(): void {
    while (this.total > this.maxBytes) {
      const oldest = this.entries.values().next().value as Entry;
      this.remove(oldest);
    }
  }

  private remove(entry: Entry): void {
    this.entries.delete(entry);
    if (entry.slots.get(entry.key) === entry) entry.slots.delete(entry.key);
    this.total -= entry.bytes;
  }
}

class SlotMemo implements Memo {
  private slots: Map<string, Entry> | undefined;

  constructor(private readonly cache: DerivedCache) {}

  get(key: string): unknown {
    const entry = this.slots?.get(key);
    if (!entry) return undefined;
    this.cache.touch(entry);
    return entry.value;
  }

  set(key: string, value: unknown, bytes: number): void {
    this.cache.add((this.slots ??= new Map()), key, value, bytes);
  }
}

/** The cache every watch cache of the process derives into. */
export const derivedCache = new DerivedCache();

/** About what a decoded JSON object of `jsonBytes` holds on the heap (measured: 2 to 4 times its text). */
export function decodedBytes(jsonBytes: number): number {
  return 3 * jsonBytes + 256;
}
