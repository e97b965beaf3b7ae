import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventWindow } from '../../../src/storage/cache/event-window.js';
import { SortedValues } from '../../../src/storage/cache/sorted-values.js';
import { CacheEvent, CachedKeyValue } from '../../../src/storage/cache/types.js';
import { seededRandom } from './support.js';

const kv = (key: string, rev = 1) => new CachedKeyValue(key, Buffer.from('v'), rev, rev);
const compareBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

describe('sorted values', () => {
  for (const chunkLimit of [undefined, 4]) {
    test(`stay in byte order of the key under random puts and removes${chunkLimit ? ` (chunks of at most ${chunkLimit})` : ''}`, () => {
      sortedUnderChurn(new SortedValues(chunkLimit));
    });
  }

  for (const keyed of [true, false]) test(`a large collection in chunks${keyed ? '' : ' without a map by key (an index\'s group)'}: every range, count and get agrees with a sorted array, through resets, inserts and removals`, () => {
    const random = seededRandom(7);
    const values = new SortedValues(8, keyed);
    const model: string[] = [];
    const key = (n: number) => `/r/ns${n % 7}/k${n}`;
    values.reset([...Array(200).keys()].map((n) => key(n * 3)).sort((a, b) => compareBytes(a, b)).map((k) => kv(k)));
    model.push(...values.range('/r/', undefined, 0).items.map((v) => v.key));
    for (let i = 0; i < 2000; i++) {
      const k = key(Math.floor(random() * 900));
      const at = model.indexOf(k);
      if (random() < 0.4) {
        assert.equal(values.remove(k)?.key, at >= 0 ? k : undefined);
        if (at >= 0) model.splice(at, 1);
      } else {
        values.put(kv(k, i));
        if (at < 0) model.push(k);
      }
      model.sort(compareBytes);
      if (i % 97 === 0) {
        for (const prefix of ['/r/', '/r/ns3/', '/r/ns9/']) {
          const under = model.filter((m) => m.startsWith(prefix));
          const start = under[Math.floor(random() * (under.length + 1))];
          const from = start === undefined ? under.length : under.indexOf(start);
          const limit = Math.floor(random() * 20);
          const r = values.range(prefix, start, limit);
          assert.equal(r.count, under.length - from);
          assert.deepEqual(r.items.map((v) => v.key), under.slice(from, limit > 0 ? from + limit : undefined));
        }
      }
    }
    assert.equal(values.size, model.length);
    assert.deepEqual(values.range('/r/', undefined, 0).items.map((v) => v.key), model);
    for (const k of model) assert.equal(values.get(k)?.key, k);
  });

  function sortedUnderChurn(values: SortedValues): void {
    const random = seededRandom(42);
    const model = new Map<string, number>();
    // Includes a character above U+FFFF, where UTF-16 order differs from byte order.
    const alphabet = ['a', 'b', 'z', '\u{1F600}', '\uFF5E', '/'];
    for (let i = 0; i < 3000; i++) {
      const key = `/r/${alphabet[Math.floor(random() * alphabet.length)]}${Math.floor(random() * 40)}`;
      if (random() < 0.3) {
        assert.equal(values.remove(key)?.modRevision, model.get(key));
        model.delete(key);
      } else {
        assert.equal(values.put(kv(key, i))?.modRevision, model.get(key));
        model.set(key, i);
      }
    }
    const byBytes = [...model.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    assert.deepEqual(values.range('/r/', undefined, 0).items.map((v) => v.key), byBytes);
    assert.equal(values.size, model.size);
    for (const key of byBytes) assert.equal(values.get(key)?.modRevision, model.get(key));
  }

  test('range honours prefix, start key and limit', () => {
    const values = new SortedValues();
    values.reset(['/r/a/1', '/r/a/2', '/r/a/3', '/r/ab/1', '/r/b/1'].map((k) => kv(k)));
    const keys = (p: string, s?: string, l = 0) => {
      const r = values.range(p, s, l);
      return [r.items.map((v) => v.key), r.count];
    };
    assert.deepEqual(keys('/r/a/'), [['/r/a/1', '/r/a/2', '/r/a/3'], 3]);
    assert.deepEqual(keys('/r/a/', '/r/a/2', 1), [['/r/a/2'], 2]);
    assert.deepEqual(keys('/r/a/', '/r/a/9'), [[], 0]);
    assert.deepEqual(keys('/r/', undefined, 2), [['/r/a/1', '/r/a/2'], 5]);
    assert.deepEqual(keys('/r/c/'), [[], 0]);
  });
});

describe('event window', () => {
  const event = (rev: number, key = '/r/a') => new CacheEvent('put', kv(key, rev), undefined, rev);

  test('knows from which revision it is complete, by count and by age', () => {
    const window = new EventWindow(1000, 3);
    window.reset(10);
    for (const rev of [12, 15, 16]) window.push(event(rev), 0);
    assert.equal(window.completeAfter, 10);
    window.push(event(20), 500);
    assert.equal(window.completeAfter, 12, 'the oldest event was dropped by count');
    assert.deepEqual(window.eventsAfter(12, '/r/').map((e) => e.revision), [15, 16, 20]);
    assert.deepEqual(window.eventsAfter(16, '/r/').map((e) => e.revision), [20]);
    window.expire(1200);
    assert.equal(window.completeAfter, 16, 'events older than the age were dropped');
    assert.deepEqual(window.eventsAfter(0, '/r/').map((e) => e.revision), [20]);
    window.expire(1600);
    assert.equal(window.size, 0);
    assert.equal(window.completeAfter, 20);
  });

  test('filters by prefix and survives many drops', () => {
    const window = new EventWindow(60_000, 1500);
    for (let rev = 1; rev <= 10_000; rev++) window.push(event(rev, rev % 2 ? '/r/odd/x' : '/r/even/x'), rev);
    assert.equal(window.completeAfter, 8500);
    const odd = window.eventsAfter(9990, '/r/odd/').map((e) => e.revision);
    assert.deepEqual(odd, [9991, 9993, 9995, 9997, 9999]);
  });
});
