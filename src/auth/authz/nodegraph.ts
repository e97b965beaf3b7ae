// Which objects a node agent may read: those the pods bound to its node use
// (node ← pod ← secret, configmap, claim, service account; node ← pod ← claim
// ← volume ← secret) and the volume attachments naming it, as upstream's
// node authorizer graph. Upstream walks a graph per question; here every
// object keeps, per node, how many pods on that node lead to it, so a
// question is a few map reads whatever the number of pods (a secret shared
// by 30,000 pods is no slower than one used by one). Informers feed it; it
// never reads storage.

import type { KubeObject } from '../../api/kind.js';
import { podReferences } from '../../machinery/podreferences.js';

export type NodeReachableType = 'pod' | 'secret' | 'configmap' | 'persistentvolumeclaim' | 'persistentvolume' | 'serviceaccount' | 'volumeattachment';

type Ref = string;
const ref = (type: NodeReachableType, namespace: string, name: string): Ref => `${type}/${namespace}/${name}`;

type Obj = Record<string, any>;
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The secrets a volume names, each with its namespace (a volume is cluster-scoped; its references say where). */
function volumeSecrets(pv: KubeObject): Ref[] {
  const spec: Obj = pv.spec ?? {};
  const claimNamespace = text(spec.claimRef?.namespace) ?? 'default';
  const out: Ref[] = [];
  const add = (name: unknown, namespace: unknown) => { const n = text(name); if (n) out.push(ref('secret', text(namespace) ?? claimNamespace, n)); };
  add(spec.azureFile?.secretName, spec.azureFile?.secretNamespace);
  for (const source of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) add(spec[source]?.secretRef?.name, spec[source]?.secretRef?.namespace);
  for (const field of ['controllerPublishSecretRef', 'nodeStageSecretRef', 'nodePublishSecretRef', 'controllerExpandSecretRef', 'nodeExpandSecretRef']) {
    add(spec.csi?.[field]?.name, spec.csi?.[field]?.namespace);
  }
  return out;
}

/** Counts per key, dropping a key whose count falls to zero. */
class CountedSet<K> {
  private readonly counts = new Map<K, number>();
  add(key: K): void { this.counts.set(key, (this.counts.get(key) ?? 0) + 1); }
  remove(key: K): void {
    const n = this.counts.get(key) ?? 0;
    if (n <= 1) this.counts.delete(key);
    else this.counts.set(key, n - 1);
  }
  has(key: K): boolean { return this.counts.has(key); }
  get size(): number { return this.counts.size; }
}

interface PodEntry { node: string; refs: Ref[] }
interface VolumeEntry { claim?: Ref; secrets: Ref[] }

export class NodeGraph {
  private readonly pods = new Map<string, PodEntry>();
  /** object → the nodes whose pods lead to it (counted: two pods on one node, one removed, still leads). */
  private readonly reach = new Map<Ref, CountedSet<string>>();
  private readonly volumes = new Map<string, VolumeEntry>();
  /** claim → the volumes bound to it; secret → the volumes naming it. */
  private readonly volumesByClaim = new Map<Ref, Set<string>>();
  private readonly volumesBySecret = new Map<Ref, Set<string>>();
  private readonly attachments = new Map<string, string>();
  /** The nodes some pod or attachment names (upstream: the node's vertex exists). */
  private readonly nodes = new CountedSet<string>();

  /** A pod added or changed; a pod not bound to a node leads nowhere, as upstream. */
  setPod(pod: KubeObject): void {
    const namespace = String(pod.metadata?.namespace ?? '');
    const name = String(pod.metadata?.name ?? '');
    this.removePod(namespace, name);
    const node = text(pod.spec?.nodeName);
    if (!node) return;
    const r = podReferences(pod);
    const refs: Ref[] = [ref('pod', namespace, name)];
    for (const s of r.secrets) refs.push(ref('secret', namespace, s));
    for (const c of r.configMaps) refs.push(ref('configmap', namespace, c));
    for (const c of r.claims) refs.push(ref('persistentvolumeclaim', namespace, c));
    if (r.serviceAccount) refs.push(ref('serviceaccount', namespace, r.serviceAccount));
    for (const key of refs) {
      let nodes = this.reach.get(key);
      if (!nodes) this.reach.set(key, nodes = new CountedSet());
      nodes.add(node);
    }
    this.pods.set(`${namespace}/${name}`, { node, refs });
    this.nodes.add(node);
  }

  removePod(namespace: string, name: string): void {
    const entry = this.pods.get(`${namespace}/${name}`);
    if (!entry) return;
    this.pods.delete(`${namespace}/${name}`);
    this.nodes.remove(entry.node);
    for (const key of entry.refs) {
      const nodes = this.reach.get(key);
      nodes?.remove(entry.node);
      if (nodes && nodes.size === 0) this.reach.delete(key);
    }
  }

  setVolume(pv: KubeObject): void {
    const name = String(pv.metadata?.name ?? '');
    this.removeVolume(name);
    const claimName = text(pv.spec?.claimRef?.name);
    const claim = claimName ? ref('persistentvolumeclaim', text(pv.spec?.claimRef?.namespace) ?? '', claimName) : undefined;
    const entry: VolumeEntry = { claim, secrets: volumeSecrets(pv) };
    this.volumes.set(name, entry);
    if (claim) addTo(this.volumesByClaim, claim, name);
    for (const secret of entry.secrets) addTo(this.volumesBySecret, secret, name);
  }

  removeVolume(name: string): void {
    const entry = this.volumes.get(name);
    if (!entry) return;
    this.volumes.delete(name);
    if (entry.claim) removeFrom(this.volumesByClaim, entry.claim, name);
    for (const secret of entry.secrets) removeFrom(this.volumesBySecret, secret, name);
  }

  setAttachment(attachment: KubeObject): void {
    const name = String(attachment.metadata?.name ?? '');
    this.removeAttachment(name);
    const node = text(attachment.spec?.nodeName);
    if (!node) return;
    this.attachments.set(name, node);
    this.nodes.add(node);
  }

  removeAttachment(name: string): void {
    const node = this.attachments.get(name);
    if (node === undefined) return;
    this.attachments.delete(name);
    this.nodes.remove(node);
  }

  /** Whether some pod is bound to `node` (upstream: the node is a vertex of the graph). */
  knowsNode(node: string): boolean {
    return this.nodes.has(node);
  }

  /** Whether `node` leads to the object: a pod bound to it uses it, directly or through a claim and its volume. */
  relates(node: string, type: NodeReachableType, namespace: string, name: string): boolean {
    switch (type) {
      case 'volumeattachment':
        return this.attachments.get(name) === node;
      case 'persistentvolume': {
        const claim = this.volumes.get(name)?.claim;
        return claim !== undefined && (this.reach.get(claim)?.has(node) ?? false);
      }
      case 'secret':
        if (this.reach.get(ref(type, namespace, name))?.has(node)) return true;
        for (const volume of this.volumesBySecret.get(ref(type, namespace, name)) ?? []) {
          if (this.relates(node, 'persistentvolume', '', volume)) return true;
        }
        return false;
      default:
        return this.reach.get(ref(type, namespace, name))?.has(node) ?? false;
    }
  }
}

function addTo(index: Map<Ref, Set<string>>, key: Ref, value: string): void {
  let values = index.get(key);
  if (!values) index.set(key, values = new Set());
  values.add(value);
}

function removeFrom(index: Map<Ref, Set<string>>, key: Ref, value: string): void {
  const values = index.get(key);
  values?.delete(value);
  if (values?.size === 0) index.delete(key);
}
