// The registry: one ResourceStore per declared kind, looked up by
// group/version/resource, plus the namespace lookup namespaced stores need.

import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { Backend } from '../storage/backend.js';
import { ResourceStore } from './store.js';
import type { Admission } from '../admission/types.js';
import type { CacheSet } from '../storage/cache/index.js';
import { admitAll } from '../admission/chain.js';

export class Registry {
  private readonly stores = new Map<string, ResourceStore>();
  private namespaceStore?: ResourceStore;

  constructor(readonly kinds: KindDefinition[], readonly backend: Backend, admission: Admission = admitAll, caches?: CacheSet) {
    for (const kind of kinds) {
      const store = new ResourceStore(kind, backend, admission, caches);
      this.stores.set(Registry.id(kind.group, kind.version, kind.plural), store);
      if (kind.group === '' && kind.plural === 'namespaces') this.namespaceStore = store;
    }
  }

  private static id(group: string, version: string, resource: string): string {
    return `${group}/${version}/${resource}`;
  }

  store(group: string, version: string, resource: string): ResourceStore | undefined {
    return this.stores.get(Registry.id(group, version, resource));
  }

  /** A namespace by name, or undefined (for admission plugins and controllers). */
  findNamespace(name: string): Promise<KubeObject | undefined> {
    return this.namespaces().find(undefined, name);
  }

  namespaces(): ResourceStore {
    if (!this.namespaceStore) throw new Error('the catalog declares no namespaces kind');
    return this.namespaceStore;
  }

  /** Group versions served, core first, in catalog order. */
  groupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>();
    for (const k of this.kinds) seen.set(`${k.group}/${k.version}`, { group: k.group, version: k.version });
    return [...seen.values()];
  }

  kindsOf(group: string, version: string): KindDefinition[] {
    return this.kinds.filter((k) => k.group === group && k.version === version);
  }
}
