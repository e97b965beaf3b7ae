// Backend watches on etcd. One etcd watch over the whole key space (the
// root) feeds a ring of recent events, and every Backend watch whose start
// the ring covers is served from it: at once, in order, without asking etcd
// again. (etcd sends a new watch its history on a 100 ms tick; the ring
// answers in the next turn, as the other backends do.) A watch from before
// the ring gets its own etcd watch.

import { StorageError, Watch, WatchEvent, WatchHandlers, WatchMemory, WatchOptions } from '../backend.js';
import type { EtcdCodec } from './client.js';
import type { EtcdGrpc } from './grpc.js';
import { EtcdWatchStream } from './watch-stream.js';
import { compactedError } from '../revisions.js';
import { deliverSafely, endSafely, eventBytes } from '../watch-hub.js';

/**
 * Events kept in memory: between this and twice as many, and never more
 * bytes than the ring's bound (each holds its value and the previous one).
 */
const ringLimit = 4_096;
/** How long the root may lag behind a revision someone saw before etcd is asked for progress. */
const progressDelayMs = 50;
/** How long progress is asked again for a revision the root has not reached (callers wait less: 504 after a few seconds). */
const progressRetryMs = 10_000;

interface RingWatcher {
  prefix: string;
  withPrevKv: boolean;
  cursor: number;
  handlers: WatchHandlers;
  active: boolean;
  /** Shown the ring up to the head; from then on fed as events come. */
  live: boolean;
  /** Its own etcd watch, once it fell behind the ring. */
  fallback?: Watch;
}

export class EtcdWatches {
  private readonly stream: EtcdWatchStream;
  private root: Watch | undefined;
  /** The ring holds every event after this revision (under the root) up to `head`. */
  private ringFrom = 0;
  private head = 0;
  private ring: WatchEvent[] = [];
  /** Bytes the ring's events hold (eventBytes of each). */
  private ringBytes = 0;
  private readonly watchers = new Set<RingWatcher>();
  private drainTimer: NodeJS.Immediate | undefined;
  private closedWith: StorageError | undefined;

  private progressTimer: NodeJS.Timeout | undefined;
  /** The highest revision a caller saw that the root has not reached, and since when it is wanted. */
  private wanted = 0;
  private wantedSince = 0;

  constructor(
    grpc: EtcdGrpc,
    codec: EtcdCodec,
    /** The known compacted revision; a watch from below it is refused at once. */
    private readonly compacted: () => number,
    learnCompacted: (revision: number) => void,
    /** True when no key under the root changed after `after` up to `through` (both readable). */
    private readonly quietBetween: (after: number, through: number) => Promise<boolean>,
    /** Most bytes the ring's events may hold. */
    private readonly maxRingBytes: number,
  ) {
    this.stream = new EtcdWatchStream(grpc, codec, learnCompacted, (revision) => void this.broadcastProgress(revision));
  }

  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch {
    const after = options.afterRevision;
    if (!Number.isSafeInteger(after) || after < 0) {
      throw new TypeError(`afterRevision must be a non-negative integer, got ${after}`);
    }
    const compacted = this.compacted();
    const refusal = this.closedWith ?? (after < compacted ? compactedError(after, compacted) : undefined);
    if (refusal) {
      let cancelled = false;
      setImmediate(() => { if (!cancelled) handlers.onError(refusal); });
      return { cancel: () => { cancelled = true; } };
    }
    if (!this.root) this.startRoot(after);
    if (after < this.ringFrom) return this.stream.watch(prefix, options, handlers);
    const watcher: RingWatcher = { prefix, withPrevKv: options.prevKv === true, cursor: after, handlers, active: true, live: false };
    this.watchers.add(watcher);
    this.schedule();
    return {
      cancel: () => {
        watcher.active = false;
        watcher.fallback?.cancel();
        this.watchers.delete(watcher);
      },
    };
  }

  get memory(): WatchMemory {
    return { events: this.ring.length, bytes: this.ringBytes, limitBytes: this.maxRingBytes };
  }

  /** True while a watch just made waits for etcd's confirmation (see EtcdWatchStream.confirmed). */
  get confirming(): boolean {
    return this.stream.confirming;
  }

  confirmed(maxMs: number): Promise<void> {
    return this.stream.confirmed(maxMs);
  }

  /** A watch on etcd itself, bypassing the ring (used to probe etcd's compaction). */
  watchEtcd(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch {
    return this.stream.watch(prefix, options, handlers);
  }

  /**
   * Someone saw the store at `revision`. When the root has not shown it a
   * little later, the revisions in between were written outside the root
   * (another prefix on the same etcd): ask etcd how far the stream has come.
   */
  requestProgress(revision: number): void {
    if (!this.root || revision <= this.head) return;
    if (revision > this.wanted) {
      this.wanted = revision;
      this.wantedSince = Date.now();
    }
    this.scheduleProgressRequest();
  }

  private scheduleProgressRequest(): void {
    if (this.progressTimer) return;
    this.progressTimer = setTimeout(() => {
      this.progressTimer = undefined;
      if (this.root && this.wanted > this.head) this.stream.requestProgress(this.wanted);
    }, progressDelayMs);
    this.progressTimer.unref();
  }

  /**
   * etcd's answer may run ahead of events still on their way: trust it only
   * when nothing changed under the root meanwhile. An answer not trusted is
   * asked again while the root is short of the wanted revision: events under
   * the root that were on their way may stop short of it (the rest written
   * under another prefix), and a caller waiting for it asks only once.
   */
  private async broadcastProgress(revision: number): Promise<void> {
    const from = this.head;
    if (!this.root || revision <= from) return;
    let quiet = false;
    try {
      quiet = await this.quietBetween(from, revision);
    } catch {
      // Unverifiable (compacted, unreachable): asked again below, for a while.
    }
    if (quiet && this.head === from) this.progress(revision);
    if (this.wanted > this.head && Date.now() - this.wantedSince < progressRetryMs) this.scheduleProgressRequest();
  }

  close(reason: StorageError): void {
    this.closedWith = reason;
    clearTimeout(this.progressTimer);
    this.stream.close(reason);
    const open = [...this.watchers];
    this.watchers.clear();
    setImmediate(() => {
      for (const watcher of open) this.end(watcher, reason);
    });
  }

  private startRoot(after: number): void {
    this.ringFrom = after;
    this.head = after;
    this.ring = [];
    this.ringBytes = 0;
    this.root = this.stream.watch('', { afterRevision: after, prevKv: true }, {
      onEvents: (events) => this.publish(events),
      onProgress: (revision) => this.progress(revision),
      onError: (err) => this.rootFailed(err),
    });
  }

  private publish(events: WatchEvent[]): void {
    this.ring.push(...events);
    for (const event of events) this.ringBytes += eventBytes(event);
    this.head = Math.max(this.head, events[events.length - 1]!.revision);
    // Trimmed in steps (down to the count limit and half the bytes), not on every event.
    if (this.ring.length > 2 * ringLimit || this.ringBytes > this.maxRingBytes) {
      let excess = Math.max(0, this.ring.length - ringLimit);
      let bytes = this.ringBytes;
      for (let i = 0; i < excess; i++) bytes -= eventBytes(this.ring[i]!);
      while (excess < this.ring.length && bytes > this.maxRingBytes / 2) bytes -= eventBytes(this.ring[excess++]!);
      if (excess > 0) {
        this.ringFrom = this.ring[excess - 1]!.revision;
        this.ring = this.ring.slice(excess);
        this.ringBytes = bytes;
      }
    }
    for (const watcher of [...this.watchers]) {
      if (!watcher.live || !watcher.active) continue;
      const after = watcher.cursor; // a watch may start past the head
      this.deliver(watcher, events.filter((event) => event.revision > after && event.kv.key.startsWith(watcher.prefix)), this.head);
    }
  }

  private progress(revision: number): void {
    this.head = Math.max(this.head, revision);
    for (const watcher of [...this.watchers]) {
      if (!watcher.live || !watcher.active || revision <= watcher.cursor) continue;
      watcher.cursor = revision;
      try {
        watcher.handlers.onProgress?.(revision);
      } catch (err) {
        process.emitWarning(`watch progress handler threw: ${String(err)}`, 'StorageWatchWarning');
      }
    }
  }

  /** The root's history is gone (or etcd ended it): every ring watch has a gap, so each ends. */
  private rootFailed(err: StorageError): void {
    this.root = undefined;
    this.ring = [];
    this.ringBytes = 0;
    for (const watcher of [...this.watchers]) {
      if (watcher.fallback) continue;
      this.end(watcher, err.code === 'Compacted' ? compactedError(watcher.cursor, err.revision ?? this.compacted()) : err);
    }
  }

  private schedule(): void {
    this.drainTimer ??= setImmediate(() => this.drain());
  }

  /** Shows new watchers the ring from their start up to the head. */
  private drain(): void {
    this.drainTimer = undefined;
    for (const watcher of [...this.watchers]) {
      if (watcher.live || !watcher.active) continue;
      if (watcher.cursor < this.ringFrom) {
        // The ring moved on before this watch was shown it: etcd replays the rest.
        watcher.fallback = this.stream.watch(watcher.prefix, { afterRevision: watcher.cursor, prevKv: watcher.withPrevKv }, watcher.handlers);
        this.watchers.delete(watcher);
        continue;
      }
      const events = this.ring.filter((event) => event.revision > watcher.cursor && event.kv.key.startsWith(watcher.prefix));
      watcher.live = true;
      this.deliver(watcher, events, this.head);
    }
  }

  private deliver(watcher: RingWatcher, events: WatchEvent[], through: number): void {
    watcher.cursor = Math.max(watcher.cursor, through);
    if (events.length === 0) return;
    const shown = watcher.withPrevKv ? events : events.map((event) => (event.prevKv ? { type: event.type, kv: event.kv, revision: event.revision } : event));
    deliverSafely(watcher.handlers, shown);
  }

  private end(watcher: RingWatcher, reason: StorageError): void {
    watcher.active = false;
    this.watchers.delete(watcher);
    endSafely(watcher.handlers, reason);
  }
}
