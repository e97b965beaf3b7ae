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
import { LiveLookup } from '../livelookup.js';
import { hasOwn, ownValue, setOwn } from '../../machinery/ownkeys.js';

type Obj = Record<string, any>;
type Resources = Record<string, string>;

const nanosPerMilli = 10n ** 6n;
const nanosPerUnit = 10n ** 9n;
/** The largest value whose milli-units fit in an int64 (upstream's resource.MaxMilliValue). */
const maxMilliValue = (2n ** 63n - 1n) / 1000n;

/** An amount's value rounded up as upstream's MilliValue() and Value(), and whether its milli-units fit an int64. */
interface Rounded {
  milli: bigint;
  units: bigint;
  fitsMilli: boolean;
}

/** An amount a request, a limit or a pod's total holds: its value, and its text for messages (a total is written only when named). */
class Amount {
  private roundedValue?: Rounded;

  constructor(readonly nanos: bigint, private readonly written: string | Quantity) {}

  get text(): string {
    return typeof this.written === 'string' ? this.written : formatQuantity(this.written);
  }

  /** Worked out once per amount: an amount of a text is shared by every request that writes that text (amountOf). */
  get rounded(): Rounded {
    if (this.roundedValue) return this.roundedValue;
    const units = ceilDiv(this.nanos, nanosPerUnit);
    return this.roundedValue = { milli: ceilDiv(this.nanos, nanosPerMilli), units, fitsMilli: units <= maxMilliValue };
  }
}

const zero = new Amount(0n, '0');

/** The amount of `key` in a resource list (undefined when absent; text that is not a quantity counts as 0, as upstream's zero Quantity). */
function amountIn(list: Obj | undefined, key: string): Amount | undefined {
  const text = ownValue(list, key);
  return text === undefined ? undefined : amountOf(String(text));
}

/** Amounts by their text: the same few texts ("250m", "512Mi") come in request after request. Bounded, as quantity's own cache. */
const amounts = new Map<string, Amount>();
const amountsLimit = 4096;

function amountOf(text: string): Amount {
  if (text.length > 32) return new Amount(parsedOrUndefined(text)?.nanos ?? 0n, text);
  let amount = amounts.get(text);
  if (amount === undefined) {
    if (amounts.size >= amountsLimit) amounts.clear();
    amounts.set(text, amount = new Amount(parsedOrUndefined(text)?.nanos ?? 0n, text));
  }
  return amount;
}

function parsedOrUndefined(text: string): Quantity | undefined {
  try {
    return parseQuantity(text);
  } catch {
    return undefined;
  }
}

/** Ceiling division, as upstream's Value() and MilliValue() round up. */
function ceilDiv(n: bigint, d: bigint): bigint {
  return n >= 0n ? (n + d - 1n) / d : -((-n) / d);
}

/** request, limit and enforced as upstream compares them: in milli-units when all fit, else in units. */
function compared(request: Amount | undefined, limit: Amount | undefined, enforced: Amount): [bigint, bigint, bigint] {
  const r = (request ?? zero).rounded;
  const l = (limit ?? zero).rounded;
  const e = enforced.rounded;
  if (r.fitsMilli && l.fitsMilli && e.fitsMilli) return [r.milli, l.milli, e.milli];
  return [r.units, l.units, e.units];
}

/** What a request or limit list holds, read by resource name. */
type AmountOf = (resource: string) => Amount | undefined;

function minConstraint(type: string, resource: string, enforced: Amount, requestOf: AmountOf, limitOf: AmountOf): string | undefined {
  const req = requestOf(resource);
  const lim = limitOf(resource);
  const [r, l, e] = compared(req, lim, enforced);
  if (req === undefined) return `minimum ${resource} usage per ${type} is ${enforced.text}.  No request is specified`;
  if (r < e) return `minimum ${resource} usage per ${type} is ${enforced.text}, but request is ${req.text}`;
  if (lim !== undefined && l < e) return `minimum ${resource} usage per ${type} is ${enforced.text}, but limit is ${lim.text}`;
  return undefined;
}

function maxConstraint(type: string, resource: string, enforced: Amount, requestOf: AmountOf, limitOf: AmountOf): string | undefined {
  const req = requestOf(resource);
  const lim = limitOf(resource);
  const [r, l, e] = compared(req, lim, enforced);
  if (lim === undefined) return `maximum ${resource} usage per ${type} is ${enforced.text}.  No limit is specified`;
  if (l > e) return `maximum ${resource} usage per ${type} is ${enforced.text}, but limit is ${lim.text}`;
  if (req !== undefined && r > e) return `maximum ${resource} usage per ${type} is ${enforced.text}, but request is ${req.text}`;
  return undefined;
}

/** A claim's max bounds what it asks for (its limits are not the user's). */
function maxRequestConstraint(type: string, resource: string, enforced: Amount, requestOf: AmountOf): string | undefined {
  const req = requestOf(resource);
  const [r, , e] = compared(req, undefined, enforced);
  if (req === undefined) return `maximum ${resource} usage per ${type} is ${enforced.text}.  No request is specified`;
  if (r > e) return `maximum ${resource} usage per ${type} is ${enforced.text}, but request is ${req.text}`;
  return undefined;
}

function ratioConstraint(type: string, resource: string, enforced: Amount, requestOf: AmountOf, limitOf: AmountOf): string | undefined {
  const req = requestOf(resource);
  const lim = limitOf(resource);
  const [r, l] = compared(req, lim, enforced);
  if (req === undefined || r === 0n) return `${resource} max limit to request ratio per ${type} is ${enforced.text}, but no request is specified or request is 0`;
  if (lim === undefined || l === 0n) return `${resource} max limit to request ratio per ${type} is ${enforced.text}, but no limit is specified or limit is 0`;
  const observed = Number(l) / Number(r);
  const { units: enforcedUnits, milli: enforcedMilli, fitsMilli } = enforced.rounded;
  // Upstream compares in thousandths when the ratio's value allows.
  const exceeds = fitsMilli ? observed * 1000 > Number(enforcedMilli) : observed > Number(enforcedUnits);
  return exceeds ? `${resource} max limit to request ratio per ${type} is ${enforced.text}, but provided ratio is ${observed.toFixed(6)}` : undefined;
}

type Totals = Map<string, Quantity>;

/** Adds in the quantities of the `wanted` resources; a sum keeps the format of its first term, as upstream's Add. */
function addInto(sum: Totals, list: Obj | Totals | undefined, wanted: ReadonlySet<string>): void {
  if (list instanceof Map) {
    for (const [k, q] of list) addOne(sum, k, q);
    return;
  }
  if (!list || typeof list !== 'object') return;
  for (const k of wanted) {
    const text = ownValue(list, k);
    const q = text === undefined ? undefined : parsedOrUndefined(String(text));
    if (q) addOne(sum, k, q);
  }
}

function addOne(sum: Totals, k: string, q: Quantity): void {
  const had = sum.get(k);
  sum.set(k, had ? { nanos: had.nanos + q.nanos, format: had.format } : q);
}

function maxInto(top: Totals, list: Totals): void {
  for (const [k, q] of list) if (!top.has(k) || top.get(k)!.nanos < q.nanos) top.set(k, q);
}

/** A pod's total of requests or limits of the `wanted` resources as the scheduler counts it: containers and sidecars summed, each init container's peak, the overhead. */
function podTotal(pod: KubeObject, which: 'requests' | 'limits', wanted: ReadonlySet<string>): Totals {
  const spec = (pod.spec ?? {}) as Obj;
  const sum: Totals = new Map();
  for (const c of (spec.containers ?? []) as Obj[]) addInto(sum, c?.resources?.[which], wanted);
  const sidecars: Totals = new Map();
  const initPeak: Totals = new Map();
  for (const c of (spec.initContainers ?? []) as Obj[]) {
    const own: Totals = new Map();
    addInto(own, c?.resources?.[which], wanted);
    if (c?.restartPolicy === 'Always') {
      // A sidecar runs beside everything after it.
      addInto(sum, own, wanted);
      addInto(sidecars, own, wanted);
      maxInto(initPeak, sidecars);
    } else {
      addInto(own, sidecars, wanted);
      maxInto(initPeak, own);
    }
  }
  maxInto(sum, initPeak);
  addInto(sum, spec.overhead, wanted);
  return sum;
}

/** A total read as an amount: written in upstream's canonical form only when a message names it. */
function totalsReader(totals: Totals): AmountOf {
  return (resource) => {
    const q = totals.get(resource);
    return q ? new Amount(q.nanos, q) : undefined;
  };
}

function listReader(list: Obj | undefined): AmountOf {
  return (resource) => amountIn(list, resource);
}

/** Error texts, flattened and without repeats, as upstream's aggregate error reads. */
function aggregate(messages: readonly string[]): string {
  const unique = [...new Set(messages)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

/** One bound of an item: the resource and the amount it enforces. */
interface Bound {
  resource: string;
  enforced: Amount;
}

/** One item of a LimitRange with its bounds parsed. */
interface CompiledItem {
  type: string;
  min: Bound[];
  max: Bound[];
  ratio: Bound[];
}

/** What one LimitRange asks, read once per version of it (the informer hands a new object on each change). */
interface Compiled {
  items: CompiledItem[];
  /** The resources the Pod items bound: the only ones a pod's totals need. */
  podResources: ReadonlySet<string>;
  /** The Container items' defaults, merged in item order. */
  defaultRequests: Resources;
  defaultLimits: Resources;
  hasDefaults: boolean;
}

const compiledRanges = new WeakMap<KubeObject, Compiled>();

function bounds(list: unknown): Bound[] {
  if (!list || typeof list !== 'object') return [];
  return Object.entries(list as Obj).map(([resource, v]) => ({ resource, enforced: amountOf(String(v)) }));
}

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
  const items: CompiledItem[] = list.map((item) => ({ type: String(item.type), min: bounds(item.min), max: bounds(item.max), ratio: bounds(item.maxLimitRequestRatio) }));
  c = {
    items, podResources: new Set(items.filter((i) => i.type === 'Pod').flatMap((i) => [...i.min, ...i.max, ...i.ratio].map((b) => b.resource))),
    defaultRequests: sorted(defaultRequests), defaultLimits: sorted(defaultLimits),
    hasDefaults: Object.keys(defaultRequests).length + Object.keys(defaultLimits).length > 0,
  };
  compiledRanges.set(lr, c);
  return c;
}

/** Every min, max and ratio bound of `item` against what requestOf and limitOf read. */
function checkBounds(item: CompiledItem, requestOf: AmountOf, limitOf: AmountOf, errs: string[]): void {
  for (const b of item.min) push(errs, minConstraint(item.type, b.resource, b.enforced, requestOf, limitOf));
  for (const b of item.max) push(errs, maxConstraint(item.type, b.resource, b.enforced, requestOf, limitOf));
  for (const b of item.ratio) push(errs, ratioConstraint(item.type, b.resource, b.enforced, requestOf, limitOf));
}

function push(errs: string[], message: string | undefined): void {
  if (message !== undefined) errs.push(message);
}

export function podLimitErrors(lr: KubeObject, pod: KubeObject): string[] {
  const errs: string[] = [];
  // The pod's totals, summed once whatever number of Pod items asks for them.
  let totals: { requests: AmountOf; limits: AmountOf } | undefined;
  const { items, podResources } = compiled(lr);
  for (const item of items) {
    if (item.type === 'Container') {
      for (const list of ['containers', 'initContainers']) {
        for (const c of (pod.spec?.[list] ?? []) as Obj[]) {
          if (c && typeof c === 'object') checkBounds(item, listReader(c.resources?.requests), listReader(c.resources?.limits), errs);
        }
      }
    }
    if (item.type === 'Pod') {
      totals ??= { requests: totalsReader(podTotal(pod, 'requests', podResources)), limits: totalsReader(podTotal(pod, 'limits', podResources)) };
      checkBounds(item, totals.requests, totals.limits, errs);
    }
  }
  return errs;
}

export function claimLimitErrors(lr: KubeObject, claim: KubeObject): string[] {
  const errs: string[] = [];
  const requestOf = listReader(claim.spec?.resources?.requests);
  const noLimits: AmountOf = () => undefined;
  for (const item of compiled(lr).items) {
    if (item.type !== 'PersistentVolumeClaim') continue;
    for (const b of item.min) push(errs, minConstraint(item.type, b.resource, b.enforced, requestOf, noLimits));
    for (const b of item.max) push(errs, maxRequestConstraint(item.type, b.resource, b.enforced, requestOf));
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
    if (current && hasOwn(current, name)) continue;
    (resources[which] ??= {})[name] = defaults[name];
    set.push(name);
  }
  return set;
}

/** How long a live list of a namespace without LimitRanges in the lister is trusted, and how many are kept (upstream's liveTTL and LRU size). */
const liveLookupTtlMs = 30_000;
const liveLookupSize = 10_000;

export class LimitRanger implements AdmissionPlugin {
  readonly name = 'LimitRanger';
  private readonly live?: LiveLookup;

  /** `liveList`: the namespace's LimitRanges read live, for when the lister holds none (one created a moment ago). */
  constructor(private readonly limitRanges: Lister, liveList?: (namespace: string) => Promise<KubeObject[]>, now?: () => number) {
    if (liveList) this.live = new LiveLookup({ list: liveList, ttlMs: liveLookupTtlMs, size: liveLookupSize, now });
  }

  /** Whether upstream's LimitRanger looks at this request at all. */
  private handles(r: AdmissionRequest): 'pod' | 'claim' | undefined {
    if (r.subresource || r.kind.group !== '' || !r.object || !r.namespace) return undefined;
    if (r.kind.kind === 'Pod') return r.operation === 'CREATE' ? 'pod' : undefined;
    if (r.kind.kind === 'PersistentVolumeClaim') return r.operation === 'CREATE' || r.operation === 'UPDATE' ? 'claim' : undefined;
    return undefined;
  }

  /**
   * The namespace's LimitRanges: the lister's, or when it holds none a live
   * list (answered at once while a recent one is trusted). A failed live
   * list refuses the request, as upstream (403).
   */
  private ranges(r: AdmissionRequest): readonly KubeObject[] | Promise<readonly KubeObject[]> {
    const namespace = r.namespace!;
    const held = this.limitRanges.inNamespace(namespace);
    if (held.length || !this.live) return held;
    return this.live.fresh(namespace) ?? this.live.items(namespace).catch((e: unknown) => {
      throw forbiddenRequest(r, (e as Error)?.message ?? String(e));
    });
  }

  mutate(r: AdmissionRequest): void | Promise<void> {
    if (this.handles(r) !== 'pod') return;
    const ranges = this.ranges(r);
    if (ranges instanceof Promise) return ranges.then((found) => this.defaultPod(r, found));
    this.defaultPod(r, ranges);
  }

  validate(r: AdmissionRequest): void | Promise<void> {
    const what = this.handles(r);
    if (!what) return;
    const ranges = this.ranges(r);
    if (ranges instanceof Promise) return ranges.then((found) => this.check(r, what, found));
    this.check(r, what, ranges);
  }

  private defaultPod(r: AdmissionRequest, ranges: readonly KubeObject[]): void {
    const pod = r.object!;
    const notes: string[] = [];
    for (const lr of ranges) applyDefaults(lr, pod, notes);
    if (!notes.length) return;
    // Into the pod's own annotations, as upstream's map; a copy of them would cost a new object per pod.
    const meta = (pod.metadata ??= {});
    const annotations = (meta.annotations && typeof meta.annotations === 'object') ? meta.annotations as Obj : (meta.annotations = {});
    setOwn(annotations, vocabulary.limitRangerAnnotation, `LimitRanger plugin set: ${notes.join('; ')}`);
  }

  private check(r: AdmissionRequest, what: 'pod' | 'claim', ranges: readonly KubeObject[]): void {
    const errs: string[] = [];
    for (const lr of ranges) errs.push(...(what === 'pod' ? podLimitErrors(lr, r.object!) : claimLimitErrors(lr, r.object!)));
    if (errs.length) throw forbiddenRequest(r, aggregate(errs));
  }
}
