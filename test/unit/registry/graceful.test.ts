// Graceful deletion as upstream's rest.BeforeDelete (1.32): its own table of
// grace periods against an object already being deleted (TestBeforeDelete,
// without the rows of 1.33's "never into the past"), and deadlines of Go
// durations, which wrap past int64 nanoseconds instead of failing.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { beforeGracefulDelete, deadlineAfter } from '../../../src/registry/graceful.js';
import type { KubeObject, Strategy } from '../../../src/api/kind.js';

/** A kind that terminates gracefully, as a pod on a node: the period asked, or 30 s. */
const graceful: Strategy = { gracePeriod: (_obj, requested) => requested ?? 30 };

test('a second delete may only shorten the period (upstream\'s TestBeforeDelete)', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  // [deletionGracePeriodSeconds of the object, gracePeriodSeconds asked, step, deletionGracePeriodSeconds after]
  const rows: [number, number, string, number][] = [
    [-1, -1, 'pending', 1], [-1, 0, 'graceful', 0], [-1, 1, 'pending', 1], [-1, 2, 'pending', 1],
    [0, -1, 'none', 0], [0, 0, 'none', 0], [0, 1, 'none', 0], [0, 2, 'none', 0],
    [1, -1, 'pending', 1], [1, 0, 'graceful', 0], [1, 1, 'pending', 1], [1, 2, 'pending', 1],
    [2, -1, 'graceful', 1], [2, 0, 'graceful', 0], [2, 1, 'graceful', 1], [2, 2, 'pending', 2],
  ];
  for (const [current, asked, step, after] of rows) {
    const pod: KubeObject = { metadata: { name: 'p', deletionTimestamp: new Date(now + current * 1000).toISOString().replace(/\.\d+Z$/, 'Z'), deletionGracePeriodSeconds: current } };
    assert.equal(beforeGracefulDelete(graceful, pod, asked), step, `${current} then ${asked}`);
    assert.equal(pod.metadata!.deletionGracePeriodSeconds, after, `${current} then ${asked}`);
  }
});

test('a shorter period moves the deadline back by the old period and on by the new one', () => {
  const pod: KubeObject = { metadata: { name: 'p', deletionTimestamp: '2026-03-01T12:01:00Z', deletionGracePeriodSeconds: 60 } };
  assert.equal(beforeGracefulDelete(graceful, pod, 10), 'graceful');
  assert.deepEqual([pod.metadata!.deletionTimestamp, pod.metadata!.deletionGracePeriodSeconds], ['2026-03-01T12:00:10Z', 10]);
});

test('deadlines are Go durations: seconds x 10^9 wraps at int64 nanoseconds, as upstream writes them', () => {
  const from = Date.parse('2026-01-01T00:00:00Z');
  // [seconds, deletionTimestamp upstream writes from 2026-01-01T00:00:00Z]
  const rows: [number, string][] = [
    [30, '2026-01-01T00:00:30Z'],
    [-5, '2025-12-31T23:59:55Z'],
    [99999999999999, '2032-05-08T04:06:59Z'], // 200376419.52 s after
    [9223372036, '2318-04-12T23:47:16Z'], // the last whole second that does not wrap
    [9223372037, '1733-09-22T00:12:43Z'], // one more wraps to 292 years back
    [10000000000, '1758-05-02T18:12:06Z'],
    [Number.MAX_SAFE_INTEGER, '2172-02-20T23:53:37Z'],
  ];
  for (const [seconds, written] of rows) assert.equal(deadlineAfter(from, seconds), written, String(seconds));
  // Shortening from the wrapped deadline: back by the old (wrapped) period, on by the new.
  assert.equal(deadlineAfter(Date.parse('2032-05-08T04:06:59Z'), -99999999999999, 30), '2026-01-01T00:00:29Z');
});

test('a first delete with a huge period marks the object instead of failing', () => {
  const pod: KubeObject = { metadata: { name: 'p', generation: 1 } };
  const before = Date.now();
  assert.equal(beforeGracefulDelete(graceful, pod, 99999999999999), 'graceful');
  const deadline = Date.parse(pod.metadata!.deletionTimestamp!);
  const ahead = 200376419520.689664;
  assert.ok(deadline >= Math.floor((before + ahead) / 1000) * 1000 && deadline <= Date.now() + ahead, pod.metadata!.deletionTimestamp);
  assert.deepEqual([pod.metadata!.deletionGracePeriodSeconds, pod.metadata!.generation], [99999999999999, 2]);
});
