// Controllers on an injected clock: the token cleaner leaves a bootstrap
// token alone until the clock passes its expiration, then deletes it, without
// the test waiting an hour. The cleaner's delayed requeue and its judging of
// expiry both read the kit's clock; so do the TTL-after-finished controller's.

import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinKinds } from '../../../src/api/catalog.js';
import { MemoryBackend } from '../../../src/storage/memory/store.js';
import { CacheSet } from '../../../src/storage/cache/index.js';
import { Registry } from '../../../src/registry/registry.js';
import { InProcessClient } from '../../../src/apiserver/inprocess.js';
import { InformerFactory } from '../../../src/client/informer.js';
import { resources, resourceType } from '../../../src/client/resources.js';
import { TokenCleaner } from '../../../src/controllers/tokencleaner.js';
import { TtlAfterFinishedController } from '../../../src/controllers/ttlafterfinished.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';
import { bootstrapSecretName } from '../../../src/machinery/bootstraptoken.js';
import { FakeClock } from '../../support/clock.js';
import { eventually } from '../../support/eventually.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

test('the token cleaner deletes a bootstrap token when the injected clock passes its expiration', async () => {
  const backend = new MemoryBackend();
  const caches = new CacheSet(backend, {});
  const registry = new Registry(builtinKinds, backend, undefined, caches);
  const client = new InProcessClient(registry, 'clock-test');
  cleanups.push(async () => { await caches.stopAll(); await backend.close(); });
  const clock = new FakeClock(Date.parse('2030-01-01T00:00:00Z'));
  const informers = new InformerFactory(client, clock);
  const cleaner = new TokenCleaner(client, () => undefined, { informers, clock });
  cleanups.push(async () => { await cleaner.stop(); informers.stopAll(); });

  const secrets = resourceType(client, resources.secrets);
  await client.create(resourceType(client, resources.namespaces), undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: vocabulary.systemNamespace } });
  const name = bootstrapSecretName('abcdef');
  await client.create(secrets, vocabulary.systemNamespace, {
    apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: vocabulary.bootstrapTokenSecretType,
    data: { 'token-id': b64('abcdef'), 'token-secret': b64('0123456789abcdef'), expiration: b64('2030-01-01T01:00:00Z') },
  });
  await cleaner.start();
  const exists = async () => (await client.get(secrets, vocabulary.systemNamespace, name)) !== undefined;
  await eventually('the cleaner looks at the token and sets its requeue for the expiry', async () => clock.pending().includes(3_600_000));
  assert.equal(await exists(), true);

  clock.advance(3_599_999);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(await exists(), true, 'not a millisecond early');
  clock.advance(1);
  await eventually('the expired token is deleted', async () => !(await exists()));
});

test('the TTL-after-finished controller deletes a Job in the foreground once the injected clock passes its finish plus TTL', async () => {
  const backend = new MemoryBackend();
  const caches = new CacheSet(backend, {});
  const registry = new Registry(builtinKinds, backend, undefined, caches);
  const client = new InProcessClient(registry, 'clock-test');
  cleanups.push(async () => { await caches.stopAll(); await backend.close(); });
  const finished = Date.parse('2030-01-01T00:00:00Z');
  const clock = new FakeClock(finished + 10_000);
  const informers = new InformerFactory(client, clock);
  const controller = new TtlAfterFinishedController(client, () => undefined, { informers, clock });
  cleanups.push(async () => { await controller.stop(); informers.stopAll(); });

  const jobs = resourceType(client, resources.jobs);
  await client.create(resourceType(client, resources.namespaces), undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ttl' } });
  const job = await client.create(jobs, 'ttl', {
    apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'done' },
    spec: { ttlSecondsAfterFinished: 60, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
  });
  const at = new Date(finished).toISOString().replace('.000Z', 'Z');
  // A finished job's status as upstream's status validation takes it: start and completion times with the Complete condition.
  const complete = { startTime: at, completionTime: at, conditions: [{ type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: at }, { type: 'Complete', status: 'True', lastTransitionTime: at }] };
  await client.update(jobs, 'ttl', { ...job, status: complete }, 'status');
  await controller.start();
  await eventually('the job is requeued for when it expires', async () => clock.pending().includes(50_000));
  clock.advance(49_999);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal((await client.get(jobs, 'ttl', 'done'))?.metadata?.deletionTimestamp, undefined, 'not a millisecond early');
  clock.advance(1);
  // No garbage collector runs here: the foreground deletion leaves the job marked and held by its finalizer.
  await eventually('the expired job is being deleted in the foreground', async () => {
    const meta = (await client.get(jobs, 'ttl', 'done'))?.metadata;
    return Boolean(meta?.deletionTimestamp && meta.finalizers?.includes('foregroundDeletion'));
  });
});
