// Leader election and identity leases against an in-process registry
// (memory backend, watch caches, in-process client). Every wait polls a
// condition with a deadline; no test asserts how long something took.

import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinKinds } from '../../../src/api/catalog.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { CacheSet } from '../../../src/storage/cache/index.js';
import { Registry } from '../../../src/registry/registry.js';
import { InProcessClient } from '../../../src/apiserver/inprocess.js';
import type { ApiClient, ApiObject } from '../../../src/client/types.js';
import { LeaderElector, leasesType } from '../../../src/controllers/leaderelection.js';
import { IdentityLease, identityLeaseName } from '../../../src/controllers/identitylease.js';
import { rfc3339MicroNow } from '../../../src/machinery/time.js';
import { eventually } from '../../support/eventually.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function newClient(): InProcessClient {
  const backend = new MemoryBackend();
  const caches = new CacheSet(backend, {});
  const registry = new Registry(builtinKinds, backend, undefined, caches);
  cleanups.push(async () => {
    await caches.stopAll();
    await backend.close();
  });
  return new InProcessClient(registry, 'election-test');
}

const timing = { leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 };
const where = { namespace: 'plat-system', name: 'test-lock' };

function elector(client: ApiClient, identity: string, log: string[]): LeaderElector {
  const e = new LeaderElector(client, {
    ...where, ...timing, identity,
    onStartedLeading: () => log.push(`${identity} started`),
    onStoppedLeading: () => log.push(`${identity} stopped`),
  });
  cleanups.push(() => e.stop());
  return e;
}

async function lease(client: ApiClient): Promise<ApiObject | undefined> {
  return client.get(leasesType(client), where.namespace, where.name);
}

test('two candidates: one leads; when it stops, the other takes over at once', async () => {
  const client = newClient();
  const log: string[] = [];
  const a = elector(client, 'a', log);
  const b = elector(client, 'b', log);
  a.start();
  await eventually('a to lead', () => a.isLeader);
  b.start();
  // b keeps trying for several lease durations' worth of rounds, and never leads while a renews.
  await eventually('a renewal', async () => Date.parse((await lease(client))?.spec?.renewTime) > Date.now() - 200);
  for (let i = 0; i < 3; i++) {
    const before = (await lease(client))!.spec.renewTime;
    await eventually('another renewal', async () => (await lease(client))!.spec.renewTime !== before);
    assert.equal(b.isLeader, false);
  }
  await a.stop();
  await eventually('b to lead', () => b.isLeader);
  const held = (await lease(client))!;
  assert.equal(held.spec.holderIdentity, 'b');
  assert.equal(held.spec.leaseDurationSeconds, 1);
  assert.equal(held.spec.leaseTransitions, 1, 'taking the released lease is a transition, as upstream counts it');
  assert.deepEqual(log, ['a started', 'a stopped', 'b started']);
});

test('a lease another holder stops renewing is taken once its duration has passed, counting the transition', async () => {
  const client = newClient();
  const leases = leasesType(client);
  const now = rfc3339MicroNow();
  await client.create(leases, where.namespace, {
    apiVersion: `${leases.group}/${leases.version}`, kind: 'Lease', metadata: { name: where.name, namespace: where.namespace },
    spec: { holderIdentity: 'gone', leaseDurationSeconds: 1, acquireTime: now, renewTime: now, leaseTransitions: 4 },
  });
  const log: string[] = [];
  const c = elector(client, 'c', log);
  c.start();
  await eventually('c to take the abandoned lease', () => c.isLeader);
  const held = (await lease(client))!;
  assert.equal(held.spec.holderIdentity, 'c');
  assert.equal(held.spec.leaseTransitions, 5);
  assert.notEqual(held.spec.acquireTime, now);
});

test('a leader that cannot renew stops leading after the renew deadline, and leads again once it can', async () => {
  const inner = newClient();
  let failing = false;
  // The same client, except that lease updates fail while `failing` is set (an unreachable store).
  const client: ApiClient = Object.create(inner, {
    update: { value: (...args: Parameters<ApiClient['update']>) => (failing ? Promise.reject(new Error('store unavailable')) : inner.update(...args)) },
  });
  const log: string[] = [];
  const d = elector(client, 'd', log);
  d.start();
  await eventually('d to lead', () => d.isLeader);
  failing = true;
  await eventually('d to stop leading', () => !d.isLeader);
  failing = false;
  await eventually('d to lead again', () => d.isLeader);
  assert.deepEqual(log, ['d started', 'd stopped', 'd started']);
});

test('an identity lease is published and renewed; expired ones of other servers are collected', async () => {
  const client = newClient();
  const leases = leasesType(client);
  const old = rfc3339MicroNow(new Date(Date.now() - 7200_000));
  await client.create(leases, 'plat-system', {
    apiVersion: `${leases.group}/${leases.version}`, kind: 'Lease',
    metadata: { name: 'apiserver-dead', namespace: 'plat-system', labels: { 'apiserver.plat.io/identity': 'plat-apiserver' } },
    spec: { holderIdentity: 'apiserver-dead_x', leaseDurationSeconds: 3600, renewTime: old },
  });
  const identity = new IdentityLease(client, { instance: '127.0.0.1:1234', renewIntervalMs: 50, gcIntervalMs: 50 });
  cleanups.push(() => identity.stop());
  await identity.start();
  assert.equal(identity.leaseName, identityLeaseName('127.0.0.1:1234'));
  await eventually('the identity lease', async () => (await client.get(leases, 'plat-system', identity.leaseName)) !== undefined);
  const first = (await client.get(leases, 'plat-system', identity.leaseName))!;
  assert.equal(first.spec.holderIdentity, identity.identity);
  assert.equal(first.metadata!.labels['apiserver.plat.io/identity'], 'plat-apiserver');
  await eventually('a renewal', async () => (await client.get(leases, 'plat-system', identity.leaseName))!.spec.renewTime !== first.spec.renewTime);
  await eventually('the expired lease to go', async () => (await client.get(leases, 'plat-system', 'apiserver-dead')) === undefined);
  assert.notEqual(identityLeaseName('127.0.0.1:1234'), identityLeaseName('127.0.0.1:1235'), 'servers on one host differ');
});
