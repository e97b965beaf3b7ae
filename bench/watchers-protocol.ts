// Messages between the benchmark's main thread and a watchers worker, which
// holds many watch streams open (one TLS connection each) and reports when
// events reach them.

import type { Credentials } from './child.js';

export interface WatchersWorkerData {
  url: string;
  creds: Credentials;
  /** Streams per https.Agent (each agent keeps its own TLS session cache). */
  perAgent: number;
}

/**
 * `marker`: a stream only looks for the armed marker in its raw bytes (cheap, for fan-out timing).
 * `sequence`: a stream parses every JSON event and keeps its resourceVersions (for the soak check).
 */
export type WatchMode = 'marker' | 'sequence';

export type WatchersRequest =
  /** Opens `count` watch streams of `path` (`parallel` handshakes at a time); answers once every one got its 200. */
  | { id: number; op: 'open'; path: string; count: number; mode: WatchMode; parallel: number }
  /** From now on every marker-mode stream notes the time it first sees `marker`. Answers at once. */
  | { id: number; op: 'arm'; marker: string }
  /** Answers with the receipt times of the armed marker once every stream saw it, or after `timeoutMs`. */
  | { id: number; op: 'collect'; timeoutMs: number }
  /** Waits (at most `timeoutMs`) until every sequence-mode stream has `expected.length` events, then compares. */
  | { id: number; op: 'verify'; expected: Float64Array; timeoutMs: number }
  | { id: number; op: 'close' };

export interface SequenceReport {
  watchers: number;
  /** Streams whose resourceVersions equal the expected ones exactly, in order. */
  exact: number;
  /** Expected revisions a stream never got, over all streams. */
  lost: number;
  /** Events that came after an event of a higher revision, over all streams. */
  reordered: number;
  /** Events of a revision seen before on the same stream. */
  duplicated: number;
  /** Events of a revision not in the expected set. */
  unexpected: number;
  /** Streams that ended (or got an ERROR event) before the check. */
  ended: number;
  events: number;
}

export type WatchersReply =
  | { id: number; ok: true; openMs?: number; times?: Float64Array; missing?: number; report?: SequenceReport }
  | { id: number; ok: false; error: string };

/** A clock that threads share: epoch milliseconds with sub-microsecond resolution. */
export const sharedNow = (): number => performance.timeOrigin + performance.now();
