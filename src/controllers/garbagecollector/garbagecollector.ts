// The garbage collector: deletes objects whose owners are all gone, and
// carries out the orphan and foreground deletion policies, following the
// upstream controller (pkg/controller/garbagecollector):
//
// - One informer per listable and watchable resource type feeds a graph of
//   owner references keyed by uid (graph.ts).
// - attemptToDelete(object): its owner references are classified as solid
//   (the owner exists), dangling (no object of that name, or another uid)
//   or waiting (the owner is deleted in foreground). Only dangling: the
//   object is deleted. Solid and others: the others' references are
//   removed. Waiting and no solid: the object is deleted, in foreground
//   when it has dependents of its own.
// - An owner deleting in foreground loses its `foregroundDeletion`
//   finalizer once no dependent with blockOwnerDeletion is left.
// - attemptToOrphan(owner): every dependent loses its reference to the
//   owner, then the owner loses its `orphan` finalizer.
//
// On start the graph is rebuilt from lists, then every object with owners
// and every owner held by one of the two finalizers is looked at, so work a
// stopped server left behind is finished.

import { ApiClient, ApiObject, ResourceType } from '../../client/types.js';
import type { InformerSubscription } from '../../client/informer.js';

const typeKey = (t: ResourceType) => `${t.group}/${t.version}/${t.resource}`;
import { WorkQueue, type WorkQueueOptions } from '../../client/workqueue.js';
import { kitOf, type Controller, type ControllerKit, type KitArgument } from '../controller.js';
import { DependencyGraph, GraphNode } from './graph.js';
import { GarbageCollectorStopped, Operations } from './operations.js';
import {
  AbsentOwnerCache, describe, finalizersOf, foregroundFinalizer, ObjectIdentity, orphanFinalizer, OwnerReference,
  ownerReferencesOf, referenceMatches, resolveOwnerType,
} from './references.js';

type Log = (msg: string, extra?: object) => void;

type OwnerState = 'solid' | 'dangling' | 'waiting';

/** Objects looked at once per queue (upstream's --concurrent-gc-syncs). */
const gcWorkers = 20;

/** Never watched, as upstream: many, short-lived, and never anyone's owner. */
const ignoredResources = new Set(['/events', 'events.k8s.io/events']);

/**
 * The types the collector watches: delete, list and watch served (as
 * upstream); one version per group and resource (the first listed).
 */
export function collectableTypes(types: readonly ResourceType[]): ResourceType[] {
  const seen = new Set<string>();
  return types.filter((t) => {
    if (!['delete', 'list', 'watch'].every((v) => t.verbs.includes(v))) return false;
    const key = `${t.group}/${t.resource}`;
    if (ignoredResources.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export class GarbageCollector implements Controller {
  readonly name = 'garbagecollector';
  private readonly graph: DependencyGraph;
  private readonly ops: Operations;
  private readonly absent = new AbsentOwnerCache();
  private readonly deleteQueue: WorkQueue;
  private readonly orphanQueue: WorkQueue;
  private readonly informers = new Map<string, InformerSubscription>();
  private stopWatchingResources?: () => void;
  /** Work is queued only once every informer has listed: the sweep after sync covers what came before. */
  private synced = false;
  private stopped = false;

  private readonly kit: ControllerKit;

  constructor(
    private readonly client: ApiClient,
    private readonly log: Log = () => undefined,
    /** The process's shared informers (and the queues' metrics and clock). */
    kit: KitArgument,
  ) {
    this.kit = kitOf(kit);
    this.ops = new Operations(client, () => !this.stopped);
    const queue = (name: string, what: string): WorkQueueOptions => ({
      // As upstream's collector: an object is retried for as long as it takes (an owner's kind may be served later).
      name, workers: gcWorkers, maxRetries: Infinity, clock: this.kit.clock, metrics: this.kit.metrics, log: this.log,
      failure: `garbage collector: ${what} failed`,
      describe: (uid, e) => {
        if (this.stopped || e instanceof GarbageCollectorStopped) return undefined;
        const node = this.graph.get(uid);
        return { object: node?.identity ? describe(node.identity) : uid, err: String(e) };
      },
    });
    this.deleteQueue = new WorkQueue((uid) => this.attemptToDelete(uid), queue('garbage_collector_attempt_to_delete', 'attemptToDelete'));
    this.orphanQueue = new WorkQueue((uid) => this.attemptToOrphan(uid), queue('garbage_collector_attempt_to_orphan', 'attemptToOrphan'));
    this.graph = new DependencyGraph({
      attemptToDelete: (node) => { if (this.synced) this.deleteQueue.add(node.uid); },
      attemptToOrphan: (node) => { if (this.synced) this.orphanQueue.add(node.uid); },
      gone: (uid) => this.absent.add(AbsentOwnerCache.key(uid)),
    });
  }

  async start(): Promise<void> {
    if (this.informers.size) throw new Error('the garbage collector is already started');
    this.stopWatchingResources = this.client.onResourcesChanged?.(() => {
      // Kinds served later (custom resources) are watched too; those no longer served are let go.
      if (!this.stopped) this.watchResources().catch(() => undefined);
    });
    await this.watchResources();
    if (this.stopped) return;
    this.synced = true;
    for (const node of this.graph.all()) {
      if (!node.observed) continue;
      if (node.owners.length || node.deletingDependents) this.deleteQueue.add(node.uid);
      if (node.orphaning) this.orphanQueue.add(node.uid);
    }
  }

  /** An informer for every collectable type served now, as upstream's monitors follow discovery. */
  private async watchResources(): Promise<void> {
    const types = collectableTypes(this.client.resources());
    const wanted = new Set(types.map(typeKey));
    for (const [key, informer] of this.informers) {
      if (!wanted.has(key)) {
        informer.stop();
        this.informers.delete(key);
      }
    }
    const started: Promise<void>[] = [];
    for (const type of types) {
      if (this.informers.has(typeKey(type))) continue;
      const informer = this.kit.informers.subscribe(type, {
        onAdd: (obj) => this.graph.observe(type, obj),
        onUpdate: (old, obj) => {
          // The same name with a new uid is another object: the old one is gone.
          if (old.metadata?.uid !== obj.metadata?.uid) this.graph.forget(old);
          this.graph.observe(type, obj);
        },
        onDelete: (obj) => this.graph.forget(obj),
      }, { metadataOnly: true }); // the graph needs identities, owners and finalizers only
      this.informers.set(typeKey(type), informer);
      started.push(informer.start());
    }
    await Promise.all(started);
  }

  /** Resolves once the running syncs are done (typed as the Controller's, so a caller may ignore the wait). */
  stop(): void | Promise<void> {
    this.stopped = true;
    this.stopWatchingResources?.();
    for (const i of this.informers.values()) i.stop();
    return Promise.all([this.deleteQueue.shutDown(), this.orphanQueue.shutDown()]).then(() => undefined);
  }

  queues(): readonly WorkQueue[] {
    return [this.deleteQueue, this.orphanQueue];
  }

  /** How many objects (and unobserved owners) the graph holds; for tests and diagnostics. */
  get graphSize(): number {
    return this.graph.size;
  }

  // ---- attemptToDelete ------------------------------------------------------

  private async attemptToDelete(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    if (this.stopped || !node?.observed || !node.identity) return;
    // Being deleted is a one-way trip: wait for the object to go, then its dependents are looked at.
    if (node.beingDeleted && !node.deletingDependents) return;
    if (node.deletingDependents) return this.processDeletingDependents(node);
    if (!node.owners.length || this.ownersPlainlyPresent(node)) return;

    const id = node.identity;
    const latest = await this.ops.get(id);
    // Gone, or deletion started meanwhile: the informer brings the change, and with it the right next step.
    if (!latest || latest.metadata?.deletionTimestamp) return;
    const refs = ownerReferencesOf(latest);
    if (!refs.length) return;
    const { solid, dangling, waiting } = await this.classify(id, refs);

    if (solid.length) {
      if (!dangling.length && !waiting.length) return;
      // Waiting references go too: the owner would wait forever on an object another owner keeps.
      const drop = [...dangling, ...waiting].map((r) => r.uid);
      await this.ops.removeOwnerReferences(id, drop);
      return;
    }
    if (waiting.length && node.dependents.size) {
      let current: ApiObject | undefined = latest;
      // A dependent deleting in foreground too may wait on this object: unblock its owners to break the cycle (as upstream).
      if ([...node.dependents].some((d) => d.deletingDependents)) current = await this.ops.unblockOwnerReferences(id);
      if (!current) return;
      await this.ops.delete(id, current, 'Foreground');
      return;
    }
    // Honour a policy the object asked for itself through its finalizers.
    const finalizers = finalizersOf(latest);
    const policy = finalizers.includes(orphanFinalizer) ? 'Orphan' : finalizers.includes(foregroundFinalizer) ? 'Foreground' : 'Background';
    await this.ops.delete(id, latest, policy);
  }

  /**
   * Every owner is observed, is the object its reference names, and is not
   * deleting in foreground: nothing to do, no request needed. When the graph
   * lags behind a deletion, the owner's deletion event brings the node back.
   */
  private ownersPlainlyPresent(node: GraphNode): boolean {
    return node.owners.every((ref) => {
      const owner = this.graph.get(ref.uid);
      return owner?.observed && referenceMatches(ref, node.identity!.namespace, owner.identity!) && !owner.deletingDependents;
    });
  }

  private async classify(id: ObjectIdentity, refs: readonly OwnerReference[]) {
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const state = await this.ownerState(id, ref);
      (state === 'solid' ? solid : state === 'dangling' ? dangling : waiting).push(ref);
    }
    return { solid, dangling, waiting };
  }

  /** Whether the owner `ref` names exists with its uid: from the graph, else from the server (the informer may lag). */
  private async ownerState(dependent: ObjectIdentity, ref: OwnerReference): Promise<OwnerState> {
    if (this.absent.has(AbsentOwnerCache.key(ref.uid))) return 'dangling';
    const type = resolveOwnerType(this.client.resources(), ref);
    // Retried with backoff: the kind may be served later (a custom kind being declared).
    if (!type) throw new Error(`owner reference to an unknown kind ${ref.kind} in ${ref.apiVersion}`);
    // A cluster-scoped object cannot be owned by a namespaced one: such a reference never resolves.
    if (type.namespaced && !dependent.namespace) return 'dangling';
    const namespace = type.namespaced ? dependent.namespace : undefined;
    const absentKey = AbsentOwnerCache.key(ref.uid, type, namespace, ref.name);
    if (this.absent.has(absentKey)) return 'dangling';
    const node = this.graph.get(ref.uid);
    if (node?.observed && referenceMatches(ref, dependent.namespace, node.identity!)) {
      return node.deletingDependents ? 'waiting' : 'solid';
    }
    const live = await this.ops.get({ type, namespace, name: ref.name, uid: ref.uid });
    if (!live) {
      this.absent.add(absentKey);
      return 'dangling';
    }
    return live.metadata?.deletionTimestamp && finalizersOf(live).includes(foregroundFinalizer) ? 'waiting' : 'solid';
  }

  /** An owner deleting in foreground: its blocking dependents go first, then its finalizer. */
  private async processDeletingDependents(owner: GraphNode): Promise<void> {
    const blocking = owner.blockingDependents();
    if (!blocking.length) {
      await this.ops.removeFinalizer(owner.identity!, foregroundFinalizer);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.deleteQueue.add(dep.uid);
  }

  // ---- attemptToOrphan --------------------------------------------------------

  private async attemptToOrphan(uid: string): Promise<void> {
    const owner = this.graph.get(uid);
    if (this.stopped || !owner?.observed || !owner.orphaning) return;
    const dependents = [...owner.dependents].filter((d) => d.observed && d.identity);
    const results = await Promise.allSettled(dependents.map((d) => this.ops.removeOwnerReferences(d.identity!, [uid])));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed.length) throw new Error(`orphaning the dependents of ${describe(owner.identity!)} failed: ${failed.map((f) => String(f.reason)).join('; ')}`);
    await this.ops.removeFinalizer(owner.identity!, orphanFinalizer);
  }
}
