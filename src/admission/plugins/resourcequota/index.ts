// ResourceQuota: a create or update that would take a namespace past one of
// its quotas is refused (403, upstream's messages); one that fits is charged
// to the quotas' `status.used` before it is stored, by a compare-and-swap
// update of each quota's status, so that servers sharing a store never admit
// together more than a quota allows. As upstream's quota evaluator, the
// requests of one namespace are checked in batches, one batch at a time per
// namespace on this server: every request of a batch is checked against the
// running total of those before it, then each changed quota is written once;
// a quota another writer changed meanwhile is read again and the requests
// that charged it are checked again against it.
//
// Unlike upstream, what a request was charged is given back when a later
// step refuses it or its write fails (`release`), and when its re-check after
// a conflict refuses it; the resource quota controller's recount remains the
// backstop for what a crash in between leaves behind.

import type { KubeObject } from '../../../api/kind.js';
import { ApiError, errors } from '../../../machinery/errors.js';
import {
  evaluatorFor, matchingScopes, quotaMatches, scopeRequirements, type Evaluator, type ScopeRequirement,
} from '../../../api/quota/evaluators.js';
import {
  add, equals, lessThanOrEqual, mask, negativeNames, prettyNames, prettyPrint, removeZeros, resourceList, subtractNonNegative, toJson, type ResourceList,
} from '../../../api/quota/resources.js';
import type { AdmissionListers, Lister } from '../../listers.js';
import { resources, resourceType } from '../../../client/resources.js';
import type { AdmissionPlugin, AdmissionRequest } from '../../types.js';
import { qualifiedOf } from '../../errors.js';
import { limitedResourcesOf, type LimitedResource } from './config.js';
import { LiveLookup } from '../../livelookup.js';
import { BoundedMap } from '../../../machinery/boundedmap.js';

export type { LimitedResource } from './config.js';

/** How the plugin reads and writes quotas beyond its lister. */
export interface QuotaAccess {
  /** The namespace's quotas read live (the lister has none: maybe created a moment ago). */
  list(namespace: string): Promise<KubeObject[]>;
  /** One quota read live (a consistent read), after a conflict. */
  get(namespace: string, name: string): Promise<KubeObject | undefined>;
  /** Writes the quota's status if its resourceVersion is still the stored one; rejects with an error whose `code` is 409 otherwise. */
  updateStatus(quota: KubeObject): Promise<KubeObject>;
}

/** How often the quotas a batch charged are read again and the batch re-checked after losing a compare-and-swap (upstream: 3; servers sharing a store race more). */
const conflictRetries = 10;
/** How long a live list that found no quota in a namespace is trusted (upstream's liveTTL). */
const liveLookupTtlMs = 30_000;
/** How long a request waits for its batch (upstream's 10 s). */
const evaluationTimeoutMs = 10_000;
/** Bounds of the look-aside caches (upstream keeps 100 of each). */
const cacheLimit = 100;

/** One quota as a batch works on it: its stored object, its caps and its running use. */
interface Working {
  obj: KubeObject;
  name: string;
  hard: ResourceList;
  used: ResourceList;
  scopes: ScopeRequirement[];
}

/** What a request was charged, per quota name. */
type Charges = Map<string, ResourceList>;

interface Waiter {
  request: AdmissionRequest;
  evaluator: Evaluator;
  /** Charges written to quotas already. */
  charged: Charges;
  /** Charges of this round, not yet written. */
  pending?: Charges;
  done?: { error?: unknown };
  /** Its requester stopped waiting: whatever its batch charges goes back at once. */
  timedOut?: boolean;
  resolve(): void;
}

interface Release {
  charges: Charges;
  resolve(): void;
}

const quotasResource = { group: '', resource: 'resourcequotas' };

/** A lost compare-and-swap, as the store or the client reports it. */
function isConflict(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 409;
}

function working(obj: KubeObject): Working {
  return { obj, name: obj.metadata!.name!, hard: resourceList(obj.status?.hard), used: resourceList(obj.status?.used), scopes: scopeRequirements(obj) };
}

function revision(obj: KubeObject | undefined): bigint {
  try {
    return BigInt(obj?.metadata?.resourceVersion ?? '0');
  } catch {
    return 0n;
  }
}


export class ResourceQuota implements AdmissionPlugin {
  readonly name = 'ResourceQuota';
  /** Requests waiting for their namespace's next batch, and whether a batch runs now. */
  private readonly namespaces = new Map<string, { waiting: (Waiter | Release)[]; running: boolean }>();
  /** What each admitted request was charged, to give back if it does not get stored. */
  private readonly charges = new WeakMap<AdmissionRequest, Charges>();
  /** Quotas this server wrote last, newer than the lister's until its watch catches up (upstream's updatedQuotas). */
  private readonly written = new BoundedMap<string, KubeObject>(cacheLimit);
  /** Live lists of namespaces whose lister held no quota, until they expire. */
  private readonly live: LiveLookup;

  constructor(
    private readonly quotas: Lister,
    private readonly access: QuotaAccess,
    private readonly limited: readonly LimitedResource[] = [],
    private readonly now: () => number = Date.now,
  ) {
    this.live = new LiveLookup({ list: (namespace) => access.list(namespace), ttlMs: liveLookupTtlMs, size: cacheLimit, now });
  }

  // Answers without a promise when nothing is charged (most requests, most namespaces).
  validate(request: AdmissionRequest): void | Promise<void> {
    // Sub-resources, cluster-scoped objects and the creation of namespaces are never charged, as upstream.
    if (request.subresource || !request.namespace) return;
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return;
    const { group, resource } = qualifiedOf(request);
    if (request.operation === 'CREATE' && group === '' && resource === 'namespaces') return;
    const evaluator = evaluatorFor(group, resource);
    if (!evaluator || !evaluator.handles(request.operation)) return;
    // Most namespaces have no quota: known to have none, the request waits for no batch.
    if (this.limited.length === 0 && this.knownWithoutQuota(request.namespace)) return;
    return this.charge(request, evaluator);
  }

  /** Waits for the namespace's next batch to charge the request, and remembers the charge to give back. */
  private async charge(request: AdmissionRequest, evaluator: Evaluator): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const waiter = await new Promise<Waiter>((resolve) => {
      const w: Waiter = { request, evaluator, charged: new Map(), resolve: () => resolve(w) };
      this.enqueue(request.namespace!, w);
      // As upstream, a request does not wait for its batch for ever (a store that does not answer).
      timer = setTimeout(() => {
        w.timedOut = true;
        resolve(w);
      }, evaluationTimeoutMs);
      timer.unref?.();
    });
    clearTimeout(timer);
    if (waiter.timedOut) throw errors.internal('resource quota evaluation timed out');
    if (waiter.done?.error) throw waiter.done.error;
    if (waiter.charged.size) this.charges.set(request, waiter.charged);
  }

  async release(request: AdmissionRequest): Promise<void> {
    const charges = this.charges.get(request);
    if (!charges || !request.namespace) return;
    this.charges.delete(request);
    await new Promise<void>((resolve) => this.enqueue(request.namespace!, { charges, resolve }));
  }

  private enqueue(namespace: string, item: Waiter | Release): void {
    let ns = this.namespaces.get(namespace);
    if (!ns) this.namespaces.set(namespace, ns = { waiting: [], running: false });
    ns.waiting.push(item);
    if (!ns.running) void this.drain(namespace, ns);
  }

  /** Runs the namespace's batches one after another until nobody waits. */
  private async drain(namespace: string, ns: { waiting: (Waiter | Release)[]; running: boolean }): Promise<void> {
    ns.running = true;
    try {
      while (ns.waiting.length) {
        const batch = ns.waiting.splice(0);
        const waiters = batch.filter((b): b is Waiter => 'request' in b);
        const releases = batch.filter((b): b is Release => !('request' in b));
        try {
          if (releases.length) await this.giveBack(namespace, releases.map((r) => r.charges));
        } catch { /* the controller's recount corrects what could not be given back */ }
        for (const r of releases) r.resolve();
        if (!waiters.length) continue;
        try {
          await this.checkBatch(namespace, waiters);
        } catch (e) {
          for (const w of waiters) w.done ??= { error: e instanceof ApiError ? e : errors.internal(`resource quota evaluation failed: ${String(e)}`) };
        }
        const unclaimed = waiters.filter((w) => w.timedOut && w.charged.size).map((w) => w.charged);
        try {
          if (unclaimed.length) await this.giveBack(namespace, unclaimed);
        } catch { /* the controller's recount corrects it */ }
        for (const w of waiters) w.resolve();
      }
    } finally {
      ns.running = false;
      this.namespaces.delete(namespace);
    }
  }

  // ---- reading quotas -------------------------------------------------------

  private knownWithoutQuota(namespace: string): boolean {
    if (this.quotas.inNamespace(namespace).length) return false;
    return this.live.fresh(namespace)?.length === 0;
  }

  /** The namespace's quotas: the lister's, or a live list when it holds none, each replaced by a newer copy this server wrote. */
  private async namespaceQuotas(namespace: string): Promise<KubeObject[]> {
    let items = this.quotas.inNamespace(namespace);
    if (items.length === 0) items = await this.live.items(namespace);
    return items.map((q) => this.newest(q));
  }

  private newest(q: KubeObject): KubeObject {
    const key = `${q.metadata!.namespace}/${q.metadata!.name}`;
    const mine = this.written.get(key);
    if (!mine) return q;
    if (revision(q) >= revision(mine)) {
      this.written.delete(key);
      return q;
    }
    return mine;
  }

  private async write(w: Working): Promise<void> {
    const next = { ...w.obj, status: { ...(w.obj.status ?? {}), used: toJson(w.used) } };
    const stored = await this.access.updateStatus(next);
    this.written.set(`${stored.metadata!.namespace}/${stored.metadata!.name}`, stored);
    w.obj = stored;
  }

  // ---- a batch --------------------------------------------------------------

  private async checkBatch(namespace: string, waiters: Waiter[]): Promise<void> {
    let quotas = (await this.namespaceQuotas(namespace)).map(working);
    if (quotas.length === 0 && this.limited.length === 0) {
      for (const w of waiters) w.done = {};
      return;
    }
    let undecided = waiters;
    for (let round = 0; ; round++) {
      const originals = quotas.map((q) => q.used);
      for (const w of undecided) {
        try {
          const { next, charges } = this.checkRequest(quotas, w);
          // A dry run is checked, never charged.
          if (w.request.dryRun) w.done = {};
          else if (charges.size === 0) w.done = {};
          else {
            w.pending = charges;
            quotas = next;
          }
        } catch (e) {
          w.done = { error: e instanceof ApiError ? e : errors.internal(`resource quota evaluation failed: ${(e as Error)?.message ?? String(e)}`) };
        }
      }
      const failed = new Set<string>();
      let lastError: unknown;
      for (const [i, q] of quotas.entries()) {
        if (equals(originals[i]!, q.used)) continue;
        try {
          await this.write(q);
        } catch (e) {
          // As upstream, any failed write is read again (a quota deleted meanwhile drops out, and out of the live list).
          failed.add(q.name);
          if ((e as { code?: unknown })?.code === 404) this.live.forget(namespace);
          lastError = isConflict(e) ? errors.staleObject(quotasResource, q.name)
            : e instanceof ApiError ? e : errors.internal(`unable to update the status of quota ${q.name}: ${(e as Error)?.message ?? String(e)}`);
        }
      }
      // What was written is charged for good; what touched a quota that lost its race is checked again.
      const again: Waiter[] = [];
      for (const w of undecided) {
        if (!w.pending) continue;
        for (const [name, delta] of w.pending) if (!failed.has(name)) w.charged.set(name, delta);
        const lost = [...w.pending.keys()].some((name) => failed.has(name));
        w.pending = undefined;
        if (lost) again.push(w);
        else w.done = {};
      }
      if (again.length === 0) return;
      if (round >= conflictRetries) {
        for (const w of again) await this.refuse(namespace, w, lastError);
        return;
      }
      // Only the quotas that lost are checked again: the others hold these requests' charges already.
      const fresh = await Promise.all([...failed].map((name) => this.access.get(namespace, name)));
      quotas = fresh.filter((q): q is KubeObject => !!q).map(working);
      undecided = again;
    }
  }

  /** A request refused after some of its charges were written: they go back before it hears the answer. */
  private async refuse(namespace: string, w: Waiter, error: unknown): Promise<void> {
    w.done = { error };
    if (!w.charged.size) return;
    try {
      await this.giveBack(namespace, [w.charged]);
    } catch { /* the controller's recount corrects it */ }
    w.charged = new Map();
  }

  /**
   * Upstream's CheckRequest: the quotas that count the object must cap only
   * what it states (pods: cpu and memory), know their use, and have room for
   * its usage (on update, what it adds to its old usage); resources the
   * configuration limits need a covering quota. Answers the quotas as they
   * would be and what the request is charged per quota; throws 403.
   */
  private checkRequest(quotas: Working[], w: Waiter): { next: Working[]; charges: Charges } {
    const { request, evaluator } = w;
    const obj = request.object!;
    const none = { next: quotas, charges: new Map() as Charges };
    const { group, resource } = qualifiedOf(request);
    const limitedScopes = this.limited.flatMap((l) => matchingScopes(evaluator, obj, l.matchScopes));
    const limitedHere = this.limited.filter((l) => l.apiGroup === group && l.resource === resource);
    const limitedNames = new Set<string>();
    if (limitedHere.length) {
      for (const [name, q] of evaluator.usage(obj, this.now())) {
        if (q.nanos > 0n && limitedHere.some((l) => l.matchContains.some((part) => name.includes(part)))) limitedNames.add(name);
      }
    }
    const interesting: number[] = [];
    const restricted = new Set<string>();
    const restrictedScopes: ScopeRequirement[] = [];
    for (const [i, q] of quotas.entries()) {
      restrictedScopes.push(...matchingScopes(evaluator, obj, q.scopes));
      if (!quotaMatches(evaluator, q.hard, q.scopes, obj)) continue;
      const names = evaluator.matchingResources([...q.hard.keys()]);
      const missing = evaluator.constraints(names, obj);
      if (missing) throw this.forbidden(request, `failed quota: ${q.name}: ${missing}`);
      const unknown = names.filter((n) => !q.used.has(n));
      if (unknown.length) throw this.forbidden(request, `status unknown for quota: ${q.name}, resources: ${prettyNames(names)}`);
      interesting.push(i);
      for (const n of names) restricted.add(n);
    }
    const usage = evaluator.usage(obj, this.now());
    const negative = negativeNames(usage);
    if (negative.length) throw this.forbidden(request, `quota usage is negative for resource(s): ${prettyNames(negative)}`);
    const deltas = new Map<number, ResourceList>(interesting.map((i) => [i, usage]));
    let deltaWithoutQuota = request.operation === 'CREATE' && interesting.length === 0 ? usage : new Map() as ResourceList;
    if (request.operation === 'UPDATE') {
      const old = request.oldObject;
      if (!old) throw this.forbidden(request, 'unable to get previous usage since prior version of object was not found');
      if (old.metadata?.resourceVersion) {
        const delta = subtractNonNegative(usage, evaluator.usage(old, this.now()));
        if (interesting.length === 0) deltaWithoutQuota = delta;
        for (const i of interesting) {
          const q = quotas[i]!;
          if (quotaMatches(evaluator, q.hard, q.scopes, old)) deltas.set(i, delta);
        }
      } else if (interesting.length === 0) {
        deltaWithoutQuota = usage;
      }
    }
    for (const [i, d] of deltas) {
      const nonZero = removeZeros(d);
      if (nonZero.size) deltas.set(i, nonZero);
      else deltas.delete(i);
    }
    if (interesting.length ? deltas.size === 0 : removeZeros(deltaWithoutQuota).size === 0) return none;
    const uncovered = [...limitedNames].filter((n) => !restricted.has(n)).sort();
    if (uncovered.length) throw this.forbidden(request, `insufficient quota to consume: ${uncovered.join(',')}`);
    const uncoveredScopes = limitedScopes.filter((l) => !restrictedScopes.some((r) => r.scopeName === l.scopeName));
    if (uncoveredScopes.length) {
      throw this.forbidden(request, `insufficient quota to match these scopes: [${uncoveredScopes.map(printScope).join(' ')}]`);
    }
    if (interesting.length === 0) return none;
    const next = quotas.map((q) => ({ ...q }));
    const charges: Charges = new Map();
    for (const i of interesting) {
      const delta = deltas.get(i);
      if (!delta) continue;
      const q = next[i]!;
      const requested = mask(delta, q.hard.keys());
      const used = add(q.used, requested);
      const { allowed, exceeded } = lessThanOrEqual(mask(used, requested.keys()), q.hard);
      if (!allowed) {
        throw this.forbidden(request, `exceeded quota: ${q.name}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(q.used, exceeded))}, limited: ${prettyPrint(mask(q.hard, exceeded))}`);
      }
      q.used = used;
      if (requested.size) charges.set(q.name, requested);
    }
    return { next, charges };
  }

  /** Gives charges back: each quota's use less what these requests were charged, by compare-and-swap. */
  private async giveBack(namespace: string, all: Charges[]): Promise<void> {
    const byQuota = new Map<string, ResourceList>();
    for (const charges of all) for (const [name, delta] of charges) byQuota.set(name, add(byQuota.get(name) ?? new Map(), delta));
    for (const [name, delta] of byQuota) {
      for (let round = 0; round <= conflictRetries; round++) {
        const current = round === 0 ? (await this.namespaceQuotas(namespace)).find((q) => q.metadata?.name === name) : await this.access.get(namespace, name);
        if (!current) break;
        const w = working(current);
        const used = new Map(w.used);
        for (const [r, q] of delta) if (used.has(r)) used.set(r, subtractNonNegative(mask(used, [r]), new Map([[r, q]])).get(r)!);
        if (equals(used, w.used)) break;
        w.used = used;
        try {
          await this.write(w);
          break;
        } catch (e) {
          if (!isConflict(e)) throw e;
        }
      }
    }
  }

  private forbidden(request: AdmissionRequest, why: string): ApiError {
    // As upstream's admission.NewForbidden: a name not generated yet is shown as its prefix.
    const meta = request.object?.metadata;
    const name = request.name || meta?.name || meta?.generateName || 'Unknown';
    return errors.forbidden(qualifiedOf(request), name, why);
  }
}

/** A scope requirement as upstream's error prints one (Go's %v of the struct). */
function printScope(r: ScopeRequirement): string {
  return `{${r.scopeName} ${r.operator} [${(r.values ?? []).join(' ')}]}`;
}

/**
 * The plugin as the server makes it: quotas from an informer-fed lister,
 * read live and written through the server's own client, limited resources
 * from its configuration.
 */
export function resourceQuotaPlugin(listers: AdmissionListers, config: Record<string, unknown> | undefined): ResourceQuota {
  const limited = limitedResourcesOf(config);
  const client = () => listers.writer();
  const type = () => resourceType(client(), resources.resourceQuotas);
  const access: QuotaAccess = {
    list: async (namespace) => (await client().list(type(), namespace)).items as KubeObject[],
    get: async (namespace, name) => (await client().get(type(), namespace, name)) as KubeObject | undefined,
    updateStatus: async (quota) => (await client().update(type(), quota.metadata!.namespace, quota, 'status')) as KubeObject,
  };
  return new ResourceQuota(listers.lister(resources.resourceQuotas), access, limited);
}
