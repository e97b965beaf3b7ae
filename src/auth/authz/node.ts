// The Node authorizer (--authorization-mode=Node), as upstream 1.32's with
// its selector checks on (AuthorizeNodeWithSelectors is on by default
// there): a node agent reads only the secrets, config maps, claims, volumes
// and attachments its own pods lead to (see nodegraph.ts), lists and watches
// pods only by `spec.nodeName=<itself>`, reads only its own Node and Lease,
// and otherwise holds the node rules of the default policy. What it may
// write of pods and nodes is narrowed further by the NodeRestriction
// admission plugin. It never denies, so another mode may still allow.

import { noOpinion, type Attributes, type Decision, type RuleSet } from '../../machinery/authorization.js';
import { nodeIdentity } from '../../machinery/nodeidentity.js';
import type { UserInfo } from '../../machinery/user.js';
import { productGroupForUpstream, vocabulary } from '../../machinery/vocabulary.js';
import type { Authorizer } from './authorizer.js';
import { nodeRules } from './bootstrappolicy.js';
import type { NodeGraph, NodeReachableType } from './nodegraph.js';
import { compileRules, ruleAllows, type CompiledRule } from './rules.js';

const allow: Decision = { decision: 'allow', reason: '' };

/** The request's group as ours: a path in the upstream group name is the same group. */
function groupOf(attrs: Attributes): string {
  return productGroupForUpstream(attrs.apiGroup) ?? attrs.apiGroup;
}

/** Whether a field selector requires `field` to equal `value` (one of its `=`/`==` terms). */
function selectsExactly(fieldSelector: string | undefined, field: string, value: string): boolean {
  if (!fieldSelector) return false;
  for (const term of fieldSelector.split(/(?<!\\),/)) {
    const at = term.search(/!=|==|=/);
    if (at <= 0 || term.startsWith('!=', at)) continue;
    const operator = term.startsWith('==', at) ? 2 : 1;
    if (term.slice(0, at).trim() === field && term.slice(at + operator).trim().replace(/\\(.)/g, '$1') === value) return true;
  }
  return false;
}

export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';
  private readonly rules: CompiledRule[] = compileRules(nodeRules());

  constructor(private readonly graph: NodeGraph) {}

  authorize(attrs: Attributes): Decision {
    const node = nodeIdentity(attrs.user);
    if (node === undefined) return noOpinion();
    if (node === '') return noOpinion(`unknown node for user ${JSON.stringify(attrs.user.username)}`);
    if (attrs.isResourceRequest) {
      const group = groupOf(attrs);
      const resource = attrs.resource ?? '';
      if (group === '') {
        switch (resource) {
          case 'secrets': return this.readNamespaced(node, 'secret', attrs);
          case 'configmaps': return this.readNamespaced(node, 'configmap', attrs);
          case 'persistentvolumeclaims':
            return attrs.subresource === 'status' ? this.statusUpdate(node, 'persistentvolumeclaim', attrs) : this.getOnly(node, 'persistentvolumeclaim', attrs);
          case 'persistentvolumes': return this.getOnly(node, 'persistentvolume', attrs);
          case 'serviceaccounts': return this.createToken(node, attrs);
          case 'nodes': return this.nodeObject(node, attrs);
          case 'pods': return this.pod(node, attrs);
        }
      } else if (group === vocabulary.coordinationGroup && resource === 'leases') {
        return this.ownNamed(node, attrs, 'a node lease', vocabulary.nodeLeaseNamespace);
      } else if (group === vocabulary.storageGroup && resource === 'volumeattachments') {
        return this.getOnly(node, 'volumeattachment', attrs);
      } else if (group === vocabulary.storageGroup && resource === 'csinodes') {
        if (attrs.subresource) return noOpinion('cannot authorize CSINode subresources');
        return this.ownNamed(node, attrs, 'a CSINode');
      }
    }
    return this.rules.some((rule) => ruleAllows(rule, attrs)) ? allow : noOpinion();
  }

  /** As upstream: a node's rules cannot be listed, so a rules review says the list is incomplete. */
  rulesFor(user: UserInfo): RuleSet {
    const isNode = nodeIdentity(user) !== undefined;
    return { resourceRules: [], nonResourceRules: [], incomplete: isNode, errors: isNode ? ['node authorizer does not support user rule resolution'] : [] };
  }

  private related(node: string, type: NodeReachableType, attrs: Attributes): Decision {
    if (!attrs.name) return noOpinion('No Object name found');
    if (!this.graph.knowsNode(node) || !this.graph.relates(node, type, attrs.namespace ?? '', attrs.name)) {
      return noOpinion(`no relationship found between node '${node}' and this object`);
    }
    return allow;
  }

  private readNamespaced(node: string, type: NodeReachableType, attrs: Attributes): Decision {
    if (attrs.verb !== 'get' && attrs.verb !== 'list' && attrs.verb !== 'watch') return noOpinion('can only read resources of this type');
    if (attrs.subresource) return noOpinion('cannot read subresource');
    if (!attrs.namespace) return noOpinion('can only read namespaced object of this type');
    return this.related(node, type, attrs);
  }

  private getOnly(node: string, type: NodeReachableType, attrs: Attributes): Decision {
    if (attrs.verb !== 'get') return noOpinion('can only get individual resources of this type');
    if (attrs.subresource) return noOpinion('cannot get subresource');
    return this.related(node, type, attrs);
  }

  private statusUpdate(node: string, type: NodeReachableType, attrs: Attributes): Decision {
    if (attrs.verb !== 'update' && attrs.verb !== 'patch') return noOpinion('can only get/update/patch this type');
    return this.related(node, type, attrs);
  }

  private createToken(node: string, attrs: Attributes): Decision {
    if (attrs.verb !== 'create' || !attrs.name) return noOpinion('can only create tokens for individual service accounts');
    if (attrs.subresource !== 'token') return noOpinion('can only create token subresource of serviceaccount');
    return this.related(node, 'serviceaccount', attrs);
  }

  /** Leases in the node-lease namespace and CSINodes: only the one named after the node (on create the name is NodeRestriction's to check). */
  private ownNamed(node: string, attrs: Attributes, what: string, namespace?: string): Decision {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(attrs.verb)) return noOpinion(`can only get, create, update, patch, or delete ${what}`);
    if (namespace !== undefined && attrs.namespace !== namespace) return noOpinion(`can only access leases in the ${JSON.stringify(namespace)} system namespace`);
    if (attrs.verb !== 'create' && attrs.name !== node) return noOpinion(`can only access ${what.replace(/^an? /, '')} with the same name as the requesting node`);
    return allow;
  }

  private nodeObject(node: string, attrs: Attributes): Decision {
    if (!attrs.subresource) {
      // Registering and updating are NodeRestriction's to narrow to its own node.
      if (attrs.verb === 'create' || attrs.verb === 'update' || attrs.verb === 'patch') return allow;
      if (attrs.verb === 'get' || attrs.verb === 'list' || attrs.verb === 'watch') {
        // By name, not by the graph: a node reads its Node before it exists.
        if (attrs.name === node) return allow;
        if (!attrs.name) return noOpinion(`node '${node}' cannot read all nodes, only its own Node object`);
        return noOpinion(`node '${node}' cannot read '${attrs.name}', only its own Node object`);
      }
    } else if (attrs.subresource === 'status' && (attrs.verb === 'update' || attrs.verb === 'patch')) {
      return allow;
    }
    return noOpinion();
  }

  private pod(node: string, attrs: Attributes): Decision {
    switch (attrs.subresource ?? '') {
      case '':
        switch (attrs.verb) {
          case 'get': return this.getOnly(node, 'pod', attrs);
          case 'list': case 'watch':
            if (selectsExactly(attrs.fieldSelector, 'spec.nodeName', node)) return allow;
            if (attrs.name) return this.related(node, 'pod', attrs);
            return noOpinion('can only list/watch pods with spec.nodeName field selector');
          // Mirror pods; NodeRestriction narrows them to its own node.
          case 'create': case 'delete': return allow;
        }
        break;
      case 'status':
        if (attrs.verb === 'update' || attrs.verb === 'patch') return allow;
        break;
      case 'eviction':
        if (attrs.verb === 'create') return allow;
        break;
    }
    return noOpinion();
  }
}
