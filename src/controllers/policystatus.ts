// The ValidatingAdmissionPolicy status controller (upstream
// `validatingadmissionpolicy-status`): type-checks each policy whose
// generation it has not seen against the kinds its resource rules name and
// writes the warnings in `status.typeChecking`, with the generation checked
// in `status.observedGeneration`. As upstream, rules with a wildcard group or
// version give up, wildcard and sub-resources are skipped, and at most ten
// kinds are checked, in their names' order. Schemas come from the built-in
// catalog and from the CustomResourceDefinitions the informer holds.

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { builtinKinds } from '../api/catalog.js';
import { kindAt } from '../api/kind.js';
import { discoveredUpstreamGroup, productGroupForUpstream } from '../machinery/vocabulary.js';
import type { JSONSchemaProps } from '../api/validation/structural.js';
import { loadCel } from '../api/validation/index.js';
import { policyTypeWarnings, typeOfJsonSchema, typeOfSchema, type CelType, type CheckedType } from '../api/admissionregistration/v1/typechecking.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

const maxTypesToCheck = 10;

type Obj = Record<string, any>;
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** Our group for a rule's group (an upstream name of one of ours reads as ours). */
function ourGroup(group: string): string {
  const ours = productGroupForUpstream(group);
  return ours !== undefined && discoveredUpstreamGroup(ours) !== undefined ? ours : group;
}

export class PolicyStatusController extends BaseController {
  readonly name = 'validatingadmissionpolicy-status';
  private readonly queue: WorkQueue;
  private readonly policies: InformerSubscription;
  private readonly crds: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue((key) => this.sync(key), { name: 'validatingadmissionpolicy_status', failure: 'type checking a policy failed' });
    const offer = (policy: ApiObject) => {
      if ((policy.metadata?.generation ?? 0) > (policy.status?.observedGeneration ?? 0)) this.queue.add(String(policy.metadata?.name));
    };
    this.policies = this.watch(this.resolve(resources.validatingAdmissionPolicies), { onAdd: offer, onUpdate: (_old, p) => offer(p), onDelete: () => undefined });
    this.crds = this.watch(this.resolve(resources.customResourceDefinitions), {});
  }

  private async sync(name: string): Promise<void> {
    const policy = this.policies.get(undefined, name);
    if (!policy) return;
    const generation = policy.metadata?.generation ?? 0;
    if (generation <= (policy.status?.observedGeneration ?? 0)) return;
    await loadCel();
    const warnings = policyTypeWarnings(policy, this.typesToCheck(policy), this.paramType(policy));
    const status = { ...(policy.status ?? {}), observedGeneration: generation, typeChecking: warnings.length ? { expressionWarnings: warnings } : {} };
    try {
      await this.client.update(this.policies.type, undefined, { ...policy, status }, 'status');
    } catch (e) {
      // Gone, or changed meanwhile: the informer brings the new version back.
      if (isNotFound(e) || isConflict(e)) return;
      throw e;
    }
  }

  /** The kinds the policy's resource rules name, as upstream's checker finds them. */
  private typesToCheck(policy: ApiObject): CheckedType[] {
    const found = new Map<string, CheckedType>();
    const served = this.client.resources();
    for (const rule of (Array.isArray(policy.spec?.matchConstraints?.resourceRules) ? policy.spec.matchConstraints.resourceRules : []) as Obj[]) {
      const groups = strings(rule.apiGroups);
      const versions = strings(rule.apiVersions);
      if (groups.some((g) => g.includes('*')) || versions.some((v) => v.includes('*'))) continue;
      const names = strings(rule.resources).filter((r) => !/[*/]/.test(r)).sort();
      for (const group of [...groups].sort()) {
        for (const version of [...versions].sort()) {
          for (const resource of names) {
            const type = served.find((r) => r.group === ourGroup(group) && r.version === version && r.resource === resource);
            if (!type) continue;
            const celType = this.typeOf(type);
            const gvk = `${group}/${version}, Kind=${type.kind}`;
            if (celType && !found.has(gvk)) found.set(gvk, { gvk, type: celType });
            if (found.size === maxTypesToCheck) return sortedTypes(found);
          }
        }
      }
    }
    return sortedTypes(found);
  }

  /** The type of `params`: its kind's schema when the paramKind is served. */
  private paramType(policy: ApiObject): CelType | undefined {
    const kind = policy.spec?.paramKind;
    if (typeof kind?.apiVersion !== 'string' || typeof kind?.kind !== 'string') return undefined;
    const slash = kind.apiVersion.indexOf('/');
    const group = slash < 0 ? '' : ourGroup(kind.apiVersion.slice(0, slash));
    const version = slash < 0 ? kind.apiVersion : kind.apiVersion.slice(slash + 1);
    const type = this.client.resources().find((r) => r.group === group && r.version === version && r.kind === kind.kind && !r.resource.includes('/'));
    return type && this.typeOf(type);
  }

  /** The type of the objects of a served resource: a built-in kind's schema, or its CustomResourceDefinition's. */
  private typeOf(type: ResourceType): CelType | undefined {
    const builtin = builtinKinds.find((k) => k.plural === type.resource && k.versions.some((v) => v.group === type.group && v.name === type.version));
    if (builtin) {
      const version = builtin.versions.find((v) => v.group === type.group && v.name === type.version)!;
      return typeOfSchema(kindAt(builtin, version).schema);
    }
    const crd = this.crds.get(undefined, `${type.resource}.${type.group}`);
    const version = (Array.isArray(crd?.spec?.versions) ? crd.spec.versions : []).find((v: Obj) => v?.name === type.version);
    const schema = version?.schema?.openAPIV3Schema ?? crd?.spec?.validation?.openAPIV3Schema;
    return schema && typeof schema === 'object' ? typeOfJsonSchema(schema as JSONSchemaProps, true) : undefined;
  }
}

function sortedTypes(found: Map<string, CheckedType>): CheckedType[] {
  return [...found.values()].sort((a, b) => (a.gvk < b.gvk ? -1 : a.gvk > b.gvk ? 1 : 0));
}
