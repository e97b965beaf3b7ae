// The pure parts of the default-on pod plugins, with cases from upstream's
// own tables: how tolerations merge (RuntimeClass), LimitRanger's
// constraint messages, a pod's totals with init containers and sidecars,
// and the defaults with their annotation.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mergeTolerations, tolerationCovers } from '../../../src/admission/plugins/tolerations.js';
import { applyDefaults, claimLimitErrors, LimitRanger, podLimitErrors } from '../../../src/admission/plugins/limitranger.js';
import type { Lister } from '../../../src/admission/listers.js';
import type { KubeObject } from '../../../src/api/kind.js';
import { pods } from '../../../src/api/core/v1/index.js';
import { admissionRequest, rejection } from '../../support/admission.js';

const exists = (key: string, effect = 'NoSchedule', extra: Record<string, unknown> = {}) => ({ key, operator: 'Exists', effect, ...extra });

describe('mergeTolerations', () => {
  it('keeps disjoint tolerations of both lists, in order', () => {
    assert.deepEqual(mergeTolerations([exists('a')], [exists('b')]), [exists('a'), exists('b')]);
  });
  it('keeps the first of two equal tolerations', () => {
    assert.deepEqual(mergeTolerations([exists('a')], [exists('a')]), [exists('a')]);
  });
  it('drops a toleration a wider one covers, whichever list holds it', () => {
    assert.deepEqual(mergeTolerations([exists('a')], [{ operator: 'Exists' }]), [{ operator: 'Exists' }]);
    assert.deepEqual(mergeTolerations([{ key: 'a', operator: 'Exists' }], [exists('a', 'NoExecute')]), [{ key: 'a', operator: 'Exists' }]);
    assert.deepEqual(mergeTolerations([{ key: 'a', operator: 'Equal', value: 'x', effect: 'NoSchedule' }], [exists('a')]), [exists('a')]);
  });
  it('a longer NoExecute time covers a shorter one, not the other way round', () => {
    const long = exists('a', 'NoExecute', { tolerationSeconds: 200 });
    const short = exists('a', 'NoExecute', { tolerationSeconds: 100 });
    assert.ok(tolerationCovers(long, short));
    assert.ok(!tolerationCovers(short, long));
    assert.deepEqual(mergeTolerations([short], [long]), [long]);
  });
  it('an Equal toleration covers only the same value', () => {
    assert.ok(!tolerationCovers({ key: 'a', operator: 'Equal', value: 'x' }, { key: 'a', operator: 'Equal', value: 'y' }));
    assert.ok(!tolerationCovers({ key: 'a', operator: 'Equal', value: 'x' }, exists('a')));
  });
});

const container = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, extra: Record<string, unknown> = {}) =>
  ({ name, image: 'i', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) }, ...extra });
const limitRange = (...limits: Record<string, unknown>[]) => ({ spec: { limits } });

describe('LimitRanger constraints', () => {
  it('min and max per container, in upstream\'s words', () => {
    const lr = limitRange({ type: 'Container', min: { cpu: '100m' }, max: { memory: '1Gi' } });
    assert.deepEqual(podLimitErrors(lr, { spec: { containers: [container('c')] } }), [
      'minimum cpu usage per Container is 100m.  No request is specified',
      'maximum memory usage per Container is 1Gi.  No limit is specified',
    ]);
    assert.deepEqual(podLimitErrors(lr, { spec: { containers: [container('c', { cpu: '50m', memory: '2Gi' }, { cpu: '80m', memory: '1536Mi' })] } }), [
      'minimum cpu usage per Container is 100m, but request is 50m',
      'maximum memory usage per Container is 1Gi, but limit is 1536Mi',
    ]);
    assert.deepEqual(podLimitErrors(lr, { spec: { containers: [container('c', { cpu: '100m', memory: '1Gi' }, { cpu: '1', memory: '1Gi' })] } }), []);
  });

  it('the limit to request ratio, compared in thousandths', () => {
    const lr = limitRange({ type: 'Container', maxLimitRequestRatio: { cpu: '1500m' } });
    assert.deepEqual(podLimitErrors(lr, { spec: { containers: [container('c', { cpu: '100m' }, { cpu: '150m' })] } }), []);
    assert.deepEqual(podLimitErrors(lr, { spec: { containers: [container('c', { cpu: '100m' }, { cpu: '151m' })] } }),
      ['cpu max limit to request ratio per Container is 1500m, but provided ratio is 1.510000']);
    assert.deepEqual(podLimitErrors(lr, { spec: { containers: [container('c', undefined, { cpu: '1' })] } }),
      ['cpu max limit to request ratio per Container is 1500m, but no request is specified or request is 0']);
  });

  it('a Pod item bounds the sum of containers and sidecars, the largest init container and the overhead', () => {
    const lr = limitRange({ type: 'Pod', max: { cpu: '1' } });
    const spec = (init: unknown[], overhead?: Record<string, string>) => ({
      spec: { containers: [container('a', { cpu: '300m' }, { cpu: '300m' }), container('b', { cpu: '300m' }, { cpu: '300m' })], initContainers: init, ...(overhead ? { overhead } : {}) },
    });
    assert.deepEqual(podLimitErrors(lr, spec([container('i', { cpu: '800m' }, { cpu: '800m' })])), []);
    assert.deepEqual(podLimitErrors(lr, spec([container('i', { cpu: '1200m' }, { cpu: '1200m' })])), ['maximum cpu usage per Pod is 1, but limit is 1200m']);
    assert.deepEqual(podLimitErrors(lr, spec([container('side', { cpu: '500m' }, { cpu: '500m' }, { restartPolicy: 'Always' })])), ['maximum cpu usage per Pod is 1, but limit is 1100m']);
    assert.deepEqual(podLimitErrors(lr, spec([], { cpu: '500m' })), ['maximum cpu usage per Pod is 1, but limit is 1100m']);
  });

  it('a claim: min on its request, max on its request only', () => {
    const lr = limitRange({ type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } });
    const claim = (storage?: string) => ({ spec: { resources: storage ? { requests: { storage } } : {} } });
    assert.deepEqual(claimLimitErrors(lr, claim('20Gi')), ['maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi']);
    assert.deepEqual(claimLimitErrors(lr, claim()), [
      'minimum storage usage per PersistentVolumeClaim is 1Gi.  No request is specified',
      'maximum storage usage per PersistentVolumeClaim is 10Gi.  No request is specified',
    ]);
    assert.deepEqual(claimLimitErrors(lr, claim('5Gi')), []);
  });
});

describe('LimitRanger defaults', () => {
  it('fills what each container and init container lacks, noting it sorted, requests before limits', () => {
    const lr = limitRange({ type: 'Container', default: { memory: '256Mi', cpu: '1' }, defaultRequest: { memory: '128Mi', cpu: '500m' } });
    const pod = { spec: { containers: [container('c', { cpu: '100m' })], initContainers: [container('i')] } };
    const notes: string[] = [];
    applyDefaults(lr, pod, notes);
    assert.deepEqual(pod.spec.containers[0]!.resources, { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '256Mi' } });
    assert.deepEqual(pod.spec.initContainers[0]!.resources, { requests: { cpu: '500m', memory: '128Mi' }, limits: { cpu: '1', memory: '256Mi' } });
    assert.deepEqual(notes, ['memory request for container c', 'cpu, memory limit for container c', 'cpu, memory request for init container i', 'cpu, memory limit for init container i']);
  });
});

describe('LimitRanger live lookup', () => {
  // A lister holding `held`, and a live list that counts its calls and answers `live` (or fails).
  const setup = (held: KubeObject[], live: () => Promise<KubeObject[]>) => {
    const lister: Lister = {
      list: () => held, inNamespace: () => held, get: () => undefined, byIndex: () => [],
      onChange: () => undefined, hasSynced: () => true,
    };
    let clock = 1_000;
    const calls: string[] = [];
    const plugin = new LimitRanger(lister, (ns) => { calls.push(ns); return live(); }, () => clock);
    return { plugin, calls, advance: (ms: number) => { clock += ms; } };
  };
  const range: KubeObject = { metadata: { name: 'lr', namespace: 'ns' }, spec: { limits: [{ type: 'Container', default: { cpu: '1' }, defaultRequest: { cpu: '500m' }, max: { cpu: '2' } }] } };
  const podCreate = (name: string, limits?: Record<string, string>) =>
    admissionRequest('CREATE', pods, name, { namespace: 'ns', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns' }, spec: { containers: [container('c', undefined, limits)] } } });

  it('a namespace whose LimitRange the lister does not hold yet is listed live, and its defaults applied', async () => {
    const { plugin, calls } = setup([], async () => [range]);
    const request = podCreate('a');
    await plugin.mutate(request);
    assert.deepEqual(request.object!.spec.containers[0].resources, { requests: { cpu: '500m' }, limits: { cpu: '1' } });
    assert.deepEqual(calls, ['ns']);
    const e = await rejection(() => plugin.validate(podCreate('b', { cpu: '3' })));
    assert.equal(e.code, 403);
    assert.match(e.message, /maximum cpu usage per Container is 2, but limit is 3/);
  });

  it('simultaneous misses share one live list; its answer is trusted for 30 s, then listed again', async () => {
    const { plugin, calls, advance } = setup([], async () => [range]);
    await Promise.all([plugin.mutate(podCreate('a')), plugin.mutate(podCreate('b')), plugin.validate(podCreate('c', { cpu: '1' }))]);
    assert.equal(calls.length, 1);
    advance(30_000);
    await plugin.mutate(podCreate('d'));
    assert.equal(calls.length, 1, 'still trusted at 30 s');
    advance(1);
    await plugin.mutate(podCreate('e'));
    assert.equal(calls.length, 2);
  });

  it('a failed live list refuses the request (403) and is not remembered', async () => {
    let fail = true;
    const { plugin, calls } = setup([], async () => { if (fail) throw new Error('store unavailable'); return []; });
    const e = await rejection(() => plugin.mutate(podCreate('a')));
    assert.equal(e.code, 403);
    assert.match(e.message, /store unavailable/);
    fail = false;
    await plugin.mutate(podCreate('b'));
    assert.equal(calls.length, 2);
  });

  it('a lister that holds LimitRanges is never bypassed', async () => {
    const { plugin, calls } = setup([range], async () => { throw new Error('not called'); });
    const request = podCreate('a');
    assert.equal(plugin.mutate(request), undefined, 'answered without waiting');
    assert.deepEqual(request.object!.spec.containers[0].resources.requests, { cpu: '500m' });
    assert.deepEqual(calls, []);
  });
});
