// Discovery documents, all derived from the catalog: /api, /apis,
// /apis/{group}, /api/v1 and /apis/{group}/{version}, and /version.

import { createHash } from 'node:crypto';
import { discoveredUpstreamGroup, product, productGroupForUpstream, upstreamCompat, vocabulary } from '../machinery/vocabulary.js';
import { parseAccept } from './negotiation.js';
import { compareVersionPriority } from '../machinery/versionpriority.js';
import { apiVersionOf, KindDefinition } from '../api/kind.js';
import { verbsOf, type RestDescription, type RestObject } from '../registry/rest.js';
import type { Registry } from '../registry/registry.js';

import { compatibleRelease } from '../machinery/release.js';

export { compatibleRelease };

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

/** The hash of the stored version, the same at every version a resource is served at (as upstream). */
function storageVersionHash(k: KindDefinition): string {
  return createHash('sha256').update(`${k.group}/${k.version}/${k.kind}`).digest().subarray(0, 8).toString('base64');
}

const discoveryGroups: readonly string[] = [vocabulary.discoveryGroup, upstreamCompat.discoveryGroup];
const discoveryVersions: readonly string[] = ['v2', 'v2beta1'];

/** The aggregated form a client asked for at `/api` or `/apis`: apiVersion and content type, or undefined for the plain documents. */
export interface AggregatedForm {
  apiVersion: string;
  contentType: string;
}

/**
 * Which discovery form the Accept header prefers: the first range that names
 * an APIGroupDiscoveryList we serve (by our group or upstream's, v2 or
 * v2beta1, as JSON) wins, unless a plain JSON range comes before it.
 */
export function aggregatedFormAsked(accept: string | undefined): AggregatedForm | undefined {
  for (const m of parseAccept(accept)) {
    if (m.params.as === undefined) {
      if (m.type === '*' || (m.type === 'application' && (m.subtype === 'json' || m.subtype === '*'))) return undefined;
      continue;
    }
    if (m.params.as !== 'APIGroupDiscoveryList' || m.subtype !== 'json' || !discoveryGroups.includes(m.params.g) || !discoveryVersions.includes(m.params.v)) continue;
    return { apiVersion: `${m.params.g}/${m.params.v}`, contentType: `application/json;g=${m.params.g};v=${m.params.v};as=APIGroupDiscoveryList` };
  }
  return undefined;
}

/** The groups other servers answer through the aggregator (see aggregator/index.ts). */
export interface RemoteDiscovery {
  /** Each aggregated group with its versions, highest priority first. */
  groups(): { name: string; versions: string[] }[];
  /** A backend's resource list of one group version as last fetched, and whether that fetch is out of date. */
  resourcesOf(group: string, version: string): { list: Record<string, any>; stale: boolean } | undefined;
}

export class Discovery {
  /** `storageVersionHash`: resource lists carry it (the StorageVersionHash feature gate, on by default). */
  constructor(
    private readonly registry: Registry,
    private readonly opts: { storageVersionHash: boolean } = { storageVersionHash: true },
    private readonly remote?: RemoteDiscovery,
  ) {}

  apiVersions(serverAddress: string) {
    return {
      kind: 'APIVersions',
      versions: this.versionsByGroup().get('') ?? [],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
    };
  }

  /** Every group served (core first) with its versions, the preferred one first. */
  private versionsByGroup(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const { group, version } of this.registry.groupVersions()) groups.set(group, [...(groups.get(group) ?? []), version]);
    for (const versions of groups.values()) versions.sort(compareVersionPriority);
    return groups;
  }

  /** Groups by the names discovery lists, each with its versions, the preferred one first. */
  private namedGroups(): Map<string, string[]> {
    const groups = new Map<string, string[]>();
    for (const [group, versions] of this.versionsByGroup()) {
      if (!group) continue;
      // Listed first, the upstream name is the one kubectl picks for these resources (see upstreamCompat).
      const upstream = discoveredUpstreamGroup(group);
      if (upstream !== undefined) groups.set(upstream, [...versions]);
      // A custom resource may serve a new version of such a group under its upstream name: both lists are one group.
      const listed = groups.get(group);
      groups.set(group, listed ? [...new Set([...listed, ...versions])].sort(compareVersionPriority) : versions);
    }
    // Aggregated groups after ours, in their APIServices' priority order.
    for (const { name, versions } of this.remote?.groups() ?? []) {
      const listed = groups.get(name);
      groups.set(name, listed ? [...new Set([...listed, ...versions])] : versions);
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
    const listed = this.listedResources(group, version);
    if (!listed) return undefined;
    const resources = listed.rests.map((rest) => resourceEntry(rest, listed.shortNames, this.opts.storageVersionHash));
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: apiVersionOf({ group, version }), resources };
  }

  /**
   * The REST objects discovery lists for a group version as clients name it
   * (an upstream alias of one of ours lists our resources), and whether short
   * names go with them: with the upstream name only, so that kubectl finds
   * one resource for them.
   */
  private listedResources(group: string, version: string): { rests: RestObject[]; shortNames: boolean } | undefined {
    const ours = productGroupForUpstream(group);
    const served = ours !== undefined && discoveredUpstreamGroup(ours) === group ? ours : group;
    // Beside ours, what a custom resource serves under the upstream name itself.
    const rests = [...this.registry.restObjectsOf(served, version), ...(served === group ? [] : this.registry.restObjectsOf(group, version))];
    if (rests.length === 0) return undefined;
    return { rests, shortNames: served !== group || discoveredUpstreamGroup(group) === undefined };
  }

  /**
   * Aggregated discovery (an APIGroupDiscoveryList at `apiVersion`): every
   * group of `/api` (the core group) or `/apis` with its versions and their
   * resources, sub-resources nested under their resource, in one answer, so
   * a client needs one request per list instead of one per group version.
   */
  aggregated(root: 'api' | 'apis', apiVersion: string) {
    const groups: [string, string[]][] = root === 'api'
      ? [['', this.versionsByGroup().get('') ?? []]]
      : [...this.namedGroups()];
    const items = groups.map(([name, versions]) => ({
      metadata: { ...(name ? { name } : {}), creationTimestamp: null },
      versions: versions.flatMap((version) => {
        const listed = this.listedResources(name, version);
        if (listed) return [{ version, resources: discoveredResources(listed.rests, listed.shortNames), freshness: 'Current' }];
        // An aggregated group version: what its backend last said, marked stale when that is out of date; nothing before it first answered.
        const remote = name ? this.remote?.resourcesOf(name, version) : undefined;
        return remote ? [{ version, resources: aggregatedFromResourceList(remote.list), freshness: remote.stale ? 'Stale' : 'Current' }] : [];
      }),
    })).filter((item) => item.versions.length > 0);
    return { kind: 'APIGroupDiscoveryList', apiVersion, metadata: {}, items };
  }
}

/** A backend's APIResourceList in the aggregated form: one entry per resource, its sub-resources inside. */
function aggregatedFromResourceList(list: Record<string, any>): Record<string, unknown>[] {
  const entries = new Map<string, Record<string, unknown>>();
  const [group, version] = String(list.groupVersion ?? '').includes('/') ? String(list.groupVersion).split('/') as [string, string] : ['', String(list.groupVersion ?? '')];
  const resources: Record<string, any>[] = Array.isArray(list.resources) ? list.resources : [];
  const kindOf = (r: Record<string, any>) => ({ group: r.group ?? group, version: r.version ?? version, kind: r.kind ?? '' });
  for (const r of resources.filter((r) => typeof r?.name === 'string' && !r.name.includes('/'))) {
    const entry: Record<string, unknown> = {
      resource: r.name, responseKind: kindOf(r), scope: r.namespaced ? 'Namespaced' : 'Cluster', singularResource: r.singularName ?? '', verbs: Array.isArray(r.verbs) ? r.verbs : [],
    };
    if (Array.isArray(r.shortNames) && r.shortNames.length) entry.shortNames = r.shortNames;
    if (Array.isArray(r.categories) && r.categories.length) entry.categories = r.categories;
    entries.set(r.name, entry);
  }
  for (const r of resources.filter((r) => typeof r?.name === 'string' && r.name.includes('/'))) {
    const [parent, subresource] = r.name.split('/', 2) as [string, string];
    const entry = entries.get(parent);
    if (!entry) continue;
    ((entry.subresources ??= []) as Record<string, unknown>[]).push({ subresource, responseKind: kindOf(r), verbs: Array.isArray(r.verbs) ? r.verbs : [] });
  }
  return [...entries.values()];
}

/** The aggregated form of a group version's REST objects: one entry per resource, its sub-resources inside. */
function discoveredResources(rests: RestObject[], withShortNames: boolean): Record<string, unknown>[] {
  const entries = new Map<string, Record<string, unknown>>();
  const kindOf = (k: RestDescription['kind']) => ({ group: k.group, version: k.version, kind: k.kind });
  const entryOf = (d: RestDescription): Record<string, unknown> => {
    let entry = entries.get(d.resource);
    if (!entry) {
      // The resource's own fields; its verbs are those of its main REST object (none when only sub-resources are served).
      entry = { resource: d.resource, responseKind: kindOf(d.parentKind), scope: d.namespaced ? 'Namespaced' : 'Cluster', singularResource: d.parentKind.singular, verbs: [] };
      if (withShortNames && d.parentKind.shortNames.length) entry.shortNames = d.parentKind.shortNames;
      if (d.parentKind.categories.length) entry.categories = d.parentKind.categories;
      entries.set(d.resource, entry);
    }
    return entry;
  };
  for (const rest of rests) {
    const d = rest.describe;
    const entry = entryOf(d);
    if (d.subresource === undefined) {
      entry.responseKind = kindOf(d.kind);
      entry.verbs = verbsOf(rest);
    } else {
      const list = (entry.subresources as Record<string, unknown>[] | undefined) ?? [];
      list.push({ subresource: d.subresource, responseKind: kindOf(d.kind), verbs: verbsOf(rest) });
      entry.subresources = list;
    }
  }
  return [...entries.values()];
}
function resourceEntry(rest: RestObject, withShortNames: boolean, withStorageVersionHash: boolean): Record<string, unknown> {
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
  if (main && d.stored && withStorageVersionHash) entry.storageVersionHash = storageVersionHash(d.codec?.stored ?? d.kind);
  return entry;
}
