// Escalation prevention, as upstream's RBAC storage does it: a user may write
// a role only with rules it already holds (or with `escalate` on it), and a
// binding only to a role whose rules it holds (or with `bind` on it).
// system:masters may do both. The rules a user holds are its RBAC rules,
// read from the index; `escalate` and `bind` are asked of every module.

import { errors } from '../../machinery/errors.js';
import { deepEqual } from '../../machinery/equal.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import { systemGroups, type UserInfo } from '../../machinery/user.js';
import type { Authorizer } from './authorizer.js';
import type { RbacIndex } from './rbacindex.js';
import type { RbacAuthorizer } from './rbac.js';
import { compactRules, compactString, policyRuleOf, quoted, uncovered, type PolicyRule } from './rules.js';

type Obj = { metadata?: Record<string, any>; [field: string]: any };

/** What one write of an RBAC object is. */
export interface RbacWrite {
  kind: 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';
  operation: 'CREATE' | 'UPDATE';
  /** The resource (roles, clusterroles, ...) in our group. */
  resource: string;
  namespace?: string;
  object: Obj;
  oldObject?: Obj;
  /** Absent only for the server's own writes. */
  user?: UserInfo;
}

const fullAuthority: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'], resourceNames: [], nonResourceURLs: [] },
  { verbs: ['*'], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: ['*'] },
];

/** Bookkeeping the server or the garbage collector changes; an update touching only these needs no check, as upstream. */
const bookkeeping = ['ownerReferences', 'finalizers', 'managedFields', 'resourceVersion', 'generation'];

function onlyBookkeepingChanged(obj: Obj, old: Obj): boolean {
  const strip = (o: Obj) => {
    const metadata = { ...(o.metadata ?? {}) };
    for (const k of bookkeeping) delete metadata[k];
    return { ...o, metadata };
  };
  return deepEqual(strip(obj), strip(old));
}

const rulesOf = (o: Obj): PolicyRule[] => (Array.isArray(o.rules) ? o.rules.map(policyRuleOf) : []);

export class EscalationCheck {
  constructor(
    private readonly authorizer: Authorizer,
    private readonly rbac: RbacAuthorizer,
    private readonly index: RbacIndex,
  ) {}

  /** Resolves when the write may go on; throws a 403 (or the role's 404) otherwise. */
  async check(w: RbacWrite): Promise<void> {
    const user = w.user;
    if (!user || user.groups.includes(systemGroups.masters)) return;
    if (w.operation === 'UPDATE' && w.oldObject && onlyBookkeepingChanged(w.object, w.oldObject)) return;
    const name = String(w.object.metadata?.name ?? '');
    const qualified = { group: vocabulary.rbacGroup, resource: w.resource };
    if (w.kind === 'Role' || w.kind === 'ClusterRole') {
      // As upstream, the path's name: none on a create.
      if (await this.allowed(user, 'escalate', w.resource, w.namespace, w.operation === 'UPDATE' ? name : undefined)) return;
      this.confirmHeld(user, w.namespace ?? '', rulesOf(w.object), qualified, name);
      const rule = w.object.aggregationRule;
      const ruleSet = rule !== undefined && rule !== null;
      if (w.kind === 'ClusterRole' && ruleSet && (w.operation === 'CREATE' || !deepEqual(rule, w.oldObject?.aggregationRule))) {
        if (this.missing(user, '', fullAuthority).missing.length) {
          throw errors.forbidden(qualified, name, 'must have cluster-admin privileges to use the aggregationRule');
        }
      }
      return;
    }
    const ref = w.object.roleRef ?? {};
    const refResource = ref.kind === 'Role' ? 'roles' : 'clusterroles';
    if (await this.allowed(user, 'bind', refResource, w.namespace, String(ref.name ?? ''))) return;
    const found = this.index.rulesOf({ kind: String(ref.kind ?? ''), name: String(ref.name ?? '') }, w.namespace ?? '');
    if ('error' in found) throw errors.notFound({ group: vocabulary.rbacGroup, resource: ref.kind === 'Role' ? 'role' : 'clusterrole' }, String(ref.name ?? ''));
    this.confirmHeld(user, w.namespace ?? '', found.rules, qualified, name);
  }

  /** Whether any module allows `verb` on the RBAC resource (upstream asks with apiVersion *). */
  private async allowed(user: UserInfo, verb: string, resource: string, namespace: string | undefined, name: string | undefined): Promise<boolean> {
    const d = await this.authorizer.authorize({
      user, verb, isResourceRequest: true, path: '', apiGroup: vocabulary.rbacGroup, apiVersion: '*', resource, namespace, name,
    });
    return d.decision === 'allow';
  }

  private missing(user: UserInfo, namespace: string, wanted: readonly PolicyRule[]): { missing: PolicyRule[]; errors: string[] } {
    const held = this.rbac.heldRules(user, namespace);
    return { missing: uncovered(held.rules, wanted), errors: held.errors };
  }

  /** Upstream's ConfirmNoEscalation: a 403 listing what the user does not hold. */
  private confirmHeld(user: UserInfo, namespace: string, wanted: readonly PolicyRule[], qualified: { group: string; resource: string }, name: string): void {
    const { missing, errors: resolution } = this.missing(user, namespace, wanted);
    if (missing.length === 0) return;
    const lines = [...new Set(compactRules(missing).map(compactString))].sort();
    let message = `user ${JSON.stringify(user.username)} (groups=${quoted(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
    if (resolution.length) message += `; resolution errors: [${resolution.join(', ')}]`;
    throw errors.forbidden(qualified, name, message);
  }
}
