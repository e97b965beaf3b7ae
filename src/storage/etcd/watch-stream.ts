// etcd watches on one watch stream. Each watch keeps a cursor: the last
// revision it has been shown. When the stream breaks (a member dies,
// the network fails), it is opened again after a pause and every watch is
// created anew from its cursor, so a watch resumes without a gap, or ends
// with 'Compacted' when etcd no longer holds the history it needs. Events
// at or below the cursor (sent twice around a reconnect) are dropped.

import { StorageError, Watch, WatchEvent, WatchHandlers, WatchOptions } from '../backend.js';
import { EtcdCodec } from './client.js';
import type { EtcdGrpc, EtcdWatchCall } from './grpc.js';
import type { WatchEventMessage, WatchResponse } from './proto.js';
import { compactedError } from '../revisions.js';

interface Watcher {
  id: number;
  prefix: string;
  withPrevKv: boolean;
  cursor: number;
  handlers: WatchHandlers;
  active: boolean;
  /** Created on the current stream. */
  created: boolean;
  /**
   * The head when etcd created the watch: history up to it goes out as one
   * batch, apart from later events, as the other backends deliver it.
   */
  replayUntil?: number;
}

type Stream = EtcdWatchCall;

const firstRetryMs = 100;
const maxRetryMs = 2_000;

export class EtcdWatchStream {
  private readonly watchers = new Map<number, Watcher>();
  private nextId = 1;
  private stream: Stream | undefined;
  private retryMs = firstRetryMs;
  private retryTimer: NodeJS.Timeout | undefined;
  private closedWith: StorageError | undefined;
  /** Highest revision seen on the stream (events or progress). */
  private seen = 0;
  private progressRequested = false;
  /** Watches whose creation etcd has not confirmed yet, and writers waiting for that. */
  private readonly unconfirmed = new Set<number>();
  private confirmWaiters: (() => void)[] = [];

  constructor(
    private readonly grpc: EtcdGrpc,
    private readonly codec: EtcdCodec,
    /** Told of each compaction revision etcd reports. */
    private readonly learnCompacted: (revision: number) => void,
    /** Told the store's revision when etcd answers a progress request (not in order with events). */
    private readonly onBroadcastProgress: (revision: number) => void,
  ) {}

  /** Watches `prefix` on etcd from after `options.afterRevision` (validated by the caller). */
  watch(prefix: string, options: WatchOptions, handlers: WatchHandlers): Watch {
    const watcher: Watcher = {
      id: this.nextId++, prefix, withPrevKv: options.prevKv === true, cursor: options.afterRevision, handlers, active: true, created: false,
    };
    const cancel = { cancel: () => this.cancel(watcher) };
    if (this.closedWith) {
      const reason = this.closedWith;
      setImmediate(() => this.end(watcher, reason));
      return cancel;
    }
    this.watchers.set(watcher.id, watcher);
    this.unconfirmed.add(watcher.id);
    if (this.stream) this.create(this.stream, watcher);
    else this.open();
    return cancel;
  }

  /**
   * Asks etcd to report how far the stream has come, so that watches learn
   * of revisions written outside their prefixes. Sent when a caller knows
   * of a revision the stream has not shown yet.
   */
  requestProgress(revision: number): void {
    if (revision <= this.seen || this.progressRequested || !this.stream) return;
    this.progressRequested = true;
    this.stream.write({ progress: true });
  }

  /** True while some watch waits for etcd to confirm its creation. */
  get confirming(): boolean {
    return this.unconfirmed.size > 0;
  }

  /**
   * Resolves once etcd confirmed every watch created so far (at most after
   * `maxMs`). A write that waits for this is seen by those watches at once:
   * etcd puts a watch that starts past its head among the live ones, but
   * replays to one created after the write on a 100 ms tick.
   */
  confirmed(maxMs: number): Promise<void> {
    if (this.unconfirmed.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.confirmWaiters.push(resolve);
      setTimeout(resolve, maxMs).unref();
    });
  }

  private confirm(id: number | undefined): void {
    if (id === undefined) this.unconfirmed.clear();
    else this.unconfirmed.delete(id);
    if (this.unconfirmed.size > 0) return;
    const waiters = this.confirmWaiters;
    this.confirmWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Ends every watch with `reason`; the stream is closed. */
  close(reason: StorageError): void {
    this.closedWith = reason;
    this.confirm(undefined);
    clearTimeout(this.retryTimer);
    const stream = this.stream;
    this.stream = undefined;
    stream?.cancel();
    const open = [...this.watchers.values()];
    this.watchers.clear();
    setImmediate(() => {
      for (const watcher of open) this.end(watcher, reason);
    });
  }

  private cancel(watcher: Watcher): void {
    if (!watcher.active) return;
    watcher.active = false;
    this.watchers.delete(watcher.id);
    this.confirm(watcher.id);
    if (watcher.created && this.stream) this.stream.write({ cancel: { watchId: watcher.id } });
  }

  private open(): void {
    if (this.stream || this.closedWith) return;
    // A stream that fails to connect ends like one that breaks: writers stop waiting, and it is opened again after a pause.
    const stream: Stream = this.grpc.watch({
      response: (res) => this.receive(stream, res),
      ended: () => this.broken(stream),
    });
    this.stream = stream;
    this.progressRequested = false;
    for (const watcher of this.watchers.values()) this.create(stream, watcher);
  }

  private create(stream: Stream, watcher: Watcher): void {
    const range = this.codec.range(watcher.prefix);
    watcher.created = true;
    stream.write({
      create: {
        key: range.key,
        rangeEnd: range.range_end,
        watchId: watcher.id,
        startRevision: this.codec.toEtcd(watcher.cursor) + 1,
        // Always: a delete event carries the deleted value only through it.
        prevKv: true,
        progressNotify: true,
      },
    });
  }

  private broken(stream: Stream): void {
    if (this.stream !== stream) return;
    this.stream = undefined;
    stream.cancel();
    for (const watcher of this.watchers.values()) watcher.created = false;
    this.confirm(undefined);
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    if (this.closedWith || this.retryTimer) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(maxRetryMs, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.watchers.size > 0) this.open();
    }, delay);
    this.retryTimer.unref();
  }

  private receive(stream: Stream, res: WatchResponse): void {
    if (this.stream !== stream) return;
    this.retryMs = firstRetryMs;
    const id = res.watchId;
    const headerRevision = this.codec.fromEtcd(res.revision);
    if (id === -1) {
      // The answer to a progress request. etcd 3.4 sends it apart from the
      // watchers' own queues, so events up to it may still be on their way:
      // the owner checks before trusting it.
      this.progressRequested = false;
      this.onBroadcastProgress(headerRevision);
      return;
    }
    if (!res.created && !res.canceled && res.events.length === 0) {
      // A watcher's periodic progress: sent in order with its events, so nothing up to it is missing.
      this.seen = Math.max(this.seen, headerRevision);
      const watcher = this.watchers.get(id);
      if (watcher) this.progress(watcher, headerRevision);
      return;
    }
    if (res.created || res.canceled) this.confirm(id);
    const watcher = this.watchers.get(id);
    if (!watcher) return; // cancelled meanwhile
    if (res.created && !res.canceled) {
      if (headerRevision > watcher.cursor) watcher.replayUntil = headerRevision;
      return;
    }
    if (res.canceled) {
      const compactRevision = res.compactRevision;
      this.watchers.delete(id);
      if (compactRevision > 0) {
        const compacted = this.codec.fromEtcd(compactRevision);
        this.learnCompacted(compacted);
        this.end(watcher, compactedError(watcher.cursor, compacted));
      } else {
        this.end(watcher, new StorageError('Unavailable', `etcd cancelled the watch: ${res.cancelReason || 'no reason given'}`));
      }
      return;
    }
    const events: WatchEvent[] = [];
    for (const raw of res.events) {
      const event = this.event(raw, watcher.withPrevKv);
      if (event.revision > watcher.cursor) events.push(event);
    }
    const until = watcher.replayUntil;
    if (until !== undefined && events.length > 0 && events[events.length - 1]!.revision >= until) watcher.replayUntil = undefined;
    const split = until === undefined ? -1 : events.findIndex((event) => event.revision > until);
    if (split > 0) {
      this.deliver(watcher, events.slice(0, split));
      this.deliver(watcher, events.slice(split));
    } else {
      this.deliver(watcher, events);
    }
  }

  private deliver(watcher: Watcher, events: WatchEvent[]): void {
    if (events.length === 0 || !watcher.active) return;
    watcher.cursor = events[events.length - 1]!.revision;
    this.seen = Math.max(this.seen, watcher.cursor);
    try {
      watcher.handlers.onEvents(events);
    } catch (err) {
      process.emitWarning(`watch handler threw: ${String(err)}`, 'StorageWatchWarning');
    }
  }

  private progress(watcher: Watcher, revision: number): void {
    if (!watcher.active || revision <= watcher.cursor) return;
    watcher.cursor = revision;
    try {
      watcher.handlers.onProgress?.(revision);
    } catch (err) {
      process.emitWarning(`watch progress handler threw: ${String(err)}`, 'StorageWatchWarning');
    }
  }

  private event(raw: WatchEventMessage, withPrevKv: boolean): WatchEvent {
    const kv = this.codec.fromKv(raw.kv);
    const prevKv = raw.prevKv ? this.codec.fromKv(raw.prevKv) : undefined;
    const revision = kv.modRevision;
    if (raw.type === 'delete') {
      // etcd's delete event has the key only; the Backend shows the last value at the delete's revision.
      const deleted = { ...kv, value: prevKv?.value ?? Buffer.alloc(0), createRevision: prevKv?.createRevision ?? 0 };
      return withPrevKv && prevKv ? { type: 'delete', kv: deleted, prevKv, revision } : { type: 'delete', kv: deleted, revision };
    }
    return withPrevKv && prevKv ? { type: 'put', kv, prevKv, revision } : { type: 'put', kv, revision };
  }

  private end(watcher: Watcher, reason: StorageError): void {
    watcher.active = false;
    this.watchers.delete(watcher.id);
    try {
      watcher.handlers.onError(reason);
    } catch (err) {
      process.emitWarning(`watch error handler threw: ${String(err)}`, 'StorageWatchWarning');
    }
  }
}
