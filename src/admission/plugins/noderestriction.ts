// NodeRestriction: what a node agent (see machinery/nodeidentity.ts) may
// write, as upstream's plugin with the specification's one addition (a node
// may not delete its Node). The Node authorizer lets every node agent
// create, update and delete pods and nodes; this plugin narrows that to its
// own Node (never its taints, never labels that steer workloads), mirror
// pods bound to itself that reference nothing, the status and evictions of
// its own pods, tokens for its own pods, and its own Lease and CSINode.
// Pods and Nodes are read from informer-fed listers, live on a miss.

import type { KubeObject } from '../../api/kind.js';
import { ApiError, errors } from '../../machinery/errors.js';
import { nodeIdentity } from '../../machinery/nodeidentity.js';
import { podReferences } from '../../machinery/podreferences.js';
import { product, upstreamCompat, vocabulary } from '../../machinery/vocabulary.js';
import { forbiddenRequest, qualifiedOf } from '../errors.js';
import type { Lister } from '../listers.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';

type ObjectReader = (group: string, version: string, resource: string, namespace: string | undefined, name: string) => Promise<KubeObject | undefined>;

/** The label domains a node's own labels may use, in our spelling and upstream's (node agents written for upstream set theirs). */
const labelDomains = [product.domain, ...upstreamCompat.protectedGroupDomains];
/** Upstream's kubelet labels (kubelet/pkg/apis): a node agent may set these on its Node. */
const kubeletLabels = new Set(labelDomains.flatMap((d) => [
  `${d}/hostname`, `topology.${d}/zone`, `topology.${d}/region`, `failure-domain.beta.${d}/zone`, `failure-domain.beta.${d}/region`,
  `beta.${d}/instance-type`, `node.${d}/instance-type`, `${d}/os`, `${d}/arch`, `node.${d}/windows-build`, `beta.${d}/os`, `beta.${d}/arch`,
]));
const kubeletLabelNamespaces = labelDomains.flatMap((d) => [`kubelet.${d}`, `node.${d}`]);
const restrictedNamespaces = labelDomains.map((d) => `node-restriction.${d}`);

const labelNamespace = (key: string) => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inDomain = (namespace: string, domain: string) => namespace === domain || namespace.endsWith(`.${domain}`);

function isKubeletLabel(key: string): boolean {
  return kubeletLabels.has(key) || kubeletLabelNamespaces.some((d) => inDomain(labelNamespace(key), d));
}

/** Label keys added, removed or changed between two label maps, sorted. */
function modifiedLabels(now: Record<string, string> | undefined, before: Record<string, string> | undefined): string[] {
  const a = now ?? {};
  const b = before ?? {};
  const keys = new Set<string>();
  for (const k of Object.keys(a)) if (!Object.hasOwn(b, k) || a[k] !== b[k]) keys.add(k);
  for (const k of Object.keys(b)) if (!Object.hasOwn(a, k)) keys.add(k);
  return [...keys].sort();
}

/** The labels a node may not set, change or remove on its Node: node-restriction ones, and system ones that are not the node agent's. */
function forbiddenLabels(modified: readonly string[]): string[] {
  return modified.filter((key) => {
    const namespace = labelNamespace(key);
    if (restrictedNamespaces.some((d) => inDomain(namespace, d))) return true;
    return labelDomains.some((d) => inDomain(namespace, d)) && !isKubeletLabel(key);
  });
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export class NodeRestriction implements AdmissionPlugin {
  readonly name = 'NodeRestriction';

  constructor(private readonly pods: Lister, private readonly nodes: Lister, private readonly readLive?: ObjectReader) {}

  async mutate(request: AdmissionRequest): Promise<void> {
    const node = nodeIdentity(request.user);
    if (node === undefined) return;
    if (request.operation === 'CONNECT') return;
    const refuse = (why: string) => forbiddenRequest(request, why);
    if (node === '') throw refuse(`could not determine node from user ${JSON.stringify(request.user!.username)}`);
    const { group, resource } = qualifiedOf(request);
    if (group === '') {
      switch (resource) {
        case 'pods':
          switch (request.subresource ?? '') {
            case '': return this.pod(node, request);
            case 'status': return this.podStatus(node, request);
            case 'eviction': return this.eviction(node, request);
            default: throw refuse(`unexpected pod subresource ${JSON.stringify(request.subresource)}, only 'status' and 'eviction' are allowed`);
          }
        case 'nodes': return this.nodeObject(node, request);
        case 'persistentvolumeclaims':
          if (request.subresource !== 'status') throw refuse('may only update PVC status');
          return this.claimStatus(node, request);
        case 'serviceaccounts': return this.token(node, request);
      }
    } else if (group === vocabulary.coordinationGroup && resource === 'leases') {
      if (request.namespace !== vocabulary.nodeLeaseNamespace) throw refuse(`can only access leases in the ${JSON.stringify(vocabulary.nodeLeaseNamespace)} system namespace`);
      if (this.nameOf(request) !== node) throw refuse('can only access node lease with the same name as the requesting node');
    } else if (group === vocabulary.storageGroup && resource === 'csinodes') {
      if (this.nameOf(request) !== node) throw refuse('can only access CSINode with the same name as the requesting node');
    }
  }

  /** On create the name is the object's. */
  private nameOf(request: AdmissionRequest): string {
    return request.operation === 'CREATE' ? String(request.object?.metadata?.name ?? request.name) : request.name;
  }

  private async storedPod(request: AdmissionRequest, name: string): Promise<KubeObject> {
    const namespace = request.namespace ?? '';
    const pod = this.pods.get(namespace, name) ?? await this.readLive?.('', 'v1', 'pods', namespace, name);
    if (!pod) throw errors.notFound({ group: '', resource: 'pods' }, name);
    return pod;
  }

  private async pod(node: string, request: AdmissionRequest): Promise<void> {
    const refuse = (why: string) => forbiddenRequest(request, why);
    if (request.operation === 'DELETE') {
      const pod = await this.storedPod(request, request.name);
      if (pod.spec?.nodeName !== node) throw refuse(`node ${JSON.stringify(node)} can only delete pods with spec.nodeName set to itself`);
      return;
    }
    if (request.operation !== 'CREATE') throw refuse(`unexpected operation ${JSON.stringify(request.operation)}, node ${JSON.stringify(node)} can only create and delete mirror pods`);
    const pod = request.object ?? {};
    const q = JSON.stringify(node);
    if (!Object.hasOwn(pod.metadata?.annotations ?? {}, vocabulary.mirrorPodAnnotation)) {
      throw refuse(`pod does not have ${JSON.stringify(vocabulary.mirrorPodAnnotation)} annotation, node ${q} can only create mirror pods`);
    }
    if (pod.spec?.nodeName !== node) throw refuse(`node ${q} can only create pods with spec.nodeName set to itself`);
    const owners: KubeObject[] = Array.isArray(pod.metadata?.ownerReferences) ? pod.metadata.ownerReferences : [];
    if (owners.length > 1) throw refuse(`node ${q} can only create pods with a single owner reference set to itself`);
    const owner = owners[0];
    if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) throw refuse(`node ${q} can only create pods with an owner reference set to itself`);
    if (owner.controller !== true) throw refuse(`node ${q} can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true) throw refuse(`node ${q} must not set blockOwnerDeletion on an owner reference`);
    const nodeObject = this.nodes.get(undefined, node) ?? await this.readLive?.('', 'v1', 'nodes', undefined, node);
    if (!nodeObject) throw errors.notFound({ group: '', resource: 'nodes' }, node);
    if (owner.uid !== nodeObject.metadata?.uid) throw refuse(`node ${node} UID mismatch: expected ${owner.uid ?? ''} got ${nodeObject.metadata?.uid ?? ''}`);
    const refs = podReferences(pod);
    if (refs.serviceAccount) throw refuse(`node ${q} can not create pods that reference a service account`);
    if (refs.secrets.size) throw refuse(`node ${q} can not create pods that reference secrets`);
    if (refs.configMaps.size) throw refuse(`node ${q} can not create pods that reference configmaps`);
    const volumes: KubeObject[] = Array.isArray(pod.spec?.volumes) ? pod.spec.volumes : [];
    if (volumes.some((v) => (v.projected?.sources ?? []).some((s: KubeObject) => s?.clusterTrustBundle))) throw refuse(`node ${q} can not create pods that reference clustertrustbundles`);
    if (volumes.some((v) => v.persistentVolumeClaim)) throw refuse(`node ${q} can not create pods that reference persistentvolumeclaims`);
  }

  private podStatus(node: string, request: AdmissionRequest): void {
    const refuse = (why: string) => forbiddenRequest(request, why);
    if (request.operation !== 'UPDATE') throw refuse(`unexpected operation ${JSON.stringify(request.operation)}`);
    if (request.oldObject?.spec?.nodeName !== node) throw refuse(`node ${JSON.stringify(node)} can only update pod status for pods with spec.nodeName set to itself`);
    if (modifiedLabels(request.object?.metadata?.labels, request.oldObject?.metadata?.labels).length) throw refuse(`node ${JSON.stringify(node)} cannot update labels through pod status`);
  }

  private async eviction(node: string, request: AdmissionRequest): Promise<void> {
    if (request.operation !== 'CREATE') throw forbiddenRequest(request, `unexpected operation ${request.operation}`);
    const name = request.name || String(request.object?.metadata?.name ?? '');
    if (!name) throw forbiddenRequest(request, 'could not determine pod from request data');
    const pod = await this.storedPod(request, name);
    if (pod.spec?.nodeName !== node) throw forbiddenRequest(request, `node ${node} can only evict pods with spec.nodeName set to itself`);
  }

  private claimStatus(node: string, request: AdmissionRequest): void {
    if (request.operation !== 'UPDATE') throw forbiddenRequest(request, `unexpected operation ${JSON.stringify(request.operation)}`);
    // Only the capacity and the conditions of the status may change (managed fields and the resourceVersion aside).
    const comparable = (claim: KubeObject | undefined) => {
      const { resourceVersion: _rv, managedFields: _mf, ...metadata } = claim?.metadata ?? {};
      const { capacity: _c, conditions: _cs, ...status } = claim?.status ?? {};
      return { ...claim, metadata, status };
    };
    const before = comparable(request.oldObject);
    const after = comparable(request.object);
    if (!sameJson(before, after)) {
      const changed = ['metadata', 'spec', 'status'].filter((part) => !sameJson((before as KubeObject)[part], (after as KubeObject)[part]));
      throw forbiddenRequest(request, `node ${JSON.stringify(node)} is not allowed to update fields other than status.capacity and status.conditions: ${changed.join(', ')} changed`);
    }
  }

  private nodeObject(node: string, request: AdmissionRequest): void {
    const refuse = (why: string) => forbiddenRequest(request, why);
    const name = this.nameOf(request);
    const q = JSON.stringify(node);
    if (name !== node) throw refuse(`node ${q} is not allowed to modify node ${JSON.stringify(name)}`);
    // The specification's addition to upstream: a node agent never deletes its Node.
    if (request.operation === 'DELETE') throw refuse(`node ${q} is not allowed to delete nodes`);
    const object = request.object ?? {};
    if (request.operation === 'CREATE') {
      if (object.spec?.configSource) throw refuse(`node ${q} is not allowed to create pods with a non-nil configSource`);
      const forbidden = forbiddenLabels(modifiedLabels(object.metadata?.labels, undefined));
      if (forbidden.length) throw refuse(`node ${q} is not allowed to set the following labels: ${forbidden.join(', ')}`);
    } else if (request.operation === 'UPDATE') {
      const old = request.oldObject ?? {};
      if (object.spec?.configSource && !sameJson(object.spec.configSource, old.spec?.configSource)) throw refuse(`node ${q} is not allowed to update configSource to a new non-nil configSource`);
      if (!sameJson(object.spec?.taints, old.spec?.taints)) throw refuse(`node ${q} is not allowed to modify taints`);
      const forbidden = forbiddenLabels(modifiedLabels(object.metadata?.labels, old.metadata?.labels));
      if (forbidden.length) throw refuse(`is not allowed to modify labels: ${forbidden.join(', ')}`);
    }
  }

  private async token(node: string, request: AdmissionRequest): Promise<void> {
    if (request.operation !== 'CREATE' || request.subresource !== 'token') return;
    const ref = request.object?.spec?.boundObjectRef;
    if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) throw forbiddenRequest(request, 'node requested token not bound to a pod');
    if (!ref.uid) throw forbiddenRequest(request, 'node requested token with a pod binding without a uid');
    let pod: KubeObject;
    try {
      pod = await this.storedPod(request, String(ref.name));
    } catch (e) {
      if (e instanceof ApiError && e.reason === 'NotFound') throw e;
      throw forbiddenRequest(request, e instanceof Error ? e.message : String(e));
    }
    if (ref.uid !== pod.metadata?.uid) {
      throw forbiddenRequest(request, `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    if (pod.spec?.nodeName !== node) throw forbiddenRequest(request, 'node requested token bound to a pod scheduled on a different node');
  }
}
