// The objects a pod names by reference: the secrets, config maps, volume
// claims and service account it needs to run, as upstream's pod visitors
// find them (VisitPodSecretNames, VisitPodConfigmapNames). The Node
// authorizer lets a node agent read what its pods name; NodeRestriction lets
// it create only mirror pods that name nothing.

type Obj = Record<string, any>;
const list = (value: unknown): Obj[] => (Array.isArray(value) ? value.filter((v): v is Obj => typeof v === 'object' && v !== null) : []);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** What one pod leads to, by kind of object (upstream's VisitPodSecretNames, VisitPodConfigmapNames and the claim and account references). */
export interface PodReferences {
  secrets: Set<string>;
  configMaps: Set<string>;
  claims: Set<string>;
  serviceAccount?: string;
}

/** Every secret, config map, claim and service account a pod names, in its spec and every container's (init and ephemeral too). */
export function podReferences(pod: Obj): PodReferences {
  const spec: Obj = pod.spec ?? {};
  const refs: PodReferences = { secrets: new Set(), configMaps: new Set(), claims: new Set() };
  const secret = (name: unknown) => { const n = text(name); if (n) refs.secrets.add(n); };
  const configMap = (name: unknown) => { const n = text(name); if (n) refs.configMaps.add(n); };
  for (const s of list(spec.imagePullSecrets)) secret(s.name);
  for (const c of [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)]) {
    for (const from of list(c.envFrom)) { secret(from.secretRef?.name); configMap(from.configMapRef?.name); }
    for (const env of list(c.env)) { secret(env.valueFrom?.secretKeyRef?.name); configMap(env.valueFrom?.configMapKeyRef?.name); }
  }
  for (const v of list(spec.volumes)) {
    secret(v.secret?.secretName);
    secret(v.azureFile?.secretName);
    for (const source of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos']) secret(v[source]?.secretRef?.name);
    secret(v.csi?.nodePublishSecretRef?.name);
    configMap(v.configMap?.name);
    for (const source of list(v.projected?.sources)) { secret(source.secret?.name); configMap(source.configMap?.name); }
    const claim = text(v.persistentVolumeClaim?.claimName);
    if (claim) refs.claims.add(claim);
    // A generic ephemeral volume's claim is named after the pod and the volume.
    if (v.ephemeral && text(pod.metadata?.name) && text(v.name)) refs.claims.add(`${pod.metadata!.name}-${v.name}`);
  }
  refs.serviceAccount = text(spec.serviceAccountName);
  return refs;
}
