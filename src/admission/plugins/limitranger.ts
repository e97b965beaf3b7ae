// LimitRanger: the LimitRanges of the namespace (every one of them, in the
// informer's order) default and bound what pods and claims ask for.
// Mutating, on a new pod: each container and init container without a
// request or limit of a resource gets the `Container` item's defaultRequest
// and default; the pod is annotated with what was set ("LimitRanger plugin
// set: cpu request for container c"). Validating: min, max and
// maxLimitRequestRatio of `Container` items per container, of `Pod` items on
// the pod's sum (with its overhead), and min and max of
// `PersistentVolumeClaim` items on a claim's storage request. Every breach
// of every LimitRange is reported together in one 403 with upstream's
// words. Pods are judged on create only (their containers' resources do not
// change by update), claims on create and update.

import type { KubeObject } from '../../api/kind.js';
import { formatQuantity, parseQuantity, type Quantity } from '../../machinery/quantity.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { Lister } from '../listers.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';
import { podContainers } from './podutil.js';

type Obj = Record<string, any>;
type Resources = Record<string, string>;

const nanosPerMilli = 10n ** 6n;
const nanosPerUnit = 10n ** 9n;
/** The largest value whose milli-units fit in an int64 (upstream's resource.MaxMilliValue). */
const maxMilliValue = (2n ** 63n - 1n) / 1000n;

function nanos(text: unknown): bigint {
  try {
    return parseQuantity(String(text)).nanos;
  } catch {
    return 0n;
  }
}

/** Ceiling division, as upstream's Value() and MilliValue() round up. */
function ceilDiv(n: bigint, d: bigint): bigint {
  return n >= 0n ? (n + d - 1n) / d : -((-n) / d);
}

/** request, limit and enforced as upstream compares them: in milli-units when all fit, else in units. */
function compared(request: unknown, limit: unknown, enforced: unknown): [bigint, bigint, bigint] {
  const values = [request, limit, enforced].map((q) => (q === undefined ? 0n : nanos(q)));
  const units = values.map((v) => ceilDiv(v, nanosPerUnit));
  if (units.every((u) => u <= maxMilliValue)) return values.map((v) => ceilDiv(v, nanosPerMilli)) as [bigint, bigint, bigint];
  return units as [bigint, bigint, bigint];
}

function own(list: Obj | undefined, key: string): string | undefined {
  return list && Object.prototype.hasOwnProperty.call(list, key) ? String(list[key]) : undefined;
}

function minConstraint(type: string, resource: string, enforced: string, requests: Obj | undefined, limits: Obj | undefined): string | undefined {
  const req = own(requests, resource);
  const lim = own(limits, resource);
  const [r, l, e] = compared(req, lim, enforced);
  if (req === undefined) return `minimum ${resource} usage per ${type} is ${enforced}.  No request is specified`;
  if (r < e) return `minimum ${resource} usage per ${type} is ${enforced}, but request is ${req}`;
  if (lim !== undefined && l < e) return `minimum ${resource} usage per ${type} is ${enforced}, but limit is ${lim}`;
  return undefined;
}

function maxConstraint(type: string, resource: string, enforced: string, requests: Obj | undefined, limits: Obj | undefined): string | undefined {
  const req = own(requests, resource);
  const lim = own(limits, resource);
  const [r, l, e] = compared(req, lim, enforced);
  if (lim === undefined) return `maximum ${resource} usage per ${type} is ${enforced}.  No limit is specified`;
  if (l > e) return `maximum ${resource} usage per ${type} is ${enforced}, but limit is ${lim}`;
  if (req !== undefined && r > e) return `maximum ${resource} usage per ${type} is ${enforced}, but request is ${req}`;
  return undefined;
}

/** A claim's max bounds what it asks for (its limits are not the user's). */
function maxRequestConstraint(type: string, resource: string, enforced: string, requests: Obj | undefined): string | undefined {
  const req = own(requests, resource);
  const [r, , e] = compared(req, undefined, enforced);
  if (req === undefined) return `maximum ${resource} usage per ${type} is ${enforced}.  No request is specified`;
  if (r > e) return `maximum ${resource} usage per ${type} is ${enforced}, but request is ${req}`;
  return undefined;
}

function ratioConstraint(type: string, resource: string, enforced: string, requests: Obj | undefined, limits: Obj | undefined): string | undefined {
  const req = own(requests, resource);
  const lim = own(limits, resource);
  const [r, l] = compared(req, lim, enforced);
  if (req === undefined || r === 0n) return `${resource} max limit to request ratio per ${type} is ${enforced}, but no request is specified or request is 0`;
  if (lim === undefined || l === 0n) return `${resource} max limit to request ratio per ${type} is ${enforced}, but no limit is specified or limit is 0`;
  const observed = Number(l) / Number(r);
  const enforcedNanos = nanos(enforced);
  const enforcedUnits = ceilDiv(enforcedNanos, nanosPerUnit);
  // Upstream compares in thousandths when the ratio's value allows.
  const exceeds = enforcedUnits <= maxMilliValue ? observed * 1000 > Number(ceilDiv(enforcedNanos, nanosPerMilli)) : observed > Number(enforcedUnits);
  return exceeds ? `${resource} max limit to request ratio per ${type} is ${enforced}, but provided ratio is ${observed.toFixed(6)}` : undefined;
}

type Totals = Map<string, Quantity>;

/** Adds quantities in; a sum keeps the format of its first term, as upstream's Add. */
function addInto(sum: Totals, list: Obj | Totals | undefined): void {
  const entries = list instanceof Map ? [...list] : Object.entries(list ?? {}).map(([k, v]) => [k, parsed(v)] as const);
  for (const [k, q] of entries) {
    if (!q) continue;
    const had = sum.get(k);
    sum.set(k, had ? { nanos: had.nanos + q.nanos, format: had.format } : { ...q });
  }
}

function parsed(text: unknown): Quantity | undefined {
  try {
    return parseQuantity(String(text));
  } catch {
    return undefined;
  }
}

function maxInto(top: Totals, list: Totals): void {
  for (const [k, q] of list) if (!top.has(k) || top.get(k)!.nanos < q.nanos) top.set(k, { ...q });
}

/** A pod's total of requests or limits as the scheduler counts it: containers and sidecars summed, each init container's peak, the overhead. */
function podTotal(pod: KubeObject, which: 'requests' | 'limits'): Resources {
  const spec = (pod.spec ?? {}) as Obj;
  const sum: Totals = new Map();
  for (const c of (spec.containers ?? []) as Obj[]) addInto(sum, c?.resources?.[which]);
  const sidecars: Totals = new Map();
  const initPeak: Totals = new Map();
  for (const c of (spec.initContainers ?? []) as Obj[]) {
    const own: Totals = new Map();
    addInto(own, c?.resources?.[which]);
    if (c?.restartPolicy === 'Always') {
      // A sidecar runs beside everything after it.
      addInto(sum, own);
      addInto(sidecars, own);
      maxInto(initPeak, sidecars);
    } else {
      addInto(own, sidecars);
      maxInto(initPeak, own);
    }
  }
  maxInto(sum, initPeak);
  addInto(sum, spec.overhead);
  const out: Resources = {};
  for (const [k, q] of sum) out[k] = formatQuantity(q);
  return out;
}

/** Error texts, flattened and without repeats, as upstream's aggregate error reads. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

/** What one LimitRange asks, read once per version of it (the informer hands a new object on each change). */
interface Compiled {
  items: Obj[];
  /** The Container items' defaults, merged in item order. */
  defaultRequests: Resources;
  defaultLimits: Resources;
  hasDefaults: boolean;
}

const compiledRanges = new WeakMap<KubeObject, Compiled>();

function compiled(lr: KubeObject): Compiled {
  let c = compiledRanges.get(lr);
  if (c) return c;
  const list: Obj[] = Array.isArray(lr.spec?.limits) ? lr.spec.limits.filter((i: unknown) => i && typeof i === 'object') : [];
  const defaultRequests: Resources = {};
  const defaultLimits: Resources = {};
  for (const item of list) {
    if (item.type !== 'Container') continue;
    for (const [k, v] of Object.entries((item.defaultRequest ?? {}) as Obj)) defaultRequests[k] = String(v);
    for (const [k, v] of Object.entries((item.default ?? {}) as Obj)) defaultLimits[k] = String(v);
  }
  // Sorted once here: the annotation names resources in sorted order.
  const sorted = (r: Resources): Resources => Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  c = { items: list, defaultRequests: sorted(defaultRequests), defaultLimits: sorted(defaultLimits), hasDefaults: Object.keys(defaultRequests).length + Object.keys(defaultLimits).length > 0 };
  compiledRanges.set(lr, c);
  return c;
}

function items(lr: KubeObject): Obj[] {
  return compiled(lr).items;
}

function checkContainer(item: Obj, container: Obj, errs: string[]): void {
  const requests = container.resources?.requests as Obj | undefined;
  const limits = container.resources?.limits as Obj | undefined;
  const type = String(item.type);
  for (const [k, v] of Object.entries((item.min ?? {}) as Obj)) push(errs, minConstraint(type, k, String(v), requests, limits));
  for (const [k, v] of Object.entries((item.max ?? {}) as Obj)) push(errs, maxConstraint(type, k, String(v), requests, limits));
  for (const [k, v] of Object.entries((item.maxLimitRequestRatio ?? {}) as Obj)) push(errs, ratioConstraint(type, k, String(v), requests, limits));
}

function push(errs: string[], message: string | undefined): void {
  if (message !== undefined) errs.push(message);
}

export function podLimitErrors(lr: KubeObject, pod: KubeObject): string[] {
  const errs: string[] = [];
  for (const item of items(lr)) {
    if (item.type === 'Container') {
      for (const list of ['containers', 'initContainers']) {
        for (const c of (pod.spec?.[list] ?? []) as Obj[]) if (c && typeof c === 'object') checkContainer(item, c, errs);
      }
    }
    if (item.type === 'Pod') {
      const requests = podTotal(pod, 'requests');
      const limits = podTotal(pod, 'limits');
      for (const [k, v] of Object.entries((item.min ?? {}) as Obj)) push(errs, minConstraint('Pod', k, String(v), requests, limits));
      for (const [k, v] of Object.entries((item.max ?? {}) as Obj)) push(errs, maxConstraint('Pod', k, String(v), requests, limits));
      for (const [k, v] of Object.entries((item.maxLimitRequestRatio ?? {}) as Obj)) push(errs, ratioConstraint('Pod', k, String(v), requests, limits));
    }
  }
  return errs;
}

export function claimLimitErrors(lr: KubeObject, claim: KubeObject): string[] {
  const errs: string[] = [];
  const requests = claim.spec?.resources?.requests as Obj | undefined;
  for (const item of items(lr)) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    for (const [k, v] of Object.entries((item.min ?? {}) as Obj)) push(errs, minConstraint('PersistentVolumeClaim', k, String(v), requests, {}));
    for (const [k, v] of Object.entries((item.max ?? {}) as Obj)) push(errs, maxRequestConstraint('PersistentVolumeClaim', k, String(v), requests));
  }
  return errs;
}

/** Gives the pod's containers the defaults of one LimitRange, noting what it set for the annotation. */
export function applyDefaults(lr: KubeObject, pod: KubeObject, notes: string[]): void {
  const { defaultRequests: requests, defaultLimits: limits, hasDefaults } = compiled(lr);
  if (!hasDefaults) return;
  for (const { list, container } of podContainers(pod)) {
    const what = list === 'containers' ? 'container' : 'init container';
    const resources = (container.resources && typeof container.resources === 'object') ? container.resources as Obj : (container.resources = {});
    const setLimits = fill(resources, 'limits', limits);
    const setRequests = fill(resources, 'requests', requests);
    if (setRequests.length) notes.push(`${setRequests.join(', ')} request for ${what} ${container.name}`);
    if (setLimits.length) notes.push(`${setLimits.join(', ')} limit for ${what} ${container.name}`);
  }
}

/** Adds the defaults (sorted by name) a list lacks; returns the names added. */
function fill(resources: Obj, which: 'requests' | 'limits', defaults: Resources): string[] {
  const set: string[] = [];
  const current = (resources[which] && typeof resources[which] === 'object') ? resources[which] as Obj : undefined;
  for (const name of Object.keys(defaults)) {
    if (current && Object.prototype.hasOwnProperty.call(current, name)) continue;
    (resources[which] ??= {})[name] = defaults[name];
    set.push(name);
  }
  return set;
}

export class LimitRanger implements AdmissionPlugin {
  readonly name = 'LimitRanger';

  constructor(private readonly limitRanges: Lister) {}

  /** Whether upstream's LimitRanger looks at this request at all. */
  private handles(r: AdmissionRequest): 'pod' | 'claim' | undefined {
    if (r.subresource || r.kind.group !== '' || !r.object || !r.namespace) return undefined;
    if (r.kind.kind === 'Pod') return r.operation === 'CREATE' ? 'pod' : undefined;
    if (r.kind.kind === 'PersistentVolumeClaim') return r.operation === 'CREATE' || r.operation === 'UPDATE' ? 'claim' : undefined;
    return undefined;
  }

  mutate(r: AdmissionRequest): void {
    if (this.handles(r) !== 'pod') return;
    const pod = r.object!;
    const notes: string[] = [];
    for (const lr of this.limitRanges.inNamespace(r.namespace!)) applyDefaults(lr, pod, notes);
    if (notes.length) (pod.metadata ??= {}).annotations = { ...(pod.metadata.annotations ?? {}), [vocabulary.limitRangerAnnotation]: `LimitRanger plugin set: ${notes.join('; ')}` };
  }

  validate(r: AdmissionRequest): void {
    const what = this.handles(r);
    if (!what) return;
    const errs: string[] = [];
    for (const lr of this.limitRanges.inNamespace(r.namespace!)) {
      errs.push(...(what === 'pod' ? podLimitErrors(lr, r.object!) : claimLimitErrors(lr, r.object!)));
    }
    if (errs.length) throw forbiddenRequest(r, aggregate(errs));
  }
}
