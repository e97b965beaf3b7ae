// Which API versions exist, as upstream 1.32 decides it: the level of a
// version (alpha off by default, beta and GA on), the versions the spec lists
// as removed by this release (never served, whatever the command line says),
// and `--runtime-config`, which turns group versions and single resources on
// and off at start. The registry asks `ApiEnablement.serves` about every REST
// object it is given, so routes, both discovery forms and OpenAPI (all read
// from the registry) agree, while objects stay in their stores, readable
// through the versions still served.

import { productGroup, productGroupForUpstream } from '../machinery/vocabulary.js';
import { reachedBy } from '../machinery/release.js';
import type { KindDefinition, KindVersion } from './kind.js';

export type VersionLevel = 'alpha' | 'beta' | 'ga';

/** `v1` GA, `v2beta3` beta, `v1alpha1` alpha; undefined for other names (custom resources may use any). */
export function versionLevel(version: string): VersionLevel | undefined {
  if (/^v\d+$/.test(version)) return 'ga';
  if (/^v\d+beta\d+$/.test(version)) return 'beta';
  if (/^v\d+alpha\d+$/.test(version)) return 'alpha';
  return undefined;
}

/** A row of the spec's "Removed versions" table: a whole group version, or only some of its resources. */
export interface RemovedVersion {
  group: string;
  version: string;
  /** The resources removed; absent: the whole version. */
  resources?: readonly string[];
  /** The release (`1.25`) that removed it. */
  release: string;
  /** What to use instead. */
  replacement: string;
}

const g = productGroup;
const row = (group: string, version: string, release: string, replacement: string, resources?: string[]): RemovedVersion =>
  ({ group, version, release, replacement, ...(resources ? { resources } : {}) });

export const removedVersions: readonly RemovedVersion[] = [
  row(g('storage'), 'v1beta1', '1.27', `${g('storage')}/v1`, ['csistoragecapacities']),
  row(g('flowcontrol'), 'v1beta1', '1.26', `${g('flowcontrol')}/v1beta2`),
  row('autoscaling', 'v2beta2', '1.26', 'autoscaling/v2'),
  row('batch', 'v1beta1', '1.25', 'batch/v1', ['cronjobs']),
  row(g('discovery'), 'v1beta1', '1.25', `${g('discovery')}/v1`, ['endpointslices']),
  row(g('events'), 'v1beta1', '1.25', `${g('events')}/v1`, ['events']),
  row('autoscaling', 'v2beta1', '1.25', 'autoscaling/v2'),
  row('policy', 'v1beta1', '1.25', 'policy/v1', ['poddisruptionbudgets', 'podsecuritypolicies']),
  row(g('node'), 'v1beta1', '1.25', `${g('node')}/v1`, ['runtimeclasses']),
  // Only the webhook configurations: v1beta1 came back in 1.28 for ValidatingAdmissionPolicy (off unless --runtime-config asks).
  row(g('admissionregistration'), 'v1beta1', '1.22', `${g('admissionregistration')}/v1`, ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']),
  row(g('apiextensions'), 'v1beta1', '1.22', `${g('apiextensions')}/v1`, ['customresourcedefinitions']),
  row(g('apiregistration'), 'v1beta1', '1.22', `${g('apiregistration')}/v1`, ['apiservices']),
  row(g('authentication'), 'v1beta1', '1.22', `${g('authentication')}/v1`, ['tokenreviews']),
  row(g('authorization'), 'v1beta1', '1.22', `${g('authorization')}/v1`, ['subjectaccessreviews', 'selfsubjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectrulesreviews']),
  row(g('certificates'), 'v1beta1', '1.22', `${g('certificates')}/v1`),
  row(g('coordination'), 'v1beta1', '1.22', `${g('coordination')}/v1`, ['leases']),
  row('extensions', 'v1beta1', '1.22', `${g('networking')}/v1`, ['ingresses']),
  row(g('networking'), 'v1beta1', '1.22', `${g('networking')}/v1`, ['ingresses', 'ingressclasses']),
  row(g('rbac.authorization'), 'v1beta1', '1.22', `${g('rbac.authorization')}/v1`),
  row(g('scheduling'), 'v1beta1', '1.22', `${g('scheduling')}/v1`, ['priorityclasses']),
  row(g('storage'), 'v1beta1', '1.22', `${g('storage')}/v1`, ['csidrivers', 'csinodes', 'storageclasses', 'volumeattachments']),
  row('extensions', 'v1beta1', '1.16', `${g('networking')}/v1`, ['networkpolicies']),
  row('extensions', 'v1beta1', '1.16', 'apps/v1', ['daemonsets', 'deployments', 'replicasets', 'podsecuritypolicies']),
  row('apps', 'v1beta1', '1.16', 'apps/v1'),
  row('apps', 'v1beta2', '1.16', 'apps/v1'),
].filter((r) => reachedBy(r.release));

/**
 * The group versions upstream 1.32 registers (in our group names), served
 * by default or not. Naming one this server does not serve in
 * `--runtime-config` is a warning, not a failed start, so that upstream
 * configurations start here.
 */
const upstreamGroupVersions: ReadonlySet<string> = new Set([
  'v1', `${g('admissionregistration')}/v1`, `${g('admissionregistration')}/v1beta1`, `${g('admissionregistration')}/v1alpha1`, `${g('internal.apiserver')}/v1alpha1`, 'apps/v1',
  `${g('authentication')}/v1`, `${g('authentication')}/v1beta1`, `${g('authentication')}/v1alpha1`, `${g('authorization')}/v1`,
  'autoscaling/v1', 'autoscaling/v2', 'batch/v1', `${g('certificates')}/v1`, `${g('certificates')}/v1alpha1`,
  `${g('coordination')}/v1`, `${g('coordination')}/v1alpha2`, `${g('discovery')}/v1`, `${g('events')}/v1`,
  `${g('flowcontrol.apiserver')}/v1`, `${g('flowcontrol.apiserver')}/v1beta3`, `${g('networking')}/v1`, `${g('networking')}/v1beta1`,
  `${g('networking')}/v1alpha1`, `${g('node')}/v1`, 'policy/v1', `${g('rbac.authorization')}/v1`, `${g('resource')}/v1alpha3`,
  `${g('resource')}/v1beta1`, `${g('scheduling')}/v1`, `${g('storage')}/v1`, `${g('storage')}/v1beta1`, `${g('storage')}/v1alpha1`,
  `${g('storagemigration')}/v1alpha1`, `${g('apiextensions')}/v1`, `${g('apiregistration')}/v1`,
]);

const gvText = (group: string, version: string) => (group ? `${group}/${version}` : version);

/**
 * Group versions upstream registers without serving a resource in them: the
 * ImageReview the ImagePolicyWebhook plugin sends, which needs its version
 * turned on by --runtime-config (as the spec says). Their keys are recorded,
 * so that `serves` answers for them.
 */
const unservedGroupVersions: ReadonlySet<string> = new Set([`${g('imagepolicy')}/v1alpha1`]);

/** The removal row that covers this group version (and resource, when given). */
export function removedVersion(group: string, version: string, resource?: string): RemovedVersion | undefined {
  return removedVersions.find((r) => r.group === group && r.version === version && (resource === undefined || !r.resources || r.resources.includes(resource)));
}

/** A group version is gone as a whole when it is removed and upstream no longer registers it for other resources. */
function removedWhole(group: string, version: string): RemovedVersion | undefined {
  const r = removedVersion(group, version);
  return r && !upstreamGroupVersions.has(gvText(group, version)) ? r : undefined;
}

/** A bad `--runtime-config` or a combination the server refuses to start with; the message is the one line the CLI prints. */
export class RuntimeConfigError extends Error {
  override name = 'RuntimeConfigError';
}

/** `--runtime-config` as upstream's ConfigurationMap: `key[=value]` pairs, comma-separated; a later key replaces an earlier one. */
export function parseRuntimeConfig(text: string, previous: readonly [string, string][] = []): [string, string][] {
  const pairs = new Map(previous);
  for (const part of text.split(',')) {
    if (part.trim() === '') continue;
    const equals = part.indexOf('=');
    const key = (equals < 0 ? part : part.slice(0, equals)).trim();
    pairs.delete(key);
    pairs.set(key, equals < 0 ? '' : part.slice(equals + 1).trim());
  }
  return [...pairs];
}

const levelKeys = { 'api/all': undefined, 'api/ga': 'ga', 'api/beta': 'beta', 'api/alpha': 'alpha' } as const;
type LevelKey = keyof typeof levelKeys;
/** Upstream applies them in this order, so a later one wins where both match. */
const levelOrder: readonly LevelKey[] = ['api/all', 'api/ga', 'api/beta', 'api/alpha'];
const isLevelKey = (key: string): key is LevelKey => Object.hasOwn(levelKeys, key);

/** Go's strconv.ParseBool, with an empty value meaning true (the spec's "omitted value"). */
function configValue(key: string, value: string): boolean {
  if (value === '' || ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  throw new RuntimeConfigError(`invalid value of ${key}: ${value}, err: strconv.ParseBool: parsing ${JSON.stringify(value)}: invalid syntax`);
}

/** What a version serves unless the command line says otherwise. */
export function enabledByDefault(version: Pick<KindVersion, 'name' | 'enabledByDefault'>): boolean {
  return version.enabledByDefault ?? versionLevel(version.name) !== 'alpha';
}

export interface ApiEnablementResult {
  enablement: ApiEnablement;
  /** Keys naming upstream versions this server does not serve: accepted, with a warning. */
  warnings: string[];
}

/**
 * The versions and resources the server serves. Built once at start from
 * `--runtime-config`, checked against the catalog; kinds added later (at run
 * time) are judged by the same rules: level keys, their own group version's
 * key, their declaration's default.
 */
export class ApiEnablement {
  private readonly levels = new Map<LevelKey, boolean>();
  private readonly versions = new Map<string, boolean>();
  private readonly resources = new Map<string, boolean>();

  private constructor() {}

  /** Checks every key against the catalog and upstream's versions; throws RuntimeConfigError for the first bad one. */
  static fromRuntimeConfig(pairs: readonly [string, string][], catalog: readonly KindDefinition[]): ApiEnablementResult {
    const e = new ApiEnablement();
    const served = new Map<string, Set<string>>();
    for (const kind of catalog) {
      for (const v of kind.versions) {
        const gv = gvText(v.group, v.name);
        if (!served.has(gv)) served.set(gv, new Set());
        served.get(gv)!.add(kind.plural);
      }
    }
    const groups = new Set([...served.keys()].map((gv) => (gv.includes('/') ? gv.slice(0, gv.lastIndexOf('/')) : '')));
    const upstreamGroups = new Set([...upstreamGroupVersions, ...removedVersions.map((r) => gvText(r.group, r.version))].map((gv) => (gv.includes('/') ? gv.slice(0, gv.lastIndexOf('/')) : '')));
    if (pairs.length === 1 && pairs[0]![0] === 'api/all' && pairs[0]![1] === 'false') throw new RuntimeConfigError('invalid key with only api/all=false');
    const warnings: string[] = [];
    for (const [key, value] of pairs) {
      if (isLevelKey(key)) {
        if (value !== '' && value !== 'true' && value !== 'false') throw new RuntimeConfigError(`invalid value ${key}=${value}`);
        e.levels.set(key, value !== 'false');
        continue;
      }
      const tokens = key.split('/');
      // The core group: `v1` (upstream's help) or `api/v1` (its older spelling).
      if (tokens.length === 1 || (tokens[0] === 'api' && tokens.length <= 3)) tokens.splice(0, tokens.length === 1 ? 0 : 1, '');
      if (tokens.length !== 2 && tokens.length !== 3) throw new RuntimeConfigError(`runtime-config invalid key ${key}`);
      const [rawGroup, version, resource] = tokens as [string, string, string?];
      if (!version || !/^[a-z0-9]+$/.test(version)) throw new RuntimeConfigError(`runtime-config invalid key ${key}`);
      const group = productGroupForUpstream(rawGroup) ?? rawGroup;
      const gv = gvText(group, version);
      const enabled = configValue(key, value);
      if (resource !== undefined && resource.toLowerCase() !== resource) {
        throw new RuntimeConfigError(`invalid key ${key}: group/version/resource and resource is always lowercase plural, not ${JSON.stringify(resource)}`);
      }
      const removed = resource === undefined ? removedWhole(group, version) : removedVersion(group, version, resource);
      if (removed) {
        const what = resource === undefined ? gv : `${gv}/${resource}`;
        throw new RuntimeConfigError(`--runtime-config names ${what}, which was removed in v${removed.release} (use ${removed.replacement} instead)`);
      }
      if (unservedGroupVersions.has(gv)) {
        if (resource === undefined) e.versions.set(gv, enabled);
        else e.resources.set(`${gv}/${resource}`, enabled);
        continue;
      }
      if (!served.has(gv)) {
        if (upstreamGroupVersions.has(gv)) {
          warnings.push(`--runtime-config names ${gv}, which this server does not serve; ${key} has no effect`);
          continue;
        }
        if (groups.has(group) || upstreamGroups.has(group)) throw new RuntimeConfigError(`group version ${gv} that has not been registered`);
        throw new RuntimeConfigError(`unknown api groups ${group || rawGroup}`);
      }
      if (resource === undefined) e.versions.set(gv, enabled);
      else if (served.get(gv)!.has(resource)) e.resources.set(`${gv}/${resource}`, enabled);
      else warnings.push(`--runtime-config names ${gv}/${resource}, which this server does not serve; ${key} has no effect`);
    }
    return { enablement: e, warnings };
  }

  /** Upstream's defaults, no command line. */
  static defaults(): ApiEnablement {
    return new ApiEnablement();
  }

  /** Whether a version of a kind serves `resource` (a sub-resource goes with its resource). */
  serves(group: string, version: Pick<KindVersion, 'name' | 'enabledByDefault' | 'removedRelease' | 'customResource'>, resource: string): boolean {
    // Upstream's --runtime-config turns built-in APIs on and off; a custom resource's version follows its definition.
    if (version.customResource) return true;
    if (version.removedRelease !== undefined && reachedBy(version.removedRelease)) return false;
    if (removedVersion(group, version.name, resource)) return false;
    const gv = gvText(group, version.name);
    const byResource = this.resources.get(`${gv}/${resource}`);
    if (byResource !== undefined) return byResource;
    const byVersion = this.versions.get(gv);
    if (byVersion !== undefined) return byVersion;
    let on = enabledByDefault(version);
    const level = versionLevel(version.name);
    for (const key of levelOrder) {
      const wanted = this.levels.get(key);
      if (wanted !== undefined && (key === 'api/all' || levelKeys[key] === level)) on = wanted;
    }
    return on;
  }
}
