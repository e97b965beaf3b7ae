// The assembly's post-start hooks and closers: a hook registered once is
// its health check on /healthz, /readyz and (after the grace period) /livez;
// work that is no readiness condition has none; a refused hook is retried
// until it succeeds. Closers run last-made first, each once, all of them
// even when one fails.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { Health } from '../../../src/server/health.js';
import { PostStartHooks } from '../../../src/apiserver/hooks.js';
import { Closers } from '../../../src/apiserver/closers.js';
import { FakeClock } from '../../support/clock.js';
import { eventually } from '../../support/eventually.js';

/** One health answer: its code and body. */
async function probe(health: Health, path: string, query = ''): Promise<{ code: number; text: string }> {
  let code = 0;
  let text = '';
  const res = {
    writeHead(c: number) { code = c; return res; },
    end(body: Buffer) { text = body.toString('utf8'); },
  };
  assert.equal(await health.serve(path, new URLSearchParams(query), res as unknown as ServerResponse), true);
  return { code, text };
}

function hooksFor(health: Health, o: { grace?: boolean; clock?: FakeClock; logged?: string[] } = {}): PostStartHooks {
  return new PostStartHooks(health, { inLivezGrace: () => o.grace ?? false, log: (message) => o.logged?.push(message), clock: o.clock });
}

test('a hook is its own health check on each endpoint, failing until it has run', async () => {
  const health = new Health();
  health.add({ name: 'ping', check: () => undefined });
  const hooks = hooksFor(health);
  let ran = 0;
  hooks.add({ name: 'rbac/bootstrap-roles', failure: 'could not reconcile', run: async () => { ran++; } });
  for (const endpoint of ['healthz', 'readyz', 'livez']) {
    const before = await probe(health, `/${endpoint}`, 'verbose');
    assert.equal(before.code, 500, endpoint);
    assert.match(before.text, /^\[-\]poststarthook\/rbac\/bootstrap-roles failed: reason withheld$/m);
    assert.equal((await probe(health, `/${endpoint}/poststarthook/rbac/bootstrap-roles`)).code, 500);
  }
  await hooks.start();
  assert.equal(ran, 1);
  for (const endpoint of ['healthz', 'readyz', 'livez']) {
    assert.equal((await probe(health, `/${endpoint}`, 'verbose')).text, `[+]ping ok\n[+]poststarthook/rbac/bootstrap-roles ok\n${endpoint} check passed\n`);
  }
  await hooks.shutDown();
});

test('within the livez grace period an unfinished hook fails readiness only', async () => {
  const health = new Health();
  const hooks = hooksFor(health, { grace: true });
  hooks.add({ name: 'reserved-namespaces', failure: 'could not create', run: async () => { throw new Error('refused'); } });
  assert.equal((await probe(health, '/livez')).code, 200);
  assert.equal((await probe(health, '/readyz')).code, 500);
  assert.equal((await probe(health, '/healthz')).code, 500);
  await hooks.shutDown();
});

test('work that is no readiness condition runs without a health check', async () => {
  const health = new Health();
  health.add({ name: 'ping', check: () => undefined });
  const hooks = hooksFor(health);
  let ran = false;
  hooks.addUnchecked({ name: 'cluster-info', failure: 'could not create', run: async () => { ran = true; } });
  assert.equal((await probe(health, '/readyz', 'verbose')).text, '[+]ping ok\nreadyz check passed\n');
  assert.equal((await probe(health, '/readyz/poststarthook/cluster-info')).code, 404);
  await hooks.start();
  assert.equal(ran, true);
  await hooks.shutDown();
});

test('a refused hook is logged, retried every 2 s, and ready once it succeeds', async () => {
  const health = new Health();
  const clock = new FakeClock();
  const logged: string[] = [];
  const hooks = hooksFor(health, { clock, logged });
  let tries = 0;
  hooks.add({ name: 'reserved-namespaces', failure: 'could not create the reserved namespaces', run: async () => { if (++tries < 3) throw new Error('refused'); } });
  await hooks.start();
  assert.deepEqual(logged, ['could not create the reserved namespaces; trying again']);
  assert.equal((await probe(health, '/readyz')).code, 500);
  assert.deepEqual(clock.pending(), [2_000]);
  clock.advance(2_000);
  await eventually('the second try has failed and the third is due', () => tries === 2 && clock.pending().length === 1);
  assert.deepEqual(clock.pending(), [2_000]);
  clock.advance(2_000);
  await eventually('the third try has succeeded', async () => (await probe(health, '/readyz')).code === 200);
  assert.equal(tries, 3);
  await hooks.shutDown();
});

test('a hook name is registered once', () => {
  const hooks = hooksFor(new Health());
  hooks.add({ name: 'reserved-namespaces', failure: 'x', run: async () => undefined });
  assert.throws(() => hooks.addUnchecked({ name: 'reserved-namespaces', failure: 'x', run: async () => undefined }), /registered twice/);
});

test('closers run last-added first, each awaited and once, past a failing one', async () => {
  const closers = new Closers();
  const order: string[] = [];
  closers.add(async () => { await Promise.resolve(); order.push('store'); });
  closers.add(() => { throw new Error('informers would not stop'); });
  closers.add(async () => { await new Promise((r) => setImmediate(r)); order.push('listener'); });
  assert.equal(closers.closing, false);
  const failures = await closers.closeAll();
  assert.equal(closers.closing, true);
  assert.deepEqual(order, ['listener', 'store']);
  assert.deepEqual(failures.map((e) => (e as Error).message), ['informers would not stop']);
  assert.deepEqual(await closers.closeAll(), []);
  assert.deepEqual(order, ['listener', 'store']);
});
