import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Backend } from '../../../src/storage/backend.js';
import type { CacheIndexDeclaration } from '../../../src/storage/cache/value-index.js';
import type { CacheEvent, CachedKeyValue } from '../../../src/storage/cache/types.js';
import { WatchCache } from '../../../src/storage/cache/watch-cache.js';
import type { WatchCacheSetup } from '../../../src/storage/cache/watch-cache.js';
import { backendCases, buf, recordCacheWatch, seededRandom, startOracle } from './support.js';

// Values are "<node>|<n>": the index reads the node, as the pod index reads spec.nodeName.
const root = '/registry/pods/';
const nodes = ['', 'node-a', 'node-b', 'node-c'];
const keys = ['ns1', 'ns2'].flatMap((ns) => Array.from({ length: 15 }, (_, i) => `${root}${ns}/p${String(i).padStart(2, '0')}`));
const nodeOf = (value: Buffer): string => value.toString().split('|')[0]!;
const byNode: CacheIndexDeclaration = { name: 'spec.nodeName', valueOf: (kv) => nodeOf(kv.value) };
const onNode = (node: string) => ({ name: 'spec.nodeName', value: node });

/** Creates, deletes and moves between nodes, chosen by `random`. */
async function churn(backend: Backend, count: number, random: () => number): Promise<void> {
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  for (let i = 0; i < count; i++) {
    const key = pick(keys);
    const current = await backend.get(key);
    if (!current) await backend.create(key, buf(`${pick(nodes)}|${i}`));
    else if (random() < 0.2) await backend.delete(key, current.modRevision);
    else await backend.update(key, buf(`${random() < 0.5 ? pick(nodes) : nodeOf(current.value)}|${i}`), current.modRevision);
  }
}

const view = (kv: CachedKeyValue) => `${kv.key}=${kv.value.toString()}@${kv.modRevision}`;
/** The events a watcher of `node` must be offered: the object had or has that node. */
const concerns = (e: { kv: { value: Buffer }; prevKv?: { value: Buffer } }, node: string) =>
  nodeOf(e.kv.value) === node || (e.prevKv !== undefined && nodeOf(e.prevKv.value) === node);
const eventView = (e: CacheEvent | { type: string; revision: number; kv: { key: string; value: Buffer } }) => `${e.revision} ${e.type} ${e.kv.key} ${e.kv.value.toString()}`;

/** Every indexed list (whole and in pages, per prefix) equals the full list filtered by node. */
function assertIndexExact(cache: WatchCache): void {
  for (const prefix of [root, `${root}ns1/`, `${root}ns2/`]) {
    const all = cache.list(prefix);
    for (const node of [...nodes, 'node-z']) {
      const expected = all.items.filter((kv) => nodeOf(kv.value) === node).map(view);
      const indexed = cache.list(prefix, { index: onNode(node) });
      assert.deepEqual(indexed.items.map(view), expected, `${prefix} ${node}`);
      assert.equal(indexed.revision, all.revision);
      const paged: string[] = [];
      let startKey: string | undefined;
      for (;;) {
        const page = cache.list(prefix, { index: onNode(node), startKey, limit: 3 });
        paged.push(...page.items.map(view));
        assert.equal(page.count, expected.length - paged.length + page.items.length);
        if (!page.more) break;
        startKey = page.items.at(-1)!.key + '\0';
      }
      assert.deepEqual(paged, expected, `${prefix} ${node} in pages`);
    }
  }
}

for (const { name, open } of backendCases) {
  describe(`an indexed watch cache on the ${name} backend`, () => {
    function withCache(body: (backend: Backend, cache: WatchCache) => Promise<void>, options: WatchCacheSetup = {}) {
      return async () => {
        const { backend, dispose } = open();
        const cache = new WatchCache(backend, root, options);
        cache.addIndex(byNode);
        try {
          await cache.start();
          await body(backend, cache);
        } finally {
          cache.stop();
          await dispose();
        }
      };
    }

    test('an indexed list reads only its value\'s objects, in key order, at the list\'s revision, whole and paged', withCache(async (backend, cache) => {
      const random = seededRandom(11);
      for (let round = 0; round < 2; round++) {
        await churn(backend, 80, random);
        await cache.waitUntilFresh(await backend.currentRevision());
        assertIndexExact(cache);
      }
    }));

    test('an index declared on a running cache is built from its values', async () => {
      const { backend, dispose } = open();
      const cache = new WatchCache(backend, root);
      try {
        await churn(backend, 60, seededRandom(3));
        await cache.start();
        assert.equal(cache.hasIndex(byNode.name), false);
        cache.addIndex(byNode);
        assertIndexExact(cache);
        await churn(backend, 30, seededRandom(4));
        await cache.waitUntilFresh(await backend.currentRevision());
        assertIndexExact(cache);
      } finally {
        cache.stop();
        await dispose();
      }
    });

    test('two indexes on one cache each list exactly their groups, the second declared after the first had indexed every value', async () => {
      const { backend, dispose } = open();
      const parityOf = (value: Buffer) => (Number(value.toString().split('|')[1]) % 2 ? 'odd' : 'even');
      const byParity: CacheIndexDeclaration = { name: 'parity', valueOf: (kv) => parityOf(kv.value) };
      const cache = new WatchCache(backend, root);
      cache.addIndex(byNode);
      try {
        await churn(backend, 60, seededRandom(5));
        await cache.start();
        cache.addIndex(byParity);
        for (let round = 0; round < 2; round++) {
          assertIndexExact(cache);
          const all = cache.list(root).items;
          for (const parity of ['odd', 'even']) {
            const expected = all.filter((kv) => parityOf(kv.value) === parity).map(view);
            assert.deepEqual(cache.list(root, { index: { name: 'parity', value: parity } }).items.map(view), expected, parity);
          }
          await churn(backend, 40, seededRandom(6 + round));
          await cache.waitUntilFresh(await backend.currentRevision());
        }
      } finally {
        cache.stop();
        await dispose();
      }
    });

    test('a watcher of a node is offered exactly the events of objects that were or are on it: a move reaches the old node\'s and the new node\'s', withCache(async (backend, cache) => {
      const from = cache.revision;
      const oracle = startOracle(backend, from);
      const watchers = new Map(nodes.map((node) => [node, recordCacheWatch(cache, root, from, { index: onNode(node) })]));
      const everything = recordCacheWatch(cache, root, from);
      const moving = `${root}ns1/moving`;
      const created = await backend.create(moving, buf('node-a|0'));
      const moved = await backend.update(moving, buf('node-b|1'), created.modRevision);
      await churn(backend, 80, seededRandom(5));
      const upTo = await backend.currentRevision();
      const expected = await oracle.under(root, from, upTo);
      oracle.cancel();
      await everything.waitFor(expected.length);
      for (const [node, recorder] of watchers) {
        const mine = expected.filter((e) => concerns(e, node));
        await recorder.waitFor(mine.length);
        assert.deepEqual(recorder.events.map(eventView), mine.map(eventView), node);
      }
      const move = (node: string) => watchers.get(node)!.events.filter((e) => e.revision === moved.modRevision).map((e) => nodeOf(e.prevKv!.value));
      assert.deepEqual(move('node-a'), ['node-a'], 'the old node\'s watcher sees the move');
      assert.deepEqual(move('node-b'), ['node-a'], 'the new node\'s watcher sees the move');
      assert.deepEqual(move('node-c'), [], 'another node\'s watcher does not');
      for (const recorder of [...watchers.values(), everything]) recorder.watch.cancel();
    }));

    test('a watch of a node resumed from inside the window replays only its node\'s events', withCache(async (backend, cache) => {
      const from = cache.revision;
      await churn(backend, 60, seededRandom(8));
      await cache.waitUntilFresh(await backend.currentRevision());
      const oracle = startOracle(backend, from);
      const upTo = await backend.currentRevision();
      const expected = (await oracle.under(root, from, upTo)).filter((e) => concerns(e, 'node-b'));
      oracle.cancel();
      const recorder = recordCacheWatch(cache, root, from, { index: onNode('node-b') });
      await recorder.waitFor(expected.length);
      assert.equal(recorder.watch.fromBackend, false);
      assert.deepEqual(recorder.events.map(eventView), expected.map(eventView));
      recorder.watch.cancel();
    }));

    test('a watch of a node resumed from before the window is served by the store, then narrowed once it reaches the window', withCache(async (backend, cache) => {
      const from = cache.revision;
      const oracle = startOracle(backend, from);
      await churn(backend, 60, seededRandom(9));
      await cache.waitUntilFresh(await backend.currentRevision());
      const recorder = recordCacheWatch(cache, root, from, { index: onNode('node-a') });
      assert.equal(recorder.watch.fromBackend, true);
      const handedOver = await backend.currentRevision();
      // Until it reaches the window it gets everything under its prefix; the consumer filters.
      await recorder.waitFor((await oracle.under(root, from, handedOver)).length);
      await churn(backend, 40, seededRandom(10));
      const upTo = await backend.currentRevision();
      const expected = await oracle.under(root, from, upTo);
      oracle.cancel();
      const early = expected.filter((e) => e.revision <= handedOver);
      const late = expected.filter((e) => e.revision > handedOver && concerns(e, 'node-a'));
      await recorder.waitFor(early.length + late.length);
      assert.equal(recorder.watch.fromBackend, false);
      assert.deepEqual(recorder.events.map(eventView), [...early, ...late].map(eventView));
      assertIndexExact(cache);
      recorder.watch.cancel();
    }, { maxEvents: 20 }));

    test('the index stays exact across a compaction and a restart of the cache', async () => {
      const { backend, dispose } = open();
      const first = new WatchCache(backend, root);
      first.addIndex(byNode);
      let second: WatchCache | undefined;
      try {
        await first.start();
        await churn(backend, 80, seededRandom(12));
        await backend.compact(await backend.currentRevision());
        await churn(backend, 30, seededRandom(13));
        await first.waitUntilFresh(await backend.currentRevision());
        assertIndexExact(first);
        first.stop();
        second = new WatchCache(backend, root);
        second.addIndex(byNode);
        await second.start();
        assertIndexExact(second);
        const stored = (await backend.range(root)).items.filter((kv) => nodeOf(kv.value) === 'node-c');
        assert.deepEqual(second.list(root, { index: onNode('node-c') }).items.map(view), stored.map((kv) => `${kv.key}=${kv.value.toString()}@${kv.modRevision}`));
      } finally {
        first.stop();
        second?.stop();
        await dispose();
      }
    });
  });
}
