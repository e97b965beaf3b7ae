// Discovery documents, all derived from the catalog: /api, /apis,
// /apis/{group}, /api/v1 and /apis/{group}/{version}, and /version.

import { createHash } from 'node:crypto';
import { product } from '../machinery/vocabulary.js';
import { apiVersionOf, KindDefinition, Verb } from '../api/kind.js';
import type { Registry } from '../registry/registry.js';

/** The upstream release whose API this server speaks; kubectl compares minors for skew. */
export const compatibleRelease = { major: '1', minor: '32', patch: '0' };

export function versionInfo(packageVersion: string) {
  return {
    major: compatibleRelease.major,
    minor: compatibleRelease.minor,
    gitVersion: `v${compatibleRelease.major}.${compatibleRelease.minor}.${compatibleRelease.patch}+${product.name}.${packageVersion}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: `node ${process.version}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

function storageVersionHash(k: KindDefinition): string {
  return createHash('sha256').update(`${k.group}/${k.version}/${k.kind}`).digest().subarray(0, 8).toString('base64');
}

export class Discovery {
  constructor(private readonly registry: Registry, private readonly servedVerbs: ReadonlySet<Verb>) {}

  private verbsOf(k: KindDefinition): Verb[] {
    return k.verbs.filter((v) => this.servedVerbs.has(v));
  }

  apiVersions(serverAddress: string) {
    return {
      kind: 'APIVersions',
      versions: this.registry.groupVersions().filter((gv) => gv.group === '').map((gv) => gv.version),
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  private namedGroups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const { group, version } of this.registry.groupVersions()) {
      if (!group) continue;
      const versions = groups.get(group) ?? [];
      versions.push(version);
      groups.set(group, versions);
    }
    return groups;
  }

  private groupDocument(name: string, versions: string[]) {
    const gvs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: gvs, preferredVersion: gvs[0] };
  }

  apiGroupList() {
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: [...this.namedGroups()].map(([name, versions]) => this.groupDocument(name, versions)),
    };
  }

  apiGroup(name: string) {
    const versions = this.namedGroups().get(name);
    return versions ? { kind: 'APIGroup', apiVersion: 'v1', ...this.groupDocument(name, versions) } : undefined;
  }

  resourceList(group: string, version: string) {
    const kinds = this.registry.kindsOf(group, version);
    if (kinds.length === 0) return undefined;
    const resources: Record<string, unknown>[] = [];
    for (const k of kinds) {
      const entry: Record<string, unknown> = {
        name: k.plural,
        singularName: k.singular,
        namespaced: k.scope === 'Namespaced',
        kind: k.kind,
        verbs: this.verbsOf(k),
      };
      if (k.shortNames.length) entry.shortNames = k.shortNames;
      if (k.categories.length) entry.categories = k.categories;
      entry.storageVersionHash = storageVersionHash(k);
      resources.push(entry);
      if (k.subresources.status) {
        const statusVerbs = (['get', 'patch', 'update'] as Verb[]).filter((v) => this.servedVerbs.has(v));
        resources.push({ name: `${k.plural}/status`, singularName: '', namespaced: k.scope === 'Namespaced', kind: k.kind, verbs: statusVerbs });
      }
      if (k.subresources.finalize) {
        resources.push({ name: `${k.plural}/finalize`, singularName: '', namespaced: k.scope === 'Namespaced', kind: k.kind, verbs: ['update'] });
      }
    }
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group, version }), resources };
  }
}
