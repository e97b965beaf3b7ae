// The dependency graph: one node per object uid, across every resource
// type, linking each object to the owners its references name and each
// owner to its dependents. Informer events update it synchronously; what
// needs work is reported to the collector through `GraphEvents`.
//
// An owner that is referenced but not (or no longer) observed stays as a
// placeholder node so that its dependents are known the moment it shows up
// (upstream's "virtual" node); it is dropped once nothing refers to it.

import type { ApiObject, ResourceType } from '../../client/types.js';
import {
  finalizersOf, foregroundFinalizer, identityOf, isBlocking, noFinalizers, noOwners, ObjectIdentity, orphanFinalizer, OwnerReference,
  ownerReferencesOf, referenceMatches,
} from './references.js';

const noDependents: ReadonlySet<GraphNode> = new Set();

export class GraphNode {
  /** Set once observed through an informer; placeholders know only their uid. */
  identity?: ObjectIdentity;
  observed = false;
  owners: readonly OwnerReference[] = noOwners;
  beingDeleted = false;
  finalizers: readonly string[] = noFinalizers;
  /** Made with the first dependent: most objects own nothing, and a Set each would cost the graph about 150 bytes an object. */
  private dependentSet?: Set<GraphNode>;

  constructor(readonly uid: string) {}

  /** The nodes whose owner references name this one. */
  get dependents(): ReadonlySet<GraphNode> {
    return this.dependentSet ?? noDependents;
  }

  addDependent(node: GraphNode): void {
    (this.dependentSet ??= new Set()).add(node);
  }

  removeDependent(node: GraphNode): void {
    this.dependentSet?.delete(node);
    if (this.dependentSet?.size === 0) this.dependentSet = undefined;
  }

  /** Deleted in foreground: waits for its blocking dependents. */
  get deletingDependents(): boolean {
    return this.beingDeleted && this.finalizers.includes(foregroundFinalizer);
  }

  /** Deleted with the orphan policy: its dependents are to lose their reference to it. */
  get orphaning(): boolean {
    return this.beingDeleted && this.finalizers.includes(orphanFinalizer);
  }

  /** Observed dependents whose reference to this node blocks its foreground deletion. */
  blockingDependents(): GraphNode[] {
    return [...this.dependents].filter((d) => d.observed && d.owners.some((r) => r.uid === this.uid && isBlocking(r)));
  }
}

export interface GraphEvents {
  /** The node may need collecting, or (deleting in foreground) finishing. */
  attemptToDelete(node: GraphNode): void;
  /** The node is deleted with the orphan policy. */
  attemptToOrphan(node: GraphNode): void;
  /** An observed object is gone for good (its uid never comes back). */
  gone(uid: string): void;
}

export class DependencyGraph {
  private readonly nodes = new Map<string, GraphNode>();

  constructor(private readonly events: GraphEvents) {}

  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  all(): IterableIterator<GraphNode> {
    return this.nodes.values();
  }

  get size(): number {
    return this.nodes.size;
  }

  /** An object was added or changed. */
  observe(type: ResourceType, obj: ApiObject): void {
    const uid = obj.metadata?.uid;
    if (typeof uid !== 'string' || !uid) return;
    let node = this.nodes.get(uid);
    if (!node) {
      node = new GraphNode(uid);
      this.nodes.set(uid, node);
    }
    const wasObserved = node.observed;
    const wasOrphaning = wasObserved && node.orphaning;
    const wasDeletingDependents = wasObserved && node.deletingDependents;
    const newOwners = ownerReferencesOf(obj);
    const added = this.updateOwners(node, newOwners);

    node.identity = identityOf(type, obj);
    node.observed = true;
    node.beingDeleted = Boolean(obj.metadata?.deletionTimestamp);
    node.finalizers = finalizersOf(obj);

    if (node.orphaning && !wasOrphaning) this.events.attemptToOrphan(node);
    if (node.deletingDependents && !wasDeletingDependents) {
      // Foreground deletion starts: every dependent is looked at (blocking
      // ones go first), and the owner itself, which may have none.
      for (const dep of node.dependents) this.events.attemptToDelete(dep);
      this.events.attemptToDelete(node);
    }
    // A new object, or one with new owners, needs a look when an owner is not
    // plainly there (unobserved, not the object the reference names, or
    // deleting in foreground); otherwise the owners' own events will tell.
    if ((!wasObserved || added) && this.hasUncertainOwner(node)) this.events.attemptToDelete(node);
    // An owner that was unobserved now is: dependents that named it wrongly need a look.
    if (!wasObserved) {
      for (const dep of node.dependents) {
        if (dep.observed && !dep.owners.some((r) => r.uid === uid && referenceMatches(r, dep.identity!.namespace, node!.identity!))) {
          this.events.attemptToDelete(dep);
        }
      }
    }
  }

  /** An object was deleted. */
  forget(obj: ApiObject): void {
    const uid = obj.metadata?.uid;
    const node = typeof uid === 'string' ? this.nodes.get(uid) : undefined;
    if (!node?.observed) return;
    this.updateOwners(node, noOwners);
    node.observed = false;
    node.beingDeleted = false;
    node.finalizers = noFinalizers;
    this.events.gone(node.uid);
    // Background cascade: the dependents are now (partly) ownerless.
    for (const dep of node.dependents) this.events.attemptToDelete(dep);
    this.dropIfUnused(node);
  }

  /** Replaces the node's owner references, linking and unlinking owners; tells whether any owner was added. */
  private updateOwners(node: GraphNode, owners: readonly OwnerReference[]): boolean {
    const oldByUid = new Map(node.owners.map((r) => [r.uid, r]));
    const newByUid = new Map(owners.map((r) => [r.uid, r]));
    let added = false;
    for (const [uid, oldRef] of oldByUid) {
      const owner = this.nodes.get(uid);
      if (!owner) continue;
      const newRef = newByUid.get(uid);
      if (!newRef) owner.removeDependent(node);
      // An owner deleting in foreground may have been waiting on this reference.
      if (isBlocking(oldRef) && !(newRef && isBlocking(newRef))) this.events.attemptToDelete(owner);
      if (!newRef) this.dropIfUnused(owner);
    }
    for (const uid of newByUid.keys()) {
      if (oldByUid.has(uid)) continue;
      added = true;
      let owner = this.nodes.get(uid);
      if (!owner) {
        owner = new GraphNode(uid);
        this.nodes.set(uid, owner);
      }
      owner.addDependent(node);
    }
    node.owners = owners;
    return added;
  }

  /** Whether some owner of the node is not plainly present in the graph. */
  private hasUncertainOwner(node: GraphNode): boolean {
    return node.owners.some((ref) => {
      const owner = this.nodes.get(ref.uid);
      return !owner?.observed || !referenceMatches(ref, node.identity?.namespace, owner.identity!) || owner.deletingDependents;
    });
  }

  private dropIfUnused(node: GraphNode): void {
    if (!node.observed && node.dependents.size === 0) this.nodes.delete(node.uid);
  }
}
