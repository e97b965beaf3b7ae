// The ResourceQuota plugin over a quota store that does compare-and-swap as
// the real one does: a later step's refusal and a failed write give the
// charge back through the chain; a charge that loses its race to another
// writer is checked again on the fresh quota; dry runs are never charged;
// the limitedResources configuration needs a covering quota.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AdmissionChain } from '../../../src/admission/chain.js';
import { ResourceQuota, type QuotaAccess } from '../../../src/admission/plugins/resourcequota/index.js';
import { limitedResourcesOf } from '../../../src/admission/plugins/resourcequota/config.js';
import { AdmissionConfigError } from '../../../src/admission/plugin-names.js';
import type { Lister } from '../../../src/admission/listers.js';
import type { AdmissionPlugin } from '../../../src/admission/types.js';
import { pods } from '../../../src/api/core/v1/index.js';
import type { KubeObject } from '../../../src/api/kind.js';
import { errors } from '../../../src/machinery/errors.js';
import { admissionRequest, rejection } from '../../support/admission.js';

/** Quotas of namespace `ns` with resourceVersions, written only if the version is still the stored one. */
class QuotaStore implements QuotaAccess {
  private revision = 1;
  readonly objects = new Map<string, KubeObject>();
  /** Writes that lose to another writer before they land (that writer adds `pods` to the quota's use). */
  interleave = 0;

  put(name: string, hard: Record<string, string>, used: Record<string, string>): void {
    this.objects.set(name, { metadata: { name, namespace: 'ns', resourceVersion: String(++this.revision) }, spec: { hard }, status: { hard, used } });
  }
  used(name: string): Record<string, string> {
    return this.objects.get(name)!.status!.used;
  }
  async list(): Promise<KubeObject[]> { return [...this.objects.values()]; }
  async get(_ns: string, name: string): Promise<KubeObject | undefined> { return this.objects.get(name); }
  async updateStatus(quota: KubeObject): Promise<KubeObject> {
    const name = quota.metadata!.name!;
    if (this.interleave > 0) {
      this.interleave--;
      const cur = this.objects.get(name)!;
      this.put(name, cur.status!.hard, { ...cur.status!.used, pods: String(Number(cur.status!.used.pods) + 1) });
    }
    const cur = this.objects.get(name)!;
    if (cur.metadata!.resourceVersion !== quota.metadata!.resourceVersion) throw errors.staleObject({ group: '', resource: 'resourcequotas' }, name);
    const stored = { ...quota, metadata: { ...quota.metadata, resourceVersion: String(++this.revision) } };
    this.objects.set(name, stored);
    return stored;
  }
  /** A lister that sees what the store held when it was asked for (an informer a moment behind is no worse). */
  lister(): Lister {
    const all = () => [...this.objects.values()];
    return {
      list: all, inNamespace: all, get: (_ns, name) => this.objects.get(name), byIndex: () => [],
      onChange: () => undefined, hasSynced: () => true,
    };
  }
}

const pod = (name: string, resources?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' },
  spec: { containers: [{ name: 'c', image: 'nginx', ...(resources ? { resources } : {}) }] },
});
const create = (name: string, extra: { dryRun?: boolean; resources?: Record<string, unknown> } = {}) =>
  admissionRequest('CREATE', pods, name, { namespace: 'ns', object: pod(name, extra.resources), dryRun: extra.dryRun });

const denyAll: AdmissionPlugin = { name: 'Later', validate: () => { throw errors.forbidden({ group: '', resource: 'pods' }, 'x', 'no'); } };

test('a later plugin\'s refusal gives the charge back; so does abandon after a failed write', async () => {
  const store = new QuotaStore();
  store.put('q', { pods: '2' }, { pods: '0' });
  const quota = new ResourceQuota(store.lister(), store);
  await rejection(new AdmissionChain([quota, denyAll]).validate(create('a')));
  assert.deepEqual(store.used('q'), { pods: '0' });

  const chain = new AdmissionChain([quota]);
  const written = create('b');
  await chain.validate(written);
  assert.deepEqual(store.used('q'), { pods: '1' });
  await chain.abandon(written);
  assert.deepEqual(store.used('q'), { pods: '0' });
  await chain.abandon(written);
  assert.deepEqual(store.used('q'), { pods: '0' }, 'given back once');
});

test('a dry run is refused as the real request would be, and never charged', async () => {
  const store = new QuotaStore();
  store.put('q', { pods: '1' }, { pods: '0' });
  const chain = new AdmissionChain([new ResourceQuota(store.lister(), store)]);
  await chain.validate(create('a', { dryRun: true }));
  assert.deepEqual(store.used('q'), { pods: '0' });
  store.put('q', { pods: '1' }, { pods: '1' });
  const e = await rejection(chain.validate(create('b', { dryRun: true })));
  assert.equal(e.message, 'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1');
});

test('a charge that loses its race is checked again on the fresh quota', async () => {
  const store = new QuotaStore();
  store.put('q', { pods: '3' }, { pods: '1' });
  const chain = new AdmissionChain([new ResourceQuota(store.lister(), store)]);
  store.interleave = 1;
  await chain.validate(create('a'));
  assert.deepEqual(store.used('q'), { pods: '3' }, 'the other writer\'s unit and this one');
  store.put('q', { pods: '3' }, { pods: '2' });
  store.interleave = 1;
  const e = await rejection(chain.validate(create('b')));
  assert.equal(e.code, 403);
  assert.equal(e.message, 'pods "b" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3');
  assert.deepEqual(store.used('q'), { pods: '3' });
});

test('concurrent requests of one namespace are charged in batches, never past the cap', async () => {
  const store = new QuotaStore();
  store.put('q', { pods: '5', 'requests.cpu': '2' }, { pods: '0', 'requests.cpu': '0' });
  const chain = new AdmissionChain([new ResourceQuota(store.lister(), store)]);
  const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => chain.validate(create(`p${i}`, { resources: { requests: { cpu: '500m' } } }))));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 4);
  assert.deepEqual(store.used('q'), { pods: '4', 'requests.cpu': '2' });
});

test('limitedResources: consuming a limited resource needs a quota that caps it', async () => {
  const store = new QuotaStore();
  const limited = limitedResourcesOf({
    apiVersion: 'apiserver.config.plat.io/v1', kind: 'ResourceQuotaConfiguration',
    limitedResources: [
      { resource: 'pods', matchContains: ['requests.cpu'] },
      { resource: 'pods', matchScopes: [{ scopeName: 'PriorityClass', operator: 'In', values: ['critical'] }] },
    ],
  });
  const chain = new AdmissionChain([new ResourceQuota(store.lister(), store, limited)]);
  await chain.validate(create('plain'));
  const e = await rejection(chain.validate(create('cpu', { resources: { requests: { cpu: '1' } } })));
  assert.equal(e.message, 'pods "cpu" is forbidden: insufficient quota to consume: requests.cpu');
  const critical = create('critical');
  critical.object!.spec.priorityClassName = 'critical';
  const scoped = await rejection(chain.validate(critical));
  assert.equal(scoped.message, 'pods "critical" is forbidden: insufficient quota to match these scopes: [{PriorityClass In [critical]}]');
  store.put('q', { 'requests.cpu': '4' }, { 'requests.cpu': '0' });
  await chain.validate(create('cpu', { resources: { requests: { cpu: '1' } } }));
  assert.deepEqual(store.used('q'), { 'requests.cpu': '1' });
});

test('the configuration is checked when the plugin is made', () => {
  assert.throws(() => limitedResourcesOf({ apiVersion: 'apiserver.config.plat.io/v1', kind: 'Other' }), AdmissionConfigError);
  assert.throws(() => limitedResourcesOf({ apiVersion: 'apiserver.config.plat.io/v1', kind: 'ResourceQuotaConfiguration', limitedResources: [{ matchContains: ['x'] }] }),
    /limitedResources\[0\]\.resource: Required value/);
});
