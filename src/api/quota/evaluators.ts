// What quota counts, per resource: upstream's quota evaluators (pods,
// services, persistent volume claims, and a count of objects for every other
// resource), shared by the ResourceQuota admission plugin (which charges a
// write) and the resource quota controller (which recounts a namespace).
// Pure functions of the objects: no I/O here.

import type { KubeObject } from '../kind.js';
import { qosClassOf } from '../core/v1/pod.js';
import { product, upstreamCompat, vocabulary } from '../../machinery/vocabulary.js';
import { isQualifiedName } from '../../machinery/validation.js';
import { add, mask, quantityOf, resourceList, zeroQuantity, type ResourceList } from './resources.js';

type Obj = Record<string, any>;

/** One requirement of a quota's scopes (`spec.scopes` read as `Exists`, and `spec.scopeSelector`). */
export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

export interface Evaluator {
  readonly group: string;
  readonly resource: string;
  /** Whether a write of this kind (never a sub-resource's) may change what quota counts. */
  handles(operation: string): boolean;
  /** The names among `names` this evaluator counts. */
  matchingResources(names: readonly string[]): string[];
  /** Whether `obj` falls in the scope of `requirement`. */
  matchesScope(requirement: ScopeRequirement, obj: KubeObject): boolean;
  /** What the object uses. */
  usage(obj: KubeObject, now: number): ResourceList;
  /** Upstream's message part when the object lacks what the quota's names require of it (pods: cpu and memory). */
  constraints(required: readonly string[], obj: KubeObject): string | undefined;
}

/** The quota resource name of an object count: `count/pods`, `count/widgets.example.com`. */
export function objectCountName(group: string, resource: string): string {
  return group ? `count/${resource}.${group}` : `count/${resource}`;
}

/** `<class>.storageclass.<storage group>/`: quota of claims by storage class, under our storage group. */
export const storageClassInfix = `.storageclass.${vocabulary.storageGroup}/`;

/** The requirements a quota's scopes and scope selector make. */
export function scopeRequirements(quota: KubeObject): ScopeRequirement[] {
  const out: ScopeRequirement[] = [];
  for (const scope of items(quota.spec?.scopes) as unknown[]) if (typeof scope === 'string') out.push({ scopeName: scope, operator: 'Exists' });
  for (const req of items(quota.spec?.scopeSelector?.matchExpressions)) {
    if (req && typeof req.scopeName === 'string') out.push({ scopeName: req.scopeName, operator: String(req.operator), values: Array.isArray(req.values) ? req.values.map(String) : [] });
  }
  return out;
}

/** The scopes among `requirements` the object falls in. */
export function matchingScopes(evaluator: Evaluator, obj: KubeObject, requirements: readonly ScopeRequirement[]): ScopeRequirement[] {
  return requirements.filter((r) => evaluator.matchesScope(r, obj));
}

/** Whether a quota whose caps are `hard` counts `obj`: it caps something the evaluator counts, and the object is in every scope. */
export function quotaMatches(evaluator: Evaluator, hard: ResourceList, requirements: readonly ScopeRequirement[], obj: KubeObject): boolean {
  if (evaluator.matchingResources([...hard.keys()]).length === 0) return false;
  return requirements.every((r) => evaluator.matchesScope(r, obj));
}

const noScope = () => false;

/** A list field as a list (anything else: none), whatever a stored object holds. */
const items = (v: unknown): Obj[] => (Array.isArray(v) ? v : []);

// ---- object counts ----------------------------------------------------------

class ObjectCountEvaluator implements Evaluator {
  private readonly names: string[];
  constructor(readonly group: string, readonly resource: string, alias?: string) {
    this.names = [objectCountName(group, resource), ...(alias ? [alias] : [])];
  }
  handles(operation: string): boolean { return operation === 'CREATE'; }
  matchingResources(names: readonly string[]): string[] { return names.filter((n) => this.names.includes(n)); }
  matchesScope = noScope;
  usage(): ResourceList { return new Map(this.names.map((n) => [n, quantityOf(1)])); }
  constraints(): undefined { return undefined; }
}

// ---- services ---------------------------------------------------------------

const serviceResources = [objectCountName('', 'services'), 'services', 'services.nodeports', 'services.loadbalancers'];

class ServiceEvaluator implements Evaluator {
  readonly group = '';
  readonly resource = 'services';
  handles(operation: string): boolean { return operation === 'CREATE' || operation === 'UPDATE'; }
  matchingResources(names: readonly string[]): string[] { return names.filter((n) => serviceResources.includes(n)); }
  matchesScope = noScope;
  usage(svc: KubeObject): ResourceList {
    const ports: Obj[] = Array.isArray(svc.spec?.ports) ? svc.spec.ports : [];
    const out: ResourceList = new Map([
      [objectCountName('', 'services'), quantityOf(1)], ['services', quantityOf(1)],
      ['services.loadbalancers', zeroQuantity()], ['services.nodeports', zeroQuantity()],
    ]);
    if (svc.spec?.type === 'NodePort') out.set('services.nodeports', quantityOf(ports.length));
    if (svc.spec?.type === 'LoadBalancer') {
      // Without node ports allocated for the balancer, only the ports that name one count.
      const counted = svc.spec?.allocateLoadBalancerNodePorts === false ? ports.filter((p) => p?.nodePort).length : ports.length;
      out.set('services.nodeports', quantityOf(counted));
      out.set('services.loadbalancers', quantityOf(1));
    }
    return out;
  }
  constraints(): undefined { return undefined; }
}

// ---- persistent volume claims ----------------------------------------------

const pvcResources = ['persistentvolumeclaims', 'requests.storage'];
const pvcCount = objectCountName('', 'persistentvolumeclaims');
/** The beta annotation that named a claim's class before `storageClassName`, still read first as upstream does. */
const betaStorageClassAnnotation = `volume.beta.${product.domain}/storage-class`;

function claimClass(pvc: KubeObject): string {
  const annotated = pvc.metadata?.annotations?.[betaStorageClassAnnotation];
  if (typeof annotated === 'string') return annotated;
  return typeof pvc.spec?.storageClassName === 'string' ? pvc.spec.storageClassName : '';
}

class ClaimEvaluator implements Evaluator {
  readonly group = '';
  readonly resource = 'persistentvolumeclaims';
  handles(operation: string): boolean { return operation === 'CREATE' || operation === 'UPDATE'; }
  matchingResources(names: readonly string[]): string[] {
    return names.filter((n) => n === pvcCount || pvcResources.includes(n) || pvcResources.some((r) => n.endsWith(storageClassInfix + r)));
  }
  matchesScope = noScope;
  usage(pvc: KubeObject): ResourceList {
    const out: ResourceList = new Map([['persistentvolumeclaims', quantityOf(1)], [pvcCount, quantityOf(1)]]);
    const cls = claimClass(pvc);
    if (cls) out.set(`${cls}${storageClassInfix}persistentvolumeclaims`, quantityOf(1));
    const requested = resourceList(pvc.spec?.resources?.requests).get('storage');
    if (requested) {
      // Whole bytes, as upstream rounds storage requests up; a larger allocation (a resize under way) counts.
      let storage = roundUpToUnits(requested);
      const allocated = resourceList(pvc.status?.allocatedResources).get('storage');
      if (allocated && allocated.nanos > storage.nanos) storage = roundUpToUnits(allocated);
      out.set('requests.storage', storage);
      if (cls) out.set(`${cls}${storageClassInfix}requests.storage`, storage);
    }
    return out;
  }
  constraints(): undefined { return undefined; }
}

function roundUpToUnits(q: { nanos: bigint; format: any }) {
  const unit = 1_000_000_000n;
  const rest = q.nanos % unit;
  return rest === 0n ? q : { nanos: q.nanos - rest + (q.nanos > 0n ? unit : 0n), format: q.format };
}

// ---- pods -------------------------------------------------------------------

const podCount = objectCountName('', 'pods');
const podResources = [podCount, 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage',
  'limits.cpu', 'limits.memory', 'limits.ephemeral-storage', 'pods'];
/** Quota names a pod must request explicitly when a quota caps them (upstream calls this coupling a mistake it keeps). */
const requiredWhenCapped = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);
/** Resource names in these domains are the platform's own, never extended resources (upstream's `kubernetes.io/` too). */
const nativeDomains = [product.domain, ...upstreamCompat.protectedGroupDomains].map((d) => `${d}/`);

function isNativeResource(name: string): boolean {
  return !name.includes('/') || nativeDomains.some((d) => name.includes(d));
}

/** An extended resource a pod may request (`example.com/gpu`), counted as `requests.example.com/gpu`. */
function isExtendedResource(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

/** The largest value per name of a and b. */
function max(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [name, q] of b) {
    const cur = out.get(name);
    if (!cur || q.nanos > cur.nanos) out.set(name, q);
  }
  return out;
}

/**
 * The pod's requests or limits as upstream adds them up: its containers,
 * sidecars (init containers that keep running) on top, the largest of what
 * each init container needs while it runs, and the pod's overhead.
 */
function podTotals(pod: KubeObject, which: 'requests' | 'limits'): ResourceList {
  const of = (c: Obj) => resourceList(c?.resources?.[which]);
  let total: ResourceList = new Map();
  for (const c of items(pod.spec?.containers)) total = add(total, of(c));
  let sidecars: ResourceList = new Map();
  let initPeak: ResourceList = new Map();
  for (const c of items(pod.spec?.initContainers)) {
    let running: ResourceList;
    if (c?.restartPolicy === 'Always') {
      total = add(total, of(c));
      sidecars = add(sidecars, of(c));
      running = sidecars;
    } else {
      running = add(of(c), sidecars);
    }
    initPeak = max(initPeak, running);
  }
  total = max(total, initPeak);
  const overhead = resourceList(pod.spec?.overhead);
  if (which === 'requests') return add(total, overhead);
  // Overhead adds to a limit only where the pod has one.
  return add(total, mask(overhead, total.keys()));
}

function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', quantityOf(1)]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const request = requests.get(r);
    if (request) {
      out.set(r, request);
      out.set(`requests.${r}`, request);
    }
    const limit = limits.get(r);
    if (limit) out.set(`limits.${r}`, limit);
  }
  for (const [name, request] of requests) {
    if (name.startsWith('hugepages-')) {
      out.set(name, request);
      out.set(`requests.${name}`, request);
    }
    if (isExtendedResource(name)) out.set(`requests.${name}`, request);
  }
  return out;
}

/** Whether a pod still counts for compute quota: not finished, and not stuck being deleted past its grace period. */
function podCountsForCompute(pod: KubeObject, now: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const deletion = pod.metadata?.deletionTimestamp;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  if (deletion && typeof grace === 'number' && now > Date.parse(deletion) + grace * 1000) return false;
  return true;
}

function usesCrossNamespaceAffinity(pod: KubeObject): boolean {
  const crosses = (t: Obj | undefined) => !!t && ((Array.isArray(t.namespaces) && t.namespaces.length > 0) || (t.namespaceSelector !== undefined && t.namespaceSelector !== null));
  for (const affinity of [pod.spec?.affinity?.podAffinity, pod.spec?.affinity?.podAntiAffinity] as (Obj | undefined)[]) {
    if (!affinity) continue;
    if (items(affinity.requiredDuringSchedulingIgnoredDuringExecution).some(crosses)) return true;
    if (items(affinity.preferredDuringSchedulingIgnoredDuringExecution).some((w) => crosses(w?.podAffinityTerm))) return true;
  }
  return false;
}

/** A scope selector's requirement on a single value (the pod's priority class), as a label requirement on one label. */
function selectorMatches(req: ScopeRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In': return value !== undefined && values.includes(value);
    case 'NotIn': return value === undefined || !values.includes(value);
    case 'Exists': return value !== undefined;
    case 'DoesNotExist': return value === undefined;
    default: return false;
  }
}

class PodEvaluator implements Evaluator {
  readonly group = '';
  readonly resource = 'pods';
  handles(operation: string): boolean { return operation === 'CREATE'; }
  matchingResources(names: readonly string[]): string[] {
    return names.filter((n) => podResources.includes(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-')
      || (!isNativeResource(n) && n.startsWith('requests.')));
  }
  matchesScope(req: ScopeRequirement, pod: KubeObject): boolean {
    const terminating = typeof pod.spec?.activeDeadlineSeconds === 'number' && pod.spec.activeDeadlineSeconds >= 0;
    switch (req.scopeName) {
      case 'Terminating': return terminating;
      case 'NotTerminating': return !terminating;
      case 'BestEffort': return qosClassOf(pod.spec) === 'BestEffort';
      case 'NotBestEffort': return qosClassOf(pod.spec) !== 'BestEffort';
      case 'PriorityClass': {
        const cls = typeof pod.spec?.priorityClassName === 'string' && pod.spec.priorityClassName !== '' ? pod.spec.priorityClassName : undefined;
        return req.operator === 'Exists' ? cls !== undefined : selectorMatches(req, cls);
      }
      case 'CrossNamespacePodAffinity': return usesCrossNamespaceAffinity(pod);
      default: return false;
    }
  }
  usage(pod: KubeObject, now: number): ResourceList {
    // The object count tracks every stored pod; the rest only pods that still run or may.
    const out: ResourceList = new Map([[podCount, quantityOf(1)]]);
    if (!podCountsForCompute(pod, now)) return out;
    return add(out, computeUsage(podTotals(pod, 'requests'), podTotals(pod, 'limits')));
  }
  constraints(required: readonly string[], pod: KubeObject): string | undefined {
    const wanted = required.filter((r) => requiredWhenCapped.has(r));
    if (wanted.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    for (const c of [...items(pod.spec?.containers), ...items(pod.spec?.initContainers)]) {
      const has = computeUsage(resourceList(c?.resources?.requests), resourceList(c?.resources?.limits));
      for (const r of wanted) {
        if (has.has(r)) continue;
        if (!missing.has(r)) missing.set(r, new Set());
        missing.get(r)!.add(String(c?.name ?? ''));
      }
    }
    if (missing.size === 0) return undefined;
    return `must specify ${[...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`).join('; ')}`;
  }
}

// ---- the registry -----------------------------------------------------------

/** Core resources counted under a bare name as well (`configmaps` besides `count/configmaps`), as upstream keeps them. */
const legacyCounts: Record<string, string> = {
  configmaps: 'configmaps', resourcequotas: 'resourcequotas', replicationcontrollers: 'replicationcontrollers', secrets: 'secrets',
};

/** Resources quota never counts: nothing stored, or not for a namespace's users to spend (upstream's ignored resources). */
const ignored = new Set([
  '/bindings', '/componentstatuses', '/events',
  `${vocabulary.eventsGroup}/events`,
  `${vocabulary.authenticationGroup}/tokenreviews`, `${vocabulary.authenticationGroup}/selfsubjectreviews`,
  `${vocabulary.authorizationGroup}/subjectaccessreviews`, `${vocabulary.authorizationGroup}/selfsubjectaccessreviews`,
  `${vocabulary.authorizationGroup}/localsubjectaccessreviews`, `${vocabulary.authorizationGroup}/selfsubjectrulesreviews`,
  `${vocabulary.apiextensionsGroup}/customresourcedefinitions`,
]);

const special: readonly Evaluator[] = [new PodEvaluator(), new ServiceEvaluator(), new ClaimEvaluator()];
const countsByResource = new Map<string, Evaluator>();

/** The evaluator of a resource; undefined for one quota ignores. Every other resource is counted as objects. */
export function evaluatorFor(group: string, resource: string): Evaluator | undefined {
  const id = `${group}/${resource}`;
  if (ignored.has(id)) return undefined;
  const own = special.find((e) => e.group === group && e.resource === resource);
  if (own) return own;
  let counter = countsByResource.get(id);
  if (!counter) {
    counter = new ObjectCountEvaluator(group, resource, group === '' && Object.hasOwn(legacyCounts, resource) ? legacyCounts[resource] : undefined);
    // Bounded: one per resource a quota or a request named (resources come and go with custom resources, but few).
    if (countsByResource.size > 4096) countsByResource.clear();
    countsByResource.set(id, counter);
  }
  return counter;
}

/**
 * The resources whose objects a quota's caps count, as (group, resource):
 * the three with their own evaluator, the legacy counts, and every
 * `count/<resource>.<group>`.
 */
export function countedResources(hardNames: readonly string[]): { group: string; resource: string }[] {
  const out = new Map<string, { group: string; resource: string }>();
  const note = (group: string, resource: string) => out.set(`${group}/${resource}`, { group, resource });
  for (const e of special) if (e.matchingResources(hardNames).length) note(e.group, e.resource);
  for (const name of hardNames) {
    if (Object.hasOwn(legacyCounts, name)) note('', name);
    if (!name.startsWith('count/')) continue;
    const rest = name.slice('count/'.length);
    const dot = rest.indexOf('.');
    const [resource, group] = dot < 0 ? [rest, ''] : [rest.slice(0, dot), rest.slice(dot + 1)];
    if (resource && !ignored.has(`${group}/${resource}`)) note(group, resource);
  }
  return [...out.values()];
}

/**
 * What the objects of one resource in a namespace use against a quota: the
 * caps this resource's evaluator counts, zero when nothing is counted, over
 * the objects in every one of the quota's scopes (upstream's CalculateUsage).
 */
export function usageOf(evaluator: Evaluator, hardNames: readonly string[], requirements: readonly ScopeRequirement[], objects: Iterable<KubeObject>, now: number): ResourceList {
  const names = evaluator.matchingResources(hardNames);
  let used: ResourceList = new Map(names.map((n) => [n, zeroQuantity()]));
  if (names.length === 0) return used;
  for (const obj of objects) {
    if (!requirements.every((r) => evaluator.matchesScope(r, obj))) continue;
    used = add(used, evaluator.usage(obj, now));
  }
  return mask(used, names);
}
