// Discovery documents, all derived from the catalog: /api, /apis,
// /apis/{group}, /api/v1 and /apis/{group}/{version}, and /version.

import { createHash } from 'node:crypto';
import { discoveredUpstreamGroup, product, productGroupForUpstream } from '../machinery/vocabulary.js';
import { apiVersionOf, KindDefinition } from '../api/kind.js';
import { verbsOf, type RestObject } from '../registry/rest.js';
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
  constructor(private readonly registry: Registry) {}

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
      // Listed first, the upstream name is the one kubectl picks for these resources (see upstreamCompat).
      const upstream = discoveredUpstreamGroup(group);
      if (upstream !== undefined && !groups.has(group)) groups.set(upstream, groups.get(upstream) ?? []);
      const versions = groups.get(group) ?? [];
      versions.push(version);
      groups.set(group, versions);
      if (upstream !== undefined) groups.set(upstream, [...versions]);
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

  /** One entry per REST object of the group version: resources and sub-resources, verbs from their capabilities. */
  resourceList(group: string, version: string) {
    const ours = productGroupForUpstream(group);
    const served = ours !== undefined && discoveredUpstreamGroup(ours) === group ? ours : group;
    const rests = this.registry.restObjectsOf(served, version);
    if (rests.length === 0) return undefined;
    // Short names go with the upstream name only, so that kubectl finds one resource for them.
    const shortNames = served !== group || discoveredUpstreamGroup(group) === undefined;
    const resources = rests.map((rest) => resourceEntry(rest, shortNames));
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group, version }), resources };
  }
}

function resourceEntry(rest: RestObject, withShortNames: boolean): Record<string, unknown> {
  const d = rest.describe;
  const main = d.subresource === undefined;
  const entry: Record<string, unknown> = {
    name: main ? d.resource : `${d.resource}/${d.subresource}`,
    singularName: main ? d.kind.singular : '',
    namespaced: d.namespaced,
  };
  // A sub-resource that answers with a kind of another group version names it (scale: autoscaling/v1).
  if (d.kind.group !== d.group || d.kind.version !== d.version) {
    entry.group = d.kind.group;
    entry.version = d.kind.version;
  }
  entry.kind = d.kind.kind;
  entry.verbs = verbsOf(rest);
  if (main && withShortNames && d.kind.shortNames.length) entry.shortNames = d.kind.shortNames;
  if (main && d.kind.categories.length) entry.categories = d.kind.categories;
  if (main && d.stored) entry.storageVersionHash = storageVersionHash(d.kind);
  return entry;
}
