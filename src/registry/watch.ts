// Watching a collection: the cache's key events become API watch events for
// one client, with selector transitions (an object that stops matching is
// DELETED, one that starts matching is ADDED) and the initial state as
// synthetic ADDED events when the client holds no state yet.

import { ApiError, errors } from '../machinery/errors.js';
import type { FieldSelector, LabelSelector } from '../machinery/selectors.js';
import type { KubeObject } from '../api/kind.js';
import { StorageError } from '../storage/backend.js';
import type { CacheEvent, CacheWatch, IndexCondition, WatchCache } from '../storage/cache/index.js';
import { StoredObject } from './objects.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface ObjectEvent {
  type: WatchEventType;
  object: StoredObject;
  /** The cache event behind it, whose memo shares encodings among watchers. */
  source?: CacheEvent;
}

export interface WatchSink {
  onEvents(events: ObjectEvent[]): void;
  /** The watch ended: Expired (410) for history that is gone, or the watcher fell too far behind. */
  onEnd(error: ApiError): void;
}

export interface ActiveWatch {
  stop(): void;
  pause(): void;
  resume(): void;
  /** The revision a BOOKMARK may carry now. */
  bookmarkRevision(): number;
}

export interface WatchRequest {
  prefix: string;
  /** undefined: start with the current state; a number: deliver what came after it. */
  after?: number;
  labels: LabelSelector;
  fields: FieldSelector;
  fieldValue(obj: KubeObject, field: string): string;
  /** A version whose conversion webhook makes what the field selectors read: events are converted ahead of matching, in order. */
  convertAhead?: { aheadFromStored(objects: KubeObject[]): Promise<void> };
  defaults?: (obj: KubeObject) => void;
  /** See KindDefinition.readDefaultsThrough. */
  readDefaultsThrough?: number;
  maxBuffered?: number;
  /** Set when the selectors can be decided from the key alone (name and namespace): values are then not decoded. */
  keyMatches?: (key: string) => boolean;
  /** An indexed value the selectors require: the cache reads and offers only objects that had or have it. */
  index?: IndexCondition;
}

export function startWatch(cache: WatchCache, req: WatchRequest, sink: WatchSink): ActiveWatch {
  const unfiltered = req.labels.empty && req.fields.empty;
  const wrap = (kv: CacheEvent['kv']) => new StoredObject(kv, req.defaults, req.readDefaultsThrough);
  // A selector on name and namespace only (a controller watching one object
  // by name) is answered from the key: the values it skips are never decoded.
  const keyMatches = req.keyMatches;
  const byKey = keyMatches && ((o: StoredObject) => keyMatches(o.kv.key));
  // Otherwise the one shared decode of the value (kept in the bounded derived
  // cache): every filtered watcher of an event reads the same.
  const matches = byKey ?? ((o: StoredObject) => unfiltered
    || (req.labels.matches(o.object.metadata?.labels) && req.fields.matches((f) => req.fieldValue(o.object, f))));

  const translate = (e: CacheEvent): ObjectEvent | undefined => {
    const now = wrap(e.kv);
    if (e.type === 'delete') {
      // The deleted object's last state, at the revision of the deletion.
      const before = e.prevKv ? wrap(e.prevKv) : now;
      return matches(before) ? { type: 'DELETED', object: now, source: e } : undefined;
    }
    const nowMatches = matches(now);
    if (!e.prevKv) return nowMatches ? { type: 'ADDED', object: now, source: e } : undefined;
    const beforeMatches = matches(wrap(e.prevKv));
    if (nowMatches) return { type: beforeMatches ? 'MODIFIED' : 'ADDED', object: now, source: e };
    return beforeMatches ? { type: 'DELETED', object: now, source: e } : undefined;
  };

  // With a conversion webhook to wait for, events are matched once it answered for them, one after another.
  const ahead = req.convertAhead;
  let inOrder: Promise<void> = Promise.resolve();
  let ended = false;
  const afterConversion = (kvs: CacheEvent['kv'][], then: () => void) => {
    if (!ahead) return then();
    inOrder = inOrder.then(async () => {
      if (ended) return;
      try {
        await ahead.aheadFromStored(kvs.map((kv) => wrap(kv).object));
      } catch (err) {
        ended = true;
        sink.onEnd(err instanceof ApiError ? err : errors.internal(String(err)));
        return;
      }
      then();
    });
  };

  let after = req.after;
  if (after === undefined) {
    const state = cache.list(req.prefix, { index: req.index });
    after = state.revision;
    afterConversion(state.items, () => {
      const initial = state.items.map((kv) => ({ type: 'ADDED' as const, object: wrap(kv) })).filter((e) => matches(e.object));
      if (initial.length) queueMicrotask(() => sink.onEvents(initial));
    });
  }
  const from = after;
  const watch: CacheWatch = cache.watch(req.prefix, from, {
    onEvents(events) {
      afterConversion(events.flatMap((e) => (e.prevKv ? [e.kv, e.prevKv] : [e.kv])), () => {
        const out: ObjectEvent[] = [];
        for (const e of events) {
          const t = translate(e);
          if (t) out.push(t);
        }
        if (out.length) sink.onEvents(out);
      });
    },
    onError(err: StorageError) {
      if (err.code === 'Compacted') sink.onEnd(errors.expired(`too old resource version: ${from} (${err.revision ?? ''})`));
      else sink.onEnd(errors.gone(err.message));
    },
  }, { maxBuffered: req.maxBuffered, index: req.index });
  return {
    stop: () => { ended = true; watch.cancel(); },
    pause: () => watch.pause(),
    resume: () => watch.resume(),
    bookmarkRevision: () => watch.bookmarkRevision(),
  };
}
