// The registry: the one source of what the server serves. Each stored kind
// has a ResourceStore and REST objects for its resource and sub-resources;
// objects that store nothing (reviews, create sub-resources) are added as REST
// objects of their own. Kinds and REST objects may be added and removed while
// the server runs; routes, discovery and OpenAPI read them from here and hear
// of every change.

import { ApiError } from '../machinery/errors.js';
import { declaredVersion, isViewSubresource, type KindDefinition, type KubeObject } from '../api/kind.js';
import { ApiEnablement } from '../api/versioning.js';
import type { Backend } from '../storage/backend.js';
import type { CacheSet } from '../storage/cache/index.js';
import type { Admission } from '../admission/types.js';
import { admitAll } from '../admission/chain.js';
import { ResourceStore } from './store.js';
import { codecsOf, type VersionCodec } from '../api/codec.js';
import { idOf, partSubresource, restId, storedResource, viewSubresource, type RestObject, type RestPath } from './rest.js';
import type { RequestScope } from './store.js';
import { admissionRequest, connectOptions } from './admissionrequests.js';
import { builtinAnsweredKinds } from '../api/catalog.js';
import { productGroupForUpstream } from '../machinery/vocabulary.js';

/** The names one group's built-in kinds hold: resource names (plural, singular, short names), kind names, versions. */
interface HeldNames {
  resources: Set<string>;
  kinds: Set<string>;
  versions: Set<string>;
}

/** The names a custom kind asks for in its group (a definition's spec.names). */
export interface ClaimedNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
}

/** A name a built-in holds, as upstream's naming controller reports a conflict: which name, where, and the reason. */
export interface HeldClaim {
  field: string;
  name: string;
  reason: 'PluralConflict' | 'SingularConflict' | 'ShortNamesConflict' | 'KindConflict' | 'ListKindConflict';
}

/** Our name of a group: upstream's `rbac.authorization.k8s.io` is our `rbac.authorization.<domain>`. */
export function ourGroup(group: string): string {
  return productGroupForUpstream(group) ?? group;
}

export class Registry {
  private readonly stores = new Map<string, ResourceStore>();
  private readonly rests = new Map<string, RestObject>();
  private readonly listeners = new Set<() => void>();
  private namespaceStore?: ResourceStore;
  /** By our group name: what built-in kinds hold there, served or not, so that no custom kind takes it under either group name. */
  private readonly builtins = new Map<string, HeldNames>();
  /** Bumped on every change, so that derived documents know when to rebuild. */
  generation = 0;

  /**
   * `enablement` decides which versions and resources are served (removed
   * versions, --runtime-config, alpha off by default): a REST object it turns
   * off is never added, so routes, discovery and OpenAPI never see it, while
   * the kind's store stays for the versions still served and for the server's
   * own work.
   */
  constructor(kinds: KindDefinition[], readonly backend: Backend, private readonly admission: Admission = admitAll, private readonly caches?: CacheSet,
    readonly enablement: ApiEnablement = ApiEnablement.defaults()) {
    // The answered kinds' REST objects are added later (after stored definitions are served): their names are held from the start.
    for (const kind of [...kinds, ...builtinAnsweredKinds]) this.hold(kind);
    for (const kind of kinds) this.serve(kind);
  }

  private hold(kind: KindDefinition): void {
    for (const group of new Set([kind.group, ...kind.versions.map((v) => v.group)])) {
      const key = ourGroup(group);
      let held = this.builtins.get(key);
      if (!held) this.builtins.set(key, (held = { resources: new Set(), kinds: new Set(), versions: new Set() }));
      for (const name of [kind.plural, kind.singular, ...kind.shortNames]) if (name) held.resources.add(name);
      held.kinds.add(kind.kind).add(kind.listKind);
      for (const v of kind.versions) if (v.group === group) held.versions.add(v.name);
    }
  }

  /**
   * The first of `names` a built-in kind holds in `group` (by either of its
   * names), or undefined. Upstream's naming controller compares a
   * definition with the others of its group this way: resource names with
   * resource names, kinds with kinds.
   */
  builtinClaim(group: string, names: ClaimedNames): HeldClaim | undefined {
    const held = this.builtins.get(ourGroup(group));
    if (!held) return undefined;
    const resource = (field: string, name: string | undefined, reason: HeldClaim['reason']) => (name && held.resources.has(name) ? { field, name, reason } : undefined);
    const kind = (field: string, name: string | undefined, reason: HeldClaim['reason']) => (name && held.kinds.has(name) ? { field, name, reason } : undefined);
    return resource('plural', names.plural, 'PluralConflict') ?? resource('singular', names.singular, 'SingularConflict')
      ?? (names.shortNames ?? []).map((n, i) => resource(`shortNames[${i}]`, n, 'ShortNamesConflict')).find((c) => c)
      ?? kind('kind', names.kind, 'KindConflict') ?? kind('listKind', names.listKind, 'ListKindConflict');
  }

  /** Whether built-in kinds are declared at this group version (by either group name): upstream serves nothing else there. */
  isBuiltinGroupVersion(group: string, version: string): boolean {
    return this.builtins.get(ourGroup(group))?.versions.has(version) ?? false;
  }

  /** The stored kinds, in the order they were added. */
  get kinds(): KindDefinition[] {
    return [...this.stores.values()].map((s) => s.kind);
  }

  /**
   * Serves a kind added while the server runs (a custom resource's): never
   * under a name a built-in kind holds in its group, whatever the group's
   * spelling, so built-ins always win.
   */
  addKind(kind: KindDefinition): ResourceStore {
    const claim = this.builtinClaim(kind.group, kind);
    if (claim) throw new Error(`"${claim.name}" is already in use by a built-in resource of ${ourGroup(kind.group)}`);
    return this.serve(kind);
  }

  /** Serves a kind: its store, its resource and its sub-resources. */
  private serve(kind: KindDefinition): ResourceStore {
    const id = restId(kind.group, kind.version, kind.plural);
    if (this.stores.has(id)) throw new Error(`${id} is served already`);
    const store = new ResourceStore(kind, this.backend, this.admission, this.caches);
    this.stores.set(id, store);
    // Every served version has the resource and its sub-resources; those of other versions than the stored one convert.
    const stored = declaredVersion(kind, kind.group, kind.version);
    const storedServed = stored !== undefined && stored.served && this.enablement.serves(kind.group, stored, kind.plural);
    const others = codecsOf(kind).filter((c) => this.enablement.serves(c.served.group, declaredVersion(kind, c.served.group, c.served.version)!, kind.plural));
    const versions: (VersionCodec | undefined)[] = [...(storedServed ? [undefined] : []), ...others];
    // A part without verbs is written by the server only (a pod's binding): a REST object added beside the kind serves it.
    const routed = Object.entries(kind.subresources).filter(([, d]) => d.verbs.length > 0);
    const rests = versions.flatMap((codec) => [storedResource(store, codec), ...routed.map(([name, declaration]) =>
      isViewSubresource(declaration) ? viewSubresource(store, name, declaration, codec) : partSubresource(store, name, declaration, codec))]);
    for (const rest of rests) this.rests.set(idOf(rest), rest);
    if (kind.group === '' && kind.plural === 'namespaces') this.namespaceStore = store;
    this.changed();
    return store;
  }

  /** Stops serving a kind and its sub-resources (what it stored stays in the store). */
  removeKind(kind: KindDefinition): void {
    const id = restId(kind.group, kind.version, kind.plural);
    const store = this.stores.get(id);
    if (!store) return;
    this.stores.delete(id);
    store.closeWatches(`the resource ${kind.plural}.${kind.group} changed or is no longer served`);
    const versions = new Set(kind.versions.map((v) => v.name));
    for (const [restKey, rest] of this.rests) {
      const d = rest.describe;
      if (d.group === kind.group && d.resource === kind.plural && versions.has(d.version)) this.rests.delete(restKey);
    }
    this.changed();
  }

  /** Serves a REST object that is not a stored kind's (a review, a create sub-resource). */
  addRest(rest: RestObject): void {
    const d = rest.describe;
    if (!this.enablement.serves(d.group, declaredVersion(d.parentKind, d.group, d.version) ?? { name: d.version }, d.resource)) return;
    const id = idOf(rest);
    if (this.rests.has(id)) throw new Error(`${id} is served already`);
    this.rests.set(id, rest);
    this.changed();
  }

  removeRest(rest: RestObject): void {
    if (this.rests.get(idOf(rest)) === rest && this.rests.delete(idOf(rest))) this.changed();
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.generation++;
    for (const listener of this.listeners) listener();
  }

  rest(group: string, version: string, resource: string, subresource?: string): RestObject | undefined {
    return this.rests.get(restId(group, version, resource, subresource));
  }

  /** Every REST object, in the order added (a kind's resource before its sub-resources). */
  restObjects(): RestObject[] {
    return [...this.rests.values()];
  }

  store(group: string, version: string, resource: string): ResourceStore | undefined {
    return this.stores.get(restId(group, version, resource));
  }

  /** The stored kind with this apiVersion and kind, if served. */
  kindFor(apiVersion: string, kind: string): KindDefinition | undefined {
    return this.kinds.find((k) => k.kind === kind && (k.group ? `${k.group}/${k.version}` : k.version) === apiVersion);
  }

  /** Sub-resource names of a resource, so that a path can tell `namespaces/x/status` from a namespaced resource. */
  subresourcesOf(group: string, version: string, resource: string): Set<string> {
    const names = new Set<string>();
    for (const rest of this.rests.values()) {
      const d = rest.describe;
      if (d.subresource !== undefined && d.group === group && d.version === version && d.resource === resource) names.add(d.subresource);
    }
    return names;
  }

  /**
   * Admission of a CONNECT request (pods/exec, a proxy), as upstream's
   * connect handler: after authorization, before the sub-resource does
   * anything (even looks its object up); the object is the request's options.
   */
  async admitConnect(rest: RestObject, path: RestPath, scope: RequestScope): Promise<void> {
    const options = rest.connector?.admitted;
    if (!options) return;
    const at = { kind: options.kind, subresource: rest.describe.subresource, namespaced: rest.describe.namespaced };
    const request = admissionRequest('CONNECT', at, path.name ?? '', path.namespace, scope, connectOptions, options.fromQuery(path.query));
    await this.admission.mutate(request);
    await this.admission.validate(request);
  }

  /**
   * A namespace by name, or undefined (for admission plugins and controllers):
   * a consistent read, from the watch cache like any GET, so that a create
   * on a shared store costs one round trip to it for the namespace at most.
   */
  async findNamespace(name: string): Promise<KubeObject | undefined> {
    try {
      return await this.namespaces().get(undefined, name);
    } catch (e) {
      if (e instanceof ApiError && e.code === 404) return undefined;
      throw e;
    }
  }

  namespaces(): ResourceStore {
    if (!this.namespaceStore) throw new Error('the catalog declares no namespaces kind');
    return this.namespaceStore;
  }

  /** Group versions served, core first, in the order added. */
  groupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>();
    for (const { describe: d } of this.rests.values()) seen.set(`${d.group}/${d.version}`, { group: d.group, version: d.version });
    return [...seen.values()].sort((a, b) => (a.group === '' ? -1 : 0) - (b.group === '' ? -1 : 0));
  }

  /** The REST objects of one group version. */
  restObjectsOf(group: string, version: string): RestObject[] {
    return this.restObjects().filter((r) => r.describe.group === group && r.describe.version === version);
  }
}
