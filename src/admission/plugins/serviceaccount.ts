// ServiceAccount: a new pod runs as an account of its namespace. The pod
// without one gets `default`; an account that does not exist refuses the pod
// (403, upstream's words); unless the pod or else the account sets
// `automountServiceAccountToken: false`, every container and init container
// mounts a projected volume (a bound token of 3607 s, the root CA bundle and
// the namespace) read-only at the account directory; a pod without
// `imagePullSecrets` takes the account's. Mirror pods are not changed (the
// node agent would delete a pod that no longer matches its manifest) and may
// not reference accounts, secrets or token projections. An account
// annotated to enforce mountable secrets (upstream's deprecated
// `enforce-mountable-secrets`) limits its pods, and the ephemeral containers
// added to them later, to the secrets and pull secrets it lists. As upstream, the
// account comes from the informer's cache, with a live read on a miss, and
// the `default` account, which the service account controller creates just
// after its namespace, is asked for again a few times before the pod is refused.

import type { KubeObject } from '../../api/kind.js';
import { errors } from '../../machinery/errors.js';
import { andThen, type MaybePromise } from '../../machinery/maybe-async.js';
import { generateName } from '../../machinery/objectmeta.js';
import { upstreamCompat, vocabulary } from '../../machinery/vocabulary.js';
import { ownValue } from '../../machinery/ownkeys.js';
import type { Lister } from '../listers.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { forbiddenRequest } from '../errors.js';
import { isMirrorPod, pause, podContainers, podOf } from './podutil.js';

type Obj = Record<string, any>;
type LiveGet = (namespace: string, name: string) => Promise<KubeObject | undefined>;

export const defaultServiceAccountName = 'default';
/** Upstream's bound token lifetime (an hour and 7 s: the extra seconds mark tokens the node agent refreshes early). */
export const boundTokenExpirationSeconds = 3607;
/** How often the `default` account is looked up live before the pod is refused, and the pause between looks. */
const defaultAccountAttempts = 10;
const retryPauseMs = () => 100 + Math.floor(Math.random() * 100);

/** The projected volume that gives a container its account's identity. */
export function tokenVolume(name: string): Obj {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: boundTokenExpirationSeconds, path: 'token' } },
        { configMap: { name: vocabulary.rootCaConfigMap, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 0o644,
    },
  };
}

/** The pod's own choice wins, then the account's; mounting is the default. */
function shouldAutomount(account: KubeObject, pod: KubeObject): boolean {
  if (typeof pod.spec?.automountServiceAccountToken === 'boolean') return pod.spec.automountServiceAccountToken;
  if (typeof account.automountServiceAccountToken === 'boolean') return account.automountServiceAccountToken;
  return true;
}

function mountToken(pod: KubeObject): void {
  const spec = pod.spec as Obj;
  const volumes: Obj[] = Array.isArray(spec.volumes) ? spec.volumes : [];
  let existing: Obj | undefined;
  for (const v of volumes) {
    if (typeof v?.name === 'string' && v.name.startsWith(vocabulary.apiAccessVolumePrefix)) {
      existing = v;
      break;
    }
  }
  const volumeName: string = existing?.name ?? generateName(vocabulary.apiAccessVolumePrefix);
  const mountPath = vocabulary.serviceAccountMountPath;
  let needed = false;
  // Containers, then init containers, read in place (every pod passes here).
  for (const containers of [spec.containers, spec.initContainers]) {
    if (!Array.isArray(containers)) continue;
    for (const container of containers as Obj[]) {
      if (!container || typeof container !== 'object') continue;
      const mounts: Obj[] = Array.isArray(container.volumeMounts) ? container.volumeMounts : [];
      // A container that mounts something at the account directory keeps its own.
      if (mounts.some((m) => m?.mountPath === mountPath)) continue;
      container.volumeMounts = [...mounts, { name: volumeName, readOnly: true, mountPath }];
      needed = true;
    }
  }
  if (needed && !existing) spec.volumes = [...volumes, tokenVolume(volumeName)];
}

/** Whether the pod names a secret anywhere (volumes, projections, env, pull secrets). */
function referencesSecrets(pod: KubeObject): boolean {
  const spec = pod.spec as Obj;
  if (Array.isArray(spec.imagePullSecrets) && spec.imagePullSecrets.length > 0) return true;
  for (const v of (spec.volumes ?? []) as Obj[]) {
    if (v?.secret || v?.projected?.sources?.some?.((s: Obj) => s?.secret)) return true;
    for (const kind of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos', 'csi']) {
      const source = v?.[kind];
      if (source?.secretRef || source?.secretName || source?.nodePublishSecretRef) return true;
    }
  }
  const all = [...podContainers(pod).map((c) => c.container), ...((spec.ephemeralContainers ?? []) as Obj[])];
  return all.some((c) => ((c?.env ?? []) as Obj[]).some((e) => e?.valueFrom?.secretKeyRef) || ((c?.envFrom ?? []) as Obj[]).some((e) => e?.secretRef));
}

/** Whether the account limits its pods to the secrets it lists: our annotation, else upstream's, read as Go's ParseBool (an unparsable value is false). */
function enforcesMountableSecrets(account: KubeObject): boolean {
  const annotations = account.metadata?.annotations as Obj | undefined;
  if (!annotations) return false;
  for (const key of [vocabulary.enforceMountableSecretsAnnotation, upstreamCompat.enforceMountableSecretsAnnotation]) {
    const value = ownValue(annotations, key);
    if (value !== undefined) return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(String(value));
  }
  return false;
}

function namesOf(list: unknown): Set<string> {
  return new Set(Array.isArray(list) ? list.map((ref: Obj) => String(ref?.name ?? '')) : []);
}

type ContainerWhat = 'init container' | 'container' | 'ephemeral container';

/** The first env or envFrom secret of `containers` the account does not list, in upstream's words. */
function containerSecretOutsideAccount(what: ContainerWhat, containers: unknown, mountable: Set<string>, account: string): string | undefined {
  for (const c of (Array.isArray(containers) ? containers : []) as Obj[]) {
    for (const env of (Array.isArray(c?.env) ? c.env : []) as Obj[]) {
      const ref = env?.valueFrom?.secretKeyRef;
      if (ref && !mountable.has(String(ref.name ?? ''))) {
        return `${what} ${c.name} with envVar ${env.name} referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${account} does not reference that secret`;
      }
    }
    for (const from of (Array.isArray(c?.envFrom) ? c.envFrom : []) as Obj[]) {
      const ref = from?.secretRef;
      if (ref && !mountable.has(String(ref.name ?? ''))) {
        return `${what} ${c.name} with envFrom referencing secret.secretName="${ref.name ?? ''}" is not allowed because service account ${account} does not reference that secret`;
      }
    }
  }
  return undefined;
}

/** The first secret a new pod uses that the account does not list (secret volumes, env of init containers then containers, pull secrets), as upstream checks them. */
function secretOutsideAccount(account: KubeObject, pod: KubeObject): string | undefined {
  const name = account.metadata?.name ?? '';
  const spec = (pod.spec ?? {}) as Obj;
  const mountable = namesOf(account.secrets);
  for (const v of (Array.isArray(spec.volumes) ? spec.volumes : []) as Obj[]) {
    if (!v?.secret) continue;
    const secretName = String(v.secret.secretName ?? '');
    if (!mountable.has(secretName)) return `volume with secret.secretName="${secretName}" is not allowed because service account ${name} does not reference that secret`;
  }
  const fromContainers = containerSecretOutsideAccount('init container', spec.initContainers, mountable, name)
    ?? containerSecretOutsideAccount('container', spec.containers, mountable, name);
  if (fromContainers) return fromContainers;
  const pullable = namesOf(account.imagePullSecrets);
  const pulls = (Array.isArray(spec.imagePullSecrets) ? spec.imagePullSecrets : []) as Obj[];
  for (const [i, ref] of pulls.entries()) {
    const pullName = String(ref?.name ?? '');
    if (!pullable.has(pullName)) return `imagePullSecrets[${i}].name="${pullName}" is not allowed because service account ${name} does not reference that imagePullSecret`;
  }
  return undefined;
}

export class ServiceAccount implements AdmissionPlugin {
  readonly name = 'ServiceAccount';

  constructor(private readonly accounts: Lister, private readonly liveGet: LiveGet) {}

  // Both phases answer without a promise when the account is in the cache (nearly always).
  mutate(r: AdmissionRequest): MaybePromise<void> {
    const pod = podOf(r);
    if (!pod || r.operation !== 'CREATE') return;
    if (isMirrorPod(pod)) return this.validate(r);
    const spec = (pod.spec ??= {}) as Obj;
    if (!spec.serviceAccountName) {
      spec.serviceAccountName = defaultServiceAccountName;
      // The deprecated alias carries the same value, as upstream's v1 conversion writes it.
      spec.serviceAccount = defaultServiceAccountName;
    }
    return andThen(this.account(r, spec.serviceAccountName), (account) => {
      if (shouldAutomount(account, pod)) mountToken(pod);
      const fromAccount = account.imagePullSecrets;
      if ((!Array.isArray(spec.imagePullSecrets) || spec.imagePullSecrets.length === 0) && Array.isArray(fromAccount) && fromAccount.length) {
        spec.imagePullSecrets = (fromAccount as Obj[]).map((s) => ({ name: s?.name }));
      }
    });
  }

  validate(r: AdmissionRequest): MaybePromise<void> {
    const pod = podOf(r, ['ephemeralcontainers']);
    if (!pod) return;
    const spec = (pod.spec ?? {}) as Obj;
    if (r.operation === 'UPDATE' && r.subresource === 'ephemeralcontainers') return this.validateEphemeral(r, spec);
    if (r.operation !== 'CREATE' || r.subresource) return;
    if (isMirrorPod(pod)) {
      if (spec.serviceAccountName) throw forbiddenRequest(r, 'a mirror pod may not reference service accounts');
      if (referencesSecrets(pod)) throw forbiddenRequest(r, 'a mirror pod may not reference secrets');
      if (((spec.volumes ?? []) as Obj[]).some((v) => v?.projected?.sources?.some?.((s: Obj) => s?.serviceAccountToken))) {
        throw forbiddenRequest(r, 'a mirror pod may not use ServiceAccountToken volume projections');
      }
      return;
    }
    if (!spec.serviceAccountName) throw forbiddenRequest(r, `no service account specified for pod ${r.namespace}/${r.name}`);
    return andThen(this.account(r, spec.serviceAccountName), (account) => {
      const outside = enforcesMountableSecrets(account) ? secretOutsideAccount(account, pod) : undefined;
      if (outside) throw forbiddenRequest(r, outside);
    });
  }

  /** Ephemeral containers added to a running pod may use only the secrets an enforcing account lists. */
  private validateEphemeral(r: AdmissionRequest, spec: Obj): MaybePromise<void> {
    if (!spec.serviceAccountName) throw forbiddenRequest(r, `no service account specified for pod ${r.namespace}/${r.name}`);
    return andThen(this.account(r, spec.serviceAccountName), (account) => {
      if (!enforcesMountableSecrets(account)) return;
      const outside = containerSecretOutsideAccount('ephemeral container', spec.ephemeralContainers, namesOf(account.secrets), account.metadata?.name ?? '');
      if (outside) throw forbiddenRequest(r, outside);
    });
  }

  /** The account from the cache, else live (a few times for `default`); refuses the pod when there is none. */
  private account(r: AdmissionRequest, name: string): MaybePromise<KubeObject> {
    const cached = this.accounts.get(r.namespace ?? '', name);
    return cached ?? this.liveAccount(r, name);
  }

  private async liveAccount(r: AdmissionRequest, name: string): Promise<KubeObject> {
    const namespace = r.namespace ?? '';
    const attempts = name === defaultServiceAccountName ? defaultAccountAttempts : 1;
    const pauseMs = retryPauseMs();
    for (let i = 0; i < attempts; i++) {
      if (i > 0) await pause(pauseMs);
      let live: KubeObject | undefined;
      try {
        live = await this.liveGet(namespace, name);
      } catch (e) {
        throw forbiddenRequest(r, `error looking up service account ${namespace}/${name}: ${(e as Error).message}`);
      }
      if (live) return live;
    }
    const notFound = errors.notFound({ group: '', resource: 'serviceaccount' }, name);
    throw forbiddenRequest(r, `error looking up service account ${namespace}/${name}: ${notFound.message}`);
  }
}
