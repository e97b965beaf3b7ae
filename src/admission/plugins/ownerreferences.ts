// OwnerReferencesPermissionEnforcement: owner references steer the garbage
// collector, so only someone who may delete an object may change its owner
// references (creating it with some is always allowed: the creator could
// delete it), and a reference that newly blocks its owner's deletion needs
// update rights on the owner's finalizers. Validating phase, creates and
// updates (a pod's status writes excepted, as upstream); every check asks the
// server's authorizer, and without one the plugin refuses.

import type { Attributes, Decision } from '../../machinery/authorization.js';
import { deepEqual } from '../../machinery/equal.js';
import { productGroupForUpstream } from '../../machinery/vocabulary.js';
import type { UserInfo } from '../../machinery/user.js';
import { requestResource, type AdmissionPlugin, type AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';
import type { Authorize } from './signerauthorization.js';

/** The resource a kind is served as in one group version (upstream's REST mapping). */
export interface KindResource {
  group: string;
  version: string;
  resource: string;
  namespaced: boolean;
}

/** The resources of kind `kind` in `group`/`version` the server serves. */
export type KindResources = (group: string, version: string, kind: string) => readonly KindResource[];

type OwnerReference = Record<string, any>;

/** Writes that may change owner references without these checks (upstream's whitelist). */
const exempt = [{ group: '', resource: 'pods', subresource: 'status' }];

const ownerRefs = (obj: Record<string, any> | undefined): OwnerReference[] => (Array.isArray(obj?.metadata?.ownerReferences) ? obj!.metadata!.ownerReferences : []);

function changesOwnerReferences(r: AdmissionRequest): boolean {
  const now = ownerRefs(r.object);
  if (!r.oldObject) return now.length > 0;
  const before = ownerRefs(r.oldObject);
  return now.length !== before.length || now.some((ref, i) => !deepEqual(ref, before[i]));
}

/** References that block their owner's deletion now and did not before (added, or turned on). */
function newlyBlocking(r: AdmissionRequest): OwnerReference[] {
  const blocking = ownerRefs(r.object).filter((ref) => ref.blockOwnerDeletion === true);
  if (!r.oldObject) return blocking;
  const before = new Map(ownerRefs(r.oldObject).map((ref) => [ref.uid, ref]));
  return blocking.filter((ref) => before.get(ref.uid)?.blockOwnerDeletion !== true);
}

/** Go's rendering of a decision's reason and error, as upstream's message prints them. */
const why = (d: Decision) => `${d.reason}, ${d.evaluationError ?? '<nil>'}`;

export class OwnerReferencesPermissionEnforcement implements AdmissionPlugin {
  readonly name = 'OwnerReferencesPermissionEnforcement';

  constructor(private readonly authorize: Authorize | undefined, private readonly kindResources: KindResources | undefined) {}

  async validate(r: AdmissionRequest): Promise<void> {
    if (r.operation !== 'CREATE' && r.operation !== 'UPDATE') return;
    const resource = requestResource(r);
    const subresource = r.subresource ?? '';
    if (exempt.some((e) => e.group === resource.group && e.resource === resource.resource && e.subresource === subresource)) return;
    if (!changesOwnerReferences(r)) return;
    const user = r.user ?? { username: '', groups: [] };
    if (r.operation !== 'CREATE') {
      const decision = await this.ask({
        user, verb: 'delete', namespace: r.namespace, apiGroup: resource.group, apiVersion: resource.version,
        resource: resource.resource, subresource, name: r.name, isResourceRequest: true, path: '',
      });
      if (decision.decision !== 'allow') throw forbiddenRequest(r, `cannot set an ownerRef on a resource you can't delete: ${why(decision)}`);
    }
    const blocking = newlyBlocking(r);
    if (!blocking.length) return;
    // One question first: may the user update the finalizers of anything at all (most controllers may).
    if ((await this.ask(finalizeAnything(user))).decision === 'allow') return;
    for (const ref of blocking) {
      const owners = this.ownerResources(ref);
      if (typeof owners === 'string') {
        throw forbiddenRequest(r, `cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion ${String(ref.apiVersion)} Kind ${String(ref.kind)}: ${owners}`);
      }
      for (const owner of owners) {
        const decision = await this.ask({
          user, verb: 'update', apiGroup: owner.group, apiVersion: owner.version, resource: owner.resource, subresource: 'finalizers',
          name: String(ref.name ?? ''), isResourceRequest: true, path: '',
          // A namespaced owner is in the dependent's namespace.
          ...(owner.namespaced ? { namespace: r.namespace } : {}),
        });
        if (decision.decision !== 'allow') {
          throw forbiddenRequest(r, `cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: ${why(decision)}`);
        }
      }
    }
  }

  /** The owner's resources, or why there are none (upstream's no-match text). */
  private ownerResources(ref: OwnerReference): readonly KindResource[] | string {
    const apiVersion = typeof ref.apiVersion === 'string' ? ref.apiVersion : '';
    const slash = apiVersion.indexOf('/');
    const rawGroup = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const group = productGroupForUpstream(rawGroup) ?? rawGroup;
    const found = this.kindResources?.(group, version, String(ref.kind ?? '')) ?? [];
    return found.length ? found : `no matches for kind "${String(ref.kind ?? '')}" in version "${apiVersion}"`;
  }

  /** The authorizer's answer; none, or an error, denies. */
  private async ask(attributes: Attributes): Promise<Decision> {
    if (!this.authorize) return { decision: 'deny', reason: 'no authorizer', evaluationError: 'the server gave this plugin no authorizer' };
    try {
      return await this.authorize(attributes);
    } catch (e) {
      return { decision: 'deny', reason: '', evaluationError: (e as Error).message };
    }
  }
}

function finalizeAnything(user: UserInfo): Attributes {
  return { user, verb: 'update', apiGroup: '*', apiVersion: '*', resource: '*', subresource: 'finalizers', name: '*', isResourceRequest: true, path: '' };
}
