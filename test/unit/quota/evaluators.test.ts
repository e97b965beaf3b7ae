// What quota counts per object, as upstream's evaluators: a pod's requests
// and limits (sidecars, init containers, overhead), its scopes, services'
// node ports and balancers, claims per storage class, object counts, and the
// arithmetic of resource lists.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countedResources, evaluatorFor, objectCountName, quotaMatches, scopeRequirements, usageOf } from '../../../src/api/quota/evaluators.js';
import { add, lessThanOrEqual, prettyPrint, resourceList, subtractNonNegative, toJson } from '../../../src/api/quota/resources.js';
import type { KubeObject } from '../../../src/api/kind.js';

const now = Date.parse('2026-01-01T00:00:00Z');
const podEvaluator = evaluatorFor('', 'pods')!;
const usage = (obj: KubeObject, group = '', resource = 'pods') => toJson(evaluatorFor(group, resource)!.usage(obj, now));

const container = (name: string, requests?: Record<string, string>, limits?: Record<string, string>, extra: Record<string, unknown> = {}) =>
  ({ name, image: 'i', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) }, ...extra });

test('a pod: containers add up, init containers count at their peak, sidecars on top, overhead on requests and on the limits it has', () => {
  const pod: KubeObject = {
    metadata: { name: 'p' },
    spec: {
      containers: [container('a', { cpu: '100m', memory: '64Mi' }, { cpu: '200m' }), container('b', { cpu: '100m' })],
      initContainers: [
        container('sidecar', { cpu: '50m' }, undefined, { restartPolicy: 'Always' }),
        container('big-init', { cpu: '1', 'example.com/gpu': '1', 'hugepages-2Mi': '4Mi' }),
      ],
      overhead: { cpu: '10m', memory: '1Mi' },
    },
  };
  assert.deepEqual(usage(pod), {
    'count/pods': '1', pods: '1',
    // max(100m + 100m + 50m sidecar, 1 + 50m sidecar while the init container runs) + 10m overhead
    cpu: '1060m', 'requests.cpu': '1060m',
    memory: '65Mi', 'requests.memory': '65Mi',
    'limits.cpu': '210m',
    'hugepages-2Mi': '4Mi', 'requests.hugepages-2Mi': '4Mi',
    'requests.example.com/gpu': '1',
  });
});

test('a finished pod, or one past its deletion grace period, counts only as a stored object', () => {
  const done = { metadata: { name: 'p' }, spec: { containers: [container('a', { cpu: '1' })] }, status: { phase: 'Succeeded' } };
  assert.deepEqual(usage(done), { 'count/pods': '1' });
  const stuck = { metadata: { name: 'p', deletionTimestamp: '2025-12-31T23:59:00Z', deletionGracePeriodSeconds: 30 }, spec: { containers: [] } };
  assert.deepEqual(usage(stuck), { 'count/pods': '1' });
  const leaving = { metadata: { name: 'p', deletionTimestamp: '2025-12-31T23:59:50Z', deletionGracePeriodSeconds: 30 }, spec: { containers: [] } };
  assert.deepEqual(usage(leaving), { 'count/pods': '1', pods: '1' });
});

test('pod scopes: terminating, best effort, priority class selectors, cross-namespace affinity', () => {
  const matches = (spec: Record<string, unknown>, quotaSpec: Record<string, unknown>) =>
    quotaMatches(podEvaluator, resourceList({ pods: '1' }), scopeRequirements({ spec: quotaSpec }), { metadata: {}, spec: { containers: [container('c')], ...spec } });
  assert.equal(matches({ activeDeadlineSeconds: 10 }, { scopes: ['Terminating'] }), true);
  assert.equal(matches({}, { scopes: ['Terminating'] }), false);
  assert.equal(matches({}, { scopes: ['NotTerminating', 'BestEffort'] }), true);
  assert.equal(matches({ containers: [container('c', { memory: '1Mi' })] }, { scopes: ['BestEffort'] }), false);
  assert.equal(matches({ containers: [container('c', { memory: '1Mi' })] }, { scopes: ['NotBestEffort'] }), true);
  const selector = (operator: string, values?: string[]) => ({ scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator, ...(values ? { values } : {}) }] } });
  assert.equal(matches({ priorityClassName: 'high' }, selector('In', ['high', 'mid'])), true);
  assert.equal(matches({ priorityClassName: 'low' }, selector('In', ['high'])), false);
  assert.equal(matches({}, selector('NotIn', ['high'])), true);
  assert.equal(matches({ priorityClassName: 'low' }, selector('Exists')), true);
  assert.equal(matches({}, selector('DoesNotExist')), true);
  const affinity = { affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: 'k', namespaceSelector: {} } }] } } };
  assert.equal(matches(affinity, { scopes: ['CrossNamespacePodAffinity'] }), true);
  assert.equal(matches({}, { scopes: ['CrossNamespacePodAffinity'] }), false);
  // Resources with no scopes (services) never match a scoped quota, as upstream.
  assert.equal(quotaMatches(evaluatorFor('', 'services')!, resourceList({ services: '1' }), [{ scopeName: 'BestEffort', operator: 'Exists' }], { metadata: {} }), false);
});

test('the constraint message names what each container lacks, sorted', () => {
  const pod = { metadata: {}, spec: { containers: [container('b'), container('a', { cpu: '1' })], initContainers: [container('init', undefined, { memory: '1Mi' })] } };
  assert.equal(podEvaluator.constraints(['requests.cpu', 'limits.memory', 'pods', 'requests.storage'], pod),
    'must specify limits.memory for: a,b; requests.cpu for: b,init');
  assert.equal(podEvaluator.constraints(['pods', 'limits.cpu'], { metadata: {}, spec: { containers: [container('a', undefined, { cpu: '1' })] } }), undefined);
});

test('services: node ports by type, balancers, and ports only where allocation is off', () => {
  const svc = (spec: Record<string, unknown>) => usage({ metadata: {}, spec: { ports: [{ port: 1 }, { port: 2, nodePort: 30001 }], ...spec } }, '', 'services');
  assert.deepEqual(svc({}), { 'count/services': '1', services: '1', 'services.loadbalancers': '0', 'services.nodeports': '0' });
  assert.deepEqual(svc({ type: 'NodePort' }), { 'count/services': '1', services: '1', 'services.loadbalancers': '0', 'services.nodeports': '2' });
  assert.deepEqual(svc({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: false }),
    { 'count/services': '1', services: '1', 'services.loadbalancers': '1', 'services.nodeports': '1' });
});

test('claims: whole bytes, the larger of request and allocation, and per storage class', () => {
  const claim = { metadata: {}, spec: { storageClassName: 'gold', resources: { requests: { storage: '1500m' } } }, status: { allocatedResources: { storage: '1Gi' } } };
  assert.deepEqual(usage(claim, '', 'persistentvolumeclaims'), {
    'count/persistentvolumeclaims': '1', persistentvolumeclaims: '1', 'requests.storage': '1Gi',
    'gold.storageclass.storage.plat.io/persistentvolumeclaims': '1', 'gold.storageclass.storage.plat.io/requests.storage': '1Gi',
  });
  assert.deepEqual(usage({ metadata: {}, spec: { resources: { requests: { storage: '1500m' } } } }, '', 'persistentvolumeclaims'),
    { 'count/persistentvolumeclaims': '1', persistentvolumeclaims: '1', 'requests.storage': '2' });
});

test('object counts: legacy names for four core resources, count/<resource>.<group> for all, ignored resources none', () => {
  assert.deepEqual(usage({ metadata: {} }, '', 'secrets'), { 'count/secrets': '1', secrets: '1' });
  assert.deepEqual(usage({ metadata: {} }, 'apps', 'deployments'), { 'count/deployments.apps': '1' });
  assert.equal(objectCountName('stable.example.com', 'widgets'), 'count/widgets.stable.example.com');
  assert.equal(evaluatorFor('', 'events'), undefined);
  assert.equal(evaluatorFor('', 'configmaps')!.handles('UPDATE'), false);
  assert.deepEqual(countedResources(['pods', 'configmaps', 'count/widgets.stable.example.com', 'count/events', 'requests.storage']).map((r) => `${r.group}/${r.resource}`).sort(),
    ['/configmaps', '/persistentvolumeclaims', '/pods', 'stable.example.com/widgets']);
});

test('a namespace\'s use: only the objects in every scope, zero when none, only the capped names', () => {
  const pods: KubeObject[] = [
    { metadata: {}, spec: { containers: [container('a', { cpu: '1' })] } },
    { metadata: {}, spec: { containers: [container('a')], activeDeadlineSeconds: 5 } },
  ];
  assert.deepEqual(toJson(usageOf(podEvaluator, ['pods', 'requests.cpu', 'services'], [], pods, now)), { pods: '2', 'requests.cpu': '1' });
  assert.deepEqual(toJson(usageOf(podEvaluator, ['pods'], [{ scopeName: 'Terminating', operator: 'Exists' }], pods, now)), { pods: '1' });
  assert.deepEqual(toJson(usageOf(podEvaluator, ['pods', 'limits.memory'], [], [], now)), { 'limits.memory': '0', pods: '0' });
});

test('resource lists: sums keep the first non-zero format, subtraction stops at zero, comparisons name what went over', () => {
  const a = resourceList({ memory: '0', cpu: '500m' });
  const b = resourceList({ memory: '1Gi', cpu: '1' });
  assert.deepEqual(toJson(add(a, b)), { cpu: '1500m', memory: '1Gi' });
  assert.deepEqual(toJson(subtractNonNegative(a, b)), { cpu: '0', memory: '0' });
  assert.deepEqual(lessThanOrEqual(b, resourceList({ cpu: '1', memory: '512Mi', pods: '1' })), { allowed: false, exceeded: ['memory'] });
  assert.equal(prettyPrint(resourceList({ pods: '1', 'count/pods': '2' })), 'count/pods=2,pods=1');
  assert.deepEqual(toJson(resourceList({ ['__proto__']: '1', bad: 'x' })), { ['__proto__']: '1' });
});
