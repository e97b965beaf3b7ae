// What the server owns in an object, whatever a client sent or a mutating
// webhook returned: the name and namespace the request names, a new
// object's uid, times, generation and emptied status, an updated object's
// uid, creation and deletion times and the fields its sub-resources own.
// The store puts them in place before admission (so webhooks see them) and
// again after it (so nothing a webhook returned overrides them). The kind's
// own preparation (prepareForCreate, prepareForUpdate) runs once, after
// mutating admission, as upstream's BeforeCreate and BeforeUpdate do, and
// the kind's defaults after it, as upstream's objects read back from storage
// are defaulted (a Job's labels from the selector labels it generates).

import { errors } from '../machinery/errors.js';
import { generateName } from '../machinery/objectmeta.js';
import { getPath, setPath } from '../machinery/paths.js';
import { clone } from '../machinery/patch/json.js';
import type { UserInfo } from '../machinery/user.js';
import { isViewSubresource, type KindDefinition, type KubeObject, type PartSubresource } from '../api/kind.js';

/** The uid and creation time a create gives its object, kept across mutating admission. */
export interface CreateStamp {
  uid: string;
  creationTimestamp: string;
}

export class ServerOwnedFields {
  /** Fields that only sub-resources write: a write to the main resource keeps them as stored. */
  private readonly ownedBySubresources: string[];
  /** Fields a create leaves empty (status): only their sub-resource sets them. */
  private readonly resetOnCreate: string[];

  constructor(private readonly kind: KindDefinition) {
    const parts = Object.values(kind.subresources).filter((d) => !isViewSubresource(d)) as PartSubresource[];
    this.ownedBySubresources = parts.flatMap((d) => d.owns);
    this.resetOnCreate = parts.filter((d) => d.resetOnCreate).flatMap((d) => d.owns);
  }

  /** The namespace in the body must agree with the path; an empty one takes the path's. */
  placeInNamespace(obj: KubeObject, namespace: string | undefined): void {
    const meta = obj.metadata!;
    if (this.kind.scope !== 'Namespaced') return;
    if (meta.namespace && namespace && meta.namespace !== namespace) {
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    meta.namespace = namespace ?? meta.namespace;
  }

  /**
   * The name in the body must be the URL's, as upstream checks a PUT, a
   * patched object and (here) what mutating admission returned; an apply
   * configuration without a name takes the URL's.
   */
  placeAtName(obj: KubeObject, name: string, emptyTakesUrl = false): void {
    const meta = obj.metadata!;
    if (emptyTakesUrl && !meta.name) meta.name = name;
    if (meta.name !== name) {
      throw errors.badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name})`);
    }
  }

  /**
   * The fields of a new object only the server sets: run before mutating
   * admission (so webhooks see them) and again after it, with the same uid
   * and timestamp, so that nothing a webhook returned overrides them.
   */
  stampForCreate(obj: KubeObject, stamp: CreateStamp): void {
    const meta = obj.metadata!;
    meta.uid = stamp.uid;
    meta.creationTimestamp = stamp.creationTimestamp;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.resourceVersion;
    delete meta.selfLink;
    for (const path of this.resetOnCreate) setPath(obj, path, undefined);
    if (this.kind.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
  }

  /**
   * A new object as mutating admission left it, made ready to store: what
   * the server owns stamped again, then the kind's preparation and defaults.
   */
  prepareForCreate(obj: KubeObject, stamp: CreateStamp, user: UserInfo | undefined): void {
    this.stampForCreate(obj, stamp);
    this.kind.strategy.prepareForCreate?.(obj, user);
    this.kind.strategy.defaults?.(obj);
  }

  /**
   * The new object with what the writer may not change taken from the old
   * one: through a part sub-resource only its fields change; the main
   * resource keeps what sub-resources own; uid (when absent), creation and
   * deletion times are the stored object's. Run before mutating admission and
   * again on what it returned, so webhooks cannot change them either; with
   * `prepare` (after admission, and before it through a part, whose fields
   * are worked out on what it keeps) the defaults and the preparation follow.
   */
  keepServerOwned(obj: KubeObject, old: KubeObject, subresource: string | undefined, ownPart: PartSubresource | undefined, prepare: boolean): KubeObject {
    let next = obj;
    if (ownPart) {
      // Through a sub-resource only its fields change: start from the stored object.
      if (ownPart.merge) next = ownPart.merge(obj, old);
      else {
        next = clone(old);
        copyPaths(obj, next, ownPart.owns);
      }
      // A different uid is not quietly dropped: validation reports it as a change of an immutable field.
      if (obj.metadata?.uid) next.metadata!.uid = obj.metadata.uid;
    } else if (subresource === undefined) {
      copyPaths(old, next, this.ownedBySubresources);
    }
    const meta = next.metadata!;
    const oldMeta = old.metadata!;
    meta.uid ||= oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    meta.deletionTimestamp = oldMeta.deletionTimestamp;
    meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    if (meta.deletionTimestamp === undefined) delete meta.deletionTimestamp;
    if (meta.deletionGracePeriodSeconds === undefined) delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (!prepare) return next;
    this.kind.strategy.defaults?.(next);
    if (subresource === undefined) this.kind.strategy.prepareForUpdate?.(next, old);
    else ownPart?.prepareForUpdate?.(next, old);
    return next;
  }
}

/**
 * `to` with the values of `paths` taken from `from` (absent there: removed),
 * copied: JSON values, so a JSON copy, several times cheaper than
 * structuredClone for a status (this runs twice on every update).
 */
function copyPaths(from: KubeObject, to: KubeObject, paths: readonly string[]): void {
  for (const path of paths) setPath(to, path, clone(getPath(from, path)));
}
