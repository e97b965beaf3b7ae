// Serving CustomResourceDefinitions. Every server runs this (not only the
// controller manager's leader): each serves the kinds its store defines.
// It hears of definitions through the shared informer and, per definition:
// - accepts its names unless another definition of the group claims them
//   (NamesAccepted), builds the kind (api/apiextensions/customkind.ts) and
//   adds it to the registry, replacing the one built from an older spec,
//   then reports Established;
// - when the definition is deleted (the first DELETE adds the cleanup
//   finalizer, see the kind's strategy), reports Terminating, deletes every
//   custom object (their own finalizers honoured), and once none is left
//   removes the finalizer so the definition goes, and with it the kind.
// A kind is served before Established is written, so a client that waits
// for the condition never meets a 404.
// Built-ins always win: a definition may not be written claiming a name a
// built-in kind holds in its group (under our group name or upstream's),
// and one stored before that rule is never served (NamesAccepted False,
// never Established). A new resource in a group version built-ins serve is
// accepted and Established but not served there, as upstream, whose
// built-in handler answers every path of that group version.
// Definitions in protected groups carry upstream's
// KubernetesAPIApprovalPolicyConformant condition.

import { customKindOf, type Conversion, type ServingState } from '../api/apiextensions/customkind.js';
import { cleanupFinalizer, customResourceDefinitions } from '../api/apiextensions/v1/customresourcedefinition.js';
import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import type { InformerFactory, InformerSubscription } from '../client/informer.js';
import { WorkQueue } from '../client/workqueue.js';
import { ItemExponentialRateLimiter } from '../client/ratelimit.js';
import { rfc3339Now } from '../machinery/time.js';
import { ApiError, errors, fieldErrors, type FieldError } from '../machinery/errors.js';
import { ourGroup, type ClaimedNames, type Registry } from '../registry/registry.js';
import { approvalCondition } from '../api/apiextensions/approval.js';

type Json = Record<string, any>;
type Log = (msg: string, extra?: object) => void;

interface Served {
  kind: KindDefinition;
  state: ServingState;
  /** What the kind was built from: a changed spec or accepted names rebuild it. */
  builtFrom: string;
}

/** The names a definition claims in its group. */
function claimedNames(crd: ApiObject): string[] {
  const n: Json = crd.spec?.names ?? {};
  return [n.plural, n.singular, ...(n.shortNames ?? [])].filter((x) => typeof x === 'string' && x);
}

/** The names a definition claims, as the registry compares them with the built-ins'. */
function namesOf(crd: ApiObject | KubeObject): ClaimedNames {
  const n: Json = crd.spec?.names ?? {};
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    plural: text(n.plural) ?? '', singular: text(n.singular), kind: text(n.kind) ?? '', listKind: text(n.listKind),
    shortNames: Array.isArray(n.shortNames) ? n.shortNames.filter((x: unknown): x is string => typeof x === 'string') : [],
  };
}

/** The names of `now` a built-in holds that `before` (the object replaced, if any) did not claim yet, as field errors. */
function builtinNameErrors(registry: Registry, now: KubeObject, before?: KubeObject): FieldError[] {
  const group = now.spec?.group;
  if (typeof group !== 'string') return [];
  const had = before && before.spec?.group === group ? namesOf(before) : undefined;
  const hadNames = new Set(had ? [had.plural, had.singular, ...(had.shortNames ?? []), had.kind, had.listKind] : []);
  const errs: FieldError[] = [];
  // One name at a time: the claim found first, then the rest without it.
  let names = namesOf(now);
  for (let claim = registry.builtinClaim(group, names); claim; claim = registry.builtinClaim(group, names)) {
    if (!hadNames.has(claim.name)) errs.push(fieldErrors.invalid(`spec.names.${claim.field}`, claim.name, `${JSON.stringify(claim.name)} is already in use by a built-in resource of this group`));
    names = without(names, claim.field);
  }
  return errs;
}

function without(names: ClaimedNames, field: string): ClaimedNames {
  const short = /^shortNames\[(\d+)\]$/.exec(field);
  if (short) return { ...names, shortNames: (names.shortNames ?? []).map((n, i) => (i === Number(short[1]) ? '' : n)) };
  return { ...names, [field]: '' };
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, old: Json[] = []): Json {
  const before = old.find((c) => c.type === type);
  const lastTransitionTime = before && before.status === status ? before.lastTransitionTime : rfc3339Now();
  return { type, status, lastTransitionTime, reason, message };
}

export type ConversionFor = (crd: ApiObject) => ((version: string) => Conversion) | undefined;

export class CustomResourceServing {
  private readonly served = new Map<string, Served>();
  private subscription?: InformerSubscription;
  private readonly queue: WorkQueue;
  private readonly type: ResourceType;

  constructor(private readonly registry: Registry, private readonly client: ApiClient, private readonly log: Log, private readonly conversionFor: ConversionFor = () => undefined) {
    this.type = {
      group: customResourceDefinitions.group, version: customResourceDefinitions.version, resource: customResourceDefinitions.plural,
      kind: customResourceDefinitions.kind, namespaced: false, verbs: customResourceDefinitions.verbs,
    };
    this.queue = new WorkQueue((name) => this.sync(name), {
      name: 'crd_serving', workers: 1, maxRetries: Infinity, rateLimiter: new ItemExponentialRateLimiter(5, 1_000),
      log, failure: 'serving a custom resource definition failed; trying again',
    });
    // No definition is written taking a built-in's name: refused as the definition's own 422.
    const definitions = registry.store(this.type.group, this.type.version, this.type.resource);
    const refuse = (crd: KubeObject, old?: KubeObject) => {
      const errs = builtinNameErrors(registry, crd, old);
      if (errs.length) throw errors.invalid(this.type.group, this.type.kind, crd.metadata?.name ?? '', errs);
    };
    definitions?.useHooks({
      beginCreate: async (crd) => { refuse(crd); return async () => {}; },
      beginUpdate: async (crd, old) => { refuse(crd, old); return async () => {}; },
    });
  }

  async start(informers: InformerFactory): Promise<void> {
    const enqueue = (obj: ApiObject) => this.queue.add(obj.metadata?.name);
    this.subscription = informers.subscribe(this.type, { onAdd: enqueue, onUpdate: (_old, obj) => enqueue(obj), onDelete: enqueue });
    await this.subscription.start();
    // The definitions already stored are served before the server answers its first request.
    for (const crd of this.subscription.list()) {
      try {
        await this.sync(crd.metadata!.name);
      } catch {
        this.queue.addRateLimited(crd.metadata!.name);
      }
    }
  }

  async stop(): Promise<void> {
    this.subscription?.stop();
    await this.queue.shutDown();
  }

  /** The kind served for a definition, by the definition's name (tests and the bench look). */
  kindOf(name: string): KindDefinition | undefined {
    return this.served.get(name)?.kind;
  }

  private async sync(name: string): Promise<void> {
    const crd = this.subscription?.get(undefined, name);
    if (!crd) {
      this.unserve(name);
      return;
    }
    const conditions: Json[] = crd.status?.conditions ?? [];
    const approval = approvalCondition(crd.spec?.group, crd.metadata?.annotations);
    const approvalConditions = approval ? [condition(approval.type, approval.status, approval.reason, approval.message, conditions)] : [];
    const builtin = typeof crd.spec?.group === 'string' ? this.registry.builtinClaim(crd.spec.group, namesOf(crd)) : undefined;
    const conflict = builtin
      ? { reason: builtin.reason, message: `${JSON.stringify(builtin.name)} is already in use by a built-in resource` }
      : ((c) => (c ? { reason: 'NameConflict', message: c } : undefined))(this.nameConflict(crd));
    const status: Json = { ...crd.status };
    if (conflict) {
      status.conditions = [condition('NamesAccepted', 'False', conflict.reason, conflict.message, conditions),
        condition('Established', 'False', 'NotAccepted', 'not all names are accepted', conditions), ...approvalConditions];
      const deleting = !!crd.metadata?.deletionTimestamp;
      // Never served, so nothing of its own to delete: as upstream's finalizer, say why and let it go (a built-in's objects are never touched).
      if (deleting) {
        status.conditions.push(builtin?.field === 'plural'
          ? condition('Terminating', 'False', 'OverlappingBuiltInResource', 'instances overlap with built-in resources in storage', conditions)
          : condition('Terminating', 'False', 'NeverEstablished', 'resource was never established', conditions));
      }
      this.unserve(name);
      await this.writeStatus(crd, status);
      if (deleting) await this.cleanUp(crd);
      return;
    }
    // Versions in a group version built-ins serve are not served (upstream's built-in handler answers those paths).
    const versions = (Array.isArray(crd.spec.versions) ? crd.spec.versions as Json[] : []).map((v) => (v?.served && this.registry.isBuiltinGroupVersion(crd.spec.group, v.name) ? { ...v, served: false } : v));
    const accepted = { ...crd, spec: { ...crd.spec, versions }, status: { ...crd.status, acceptedNames: crd.spec.names } };
    const builtFrom = JSON.stringify([accepted.spec, crd.spec.names]);
    if (this.served.get(name)?.builtFrom !== builtFrom) {
      let kind: KindDefinition;
      const state: ServingState = { terminating: false };
      try {
        kind = customKindOf(accepted, this.conversionFor(crd), state, this.served.get(name)?.kind);
      } catch (err) {
        this.log('a custom resource definition could not be served', { name, err: String(err) });
        return;
      }
      this.unserve(name);
      try {
        this.registry.addKind(kind);
      } catch (err) {
        // A kind is served at this resource already.
        status.conditions = [condition('NamesAccepted', 'False', 'NameConflict', String((err as Error).message), conditions),
          condition('Established', 'False', 'NotAccepted', 'not all names are accepted', conditions), ...approvalConditions];
        await this.writeStatus(crd, status);
        return;
      }
      this.served.set(name, { kind, state, builtFrom });
    }
    status.acceptedNames = crd.spec.names;
    const terminating = !!crd.metadata?.deletionTimestamp;
    this.served.get(name)!.state.terminating = terminating;
    // Established says the kind answers: only once every version the definition serves has its route.
    const unanswered = versions.filter((v) => v?.served && !this.registry.rest(crd.spec.group, v.name, crd.spec.names.plural)).map((v) => v.name);
    if (unanswered.length) this.log('a served version of a custom resource has no route', { name, versions: unanswered });
    status.conditions = [
      condition('NamesAccepted', 'True', 'NoConflicts', 'no conflicts found', conditions),
      unanswered.length
        ? condition('Established', 'False', 'Installing', 'the initial names have been accepted', conditions)
        : condition('Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted', conditions),
      ...(terminating ? [condition('Terminating', 'True', 'InstanceDeletionInProgress', 'CustomResource deletion is in progress', conditions)] : []),
      ...approvalConditions,
    ];
    await this.writeStatus(crd, status);
    if (terminating) await this.cleanUp(crd);
  }

  /**
   * Why the definition's names cannot be accepted, or undefined: another
   * definition of the group holds one of them (accepted already, or, when
   * neither is yet, created first).
   */
  private nameConflict(crd: ApiObject): string | undefined {
    // Upstream's name of one of our groups is that group: `x.k8s.io` and `x.<domain>` share their names.
    const group = typeof crd.spec?.group === 'string' ? ourGroup(crd.spec.group) : undefined;
    const mine = new Set(claimedNames(crd));
    const kind = crd.spec?.names?.kind;
    const holds = (d: ApiObject) => this.served.has(d.metadata?.name) || !!d.status?.acceptedNames?.kind;
    const created = (d: ApiObject) => `${d.metadata?.creationTimestamp ?? ''} ${d.metadata?.name}`;
    for (const other of this.subscription?.list() ?? []) {
      if (other.metadata?.name === crd.metadata?.name || typeof other.spec?.group !== 'string' || ourGroup(other.spec.group) !== group) continue;
      const otherFirst = holds(other) ? !holds(crd) || created(other) < created(crd) : !holds(crd) && created(other) < created(crd);
      if (!otherFirst) continue;
      const names = other.status?.acceptedNames?.kind ? other.status.acceptedNames : other.spec?.names;
      const clash = claimedNames({ spec: { names } }).find((n) => mine.has(n));
      if (clash) return `"${clash}" is already in use`;
      if (names?.kind === kind) return `"${kind}" is already in use`;
    }
    return undefined;
  }

  private unserve(name: string): void {
    const served = this.served.get(name);
    if (!served) return;
    this.registry.removeKind(served.kind);
    this.served.delete(name);
  }

  private async writeStatus(crd: ApiObject, status: Json): Promise<void> {
    if (sameStatus(crd.status, status)) return;
    try {
      await this.client.update(this.type, undefined, { ...crd, status }, 'status');
    } catch (e) {
      // Another server (or an older event) wrote first: the informer brings the news and a new sync.
      if (isConflict(e) || isNotFound(e)) return;
      throw e;
    }
  }

  /** Deletes the definition's objects; once none is left, lets the definition go. */
  private async cleanUp(crd: ApiObject): Promise<void> {
    if (!(crd.metadata?.finalizers ?? []).includes(cleanupFinalizer)) return;
    const served = this.served.get(crd.metadata!.name);
    if (served) {
      const store = this.registry.store(served.kind.group, served.kind.version, served.kind.plural)!;
      const list = await store.list(undefined, {});
      const items: KubeObject[] = list.items ?? [];
      for (const item of items) {
        if (item.metadata?.deletionTimestamp) continue;
        try {
          await store.delete(item.metadata?.namespace, item.metadata!.name, {}, { warnings: [] });
        } catch (e) {
          if (!(e instanceof ApiError && e.code === 404)) throw e;
        }
      }
      if (items.length) {
        // Objects held by their own finalizers: look again shortly.
        this.queue.addAfter(crd.metadata!.name, 200);
        return;
      }
    }
    const finalizers = (crd.metadata?.finalizers ?? []).filter((f: string) => f !== cleanupFinalizer);
    try {
      await this.client.patch(this.type, undefined, crd.metadata!.name, 'merge', { metadata: { finalizers, resourceVersion: crd.metadata!.resourceVersion } });
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) return;
      throw e;
    }
  }
}

function sameStatus(a: Json | undefined, b: Json): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b);
}
