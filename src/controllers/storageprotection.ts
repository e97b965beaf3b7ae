// The PVC and PV protection controllers (upstream `pvc-protection` and
// `pv-protection`): a claim or volume being deleted keeps its protection
// finalizer (StorageObjectInUseProtection adds it) until nothing uses it: a
// claim while a scheduled pod that is not shut down mounts it (directly or
// as the pod's generic ephemeral volume), a volume while it is bound. Then
// the finalizer goes and the deletion completes. As upstream, a claim the
// cache shows unused is checked once more against a live list of its
// namespace's pods before it is let go, and objects made before the
// admission plugin ran get the finalizer here.

import type { ApiClient, ApiObject } from '../client/types.js';
import { isNotFound } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

type Obj = Record<string, any>;

const claimIndex = 'storageprotection/claims';

/** `namespace/claim` of each claim a pod's volumes name. */
function claimsOfPod(pod: ApiObject): string[] {
  const ns = pod.metadata?.namespace ?? '';
  const out: string[] = [];
  for (const v of (pod.spec?.volumes ?? []) as Obj[]) {
    if (typeof v?.persistentVolumeClaim?.claimName === 'string') out.push(`${ns}/${v.persistentVolumeClaim.claimName}`);
    // A generic ephemeral volume's claim is named after the pod and the volume.
    if (v?.ephemeral && typeof v.name === 'string') out.push(`${ns}/${pod.metadata?.name}-${v.name}`);
  }
  return out;
}

/** A pod its node agent is done with, or one force-deleted: it no longer holds its claims. */
function podIsShutDown(pod: ApiObject): boolean {
  return !!pod.metadata?.deletionTimestamp && pod.metadata?.deletionGracePeriodSeconds === 0;
}

/** Whether `pod` holds `claim`: only a scheduled pod does (a node agent refuses to start one on a claim being deleted). */
function podUsesClaim(pod: ApiObject, claim: ApiObject): boolean {
  if (!pod.spec?.nodeName || podIsShutDown(pod)) return false;
  return claimsOfPod(pod).includes(`${claim.metadata?.namespace}/${claim.metadata?.name}`);
}

function deletionCandidate(obj: ApiObject, finalizer: string): boolean {
  return !!obj.metadata?.deletionTimestamp && ((obj.metadata?.finalizers ?? []) as string[]).includes(finalizer);
}

function needsFinalizer(obj: ApiObject, finalizer: string): boolean {
  return !obj.metadata?.deletionTimestamp && !((obj.metadata?.finalizers ?? []) as string[]).includes(finalizer);
}

function withFinalizers(obj: ApiObject, finalizers: string[]): ApiObject {
  return { ...obj, metadata: { ...obj.metadata, finalizers } };
}

/** The update that adds or removes the finalizer; an object gone meanwhile needs nothing (a conflict is retried from the fresh cache). */
async function writeFinalizers(write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

export class PvcProtectionController extends BaseController {
  readonly name = 'pvc-protection';
  private readonly queue: WorkQueue;
  private readonly claims: InformerSubscription;
  private readonly pods: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue((key) => this.sync(key), { name: 'pvcprotection', failure: 'PVC protection sync failed' });
    const offerClaim = (claim: ApiObject) => {
      const f = vocabulary.pvcProtectionFinalizer;
      if (deletionCandidate(claim, f) || needsFinalizer(claim, f)) this.queue.add(`${claim.metadata!.namespace}/${claim.metadata!.name}`);
    };
    this.claims = this.watch(this.resolve(resources.persistentVolumeClaims), { onAdd: offerClaim, onUpdate: (_old, claim) => offerClaim(claim), onDelete: () => undefined });
    // A pod that goes, is shut down or changes its volumes may free the claims it named.
    const offerPod = (pod: ApiObject) => { for (const key of claimsOfPod(pod)) this.queue.add(key); };
    this.pods = this.watch(this.resolve(resources.pods), {
      onAdd: () => undefined,
      onUpdate: (old, pod) => { offerPod(old); offerPod(pod); },
      onDelete: offerPod,
    }, { indexers: { [claimIndex]: claimsOfPod } });
  }

  private async sync(key: string): Promise<void> {
    const slash = key.indexOf('/');
    const namespace = key.slice(0, slash);
    const name = key.slice(slash + 1);
    const claim = this.claims.get(namespace, name);
    if (!claim) return;
    const finalizer = vocabulary.pvcProtectionFinalizer;
    const finalizers = (claim.metadata?.finalizers ?? []) as string[];
    if (deletionCandidate(claim, finalizer)) {
      if (await this.inUse(claim)) return;
      await writeFinalizers(() => this.client.update(this.claims.type, namespace, withFinalizers(claim, finalizers.filter((f) => f !== finalizer))));
      this.log('removed the protection finalizer of a claim no pod uses', { namespace, name });
      return;
    }
    if (needsFinalizer(claim, finalizer)) {
      await writeFinalizers(() => this.client.update(this.claims.type, namespace, withFinalizers(claim, [...finalizers, finalizer])));
    }
  }

  private async inUse(claim: ApiObject): Promise<boolean> {
    const key = `${claim.metadata?.namespace}/${claim.metadata?.name}`;
    if (this.pods.byIndex(claimIndex, key).some((pod) => podUsesClaim(pod, claim))) return true;
    // The cache may not hold a pod created a moment ago: ask the server before letting go.
    const live = await this.client.list(this.pods.type, claim.metadata?.namespace);
    return live.items.some((pod) => podUsesClaim(pod, claim));
  }
}

export class PvProtectionController extends BaseController {
  readonly name = 'pv-protection';
  private readonly queue: WorkQueue;
  private readonly volumes: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue((key) => this.sync(key), { name: 'pvprotection', failure: 'PV protection sync failed' });
    const offer = (pv: ApiObject) => {
      const f = vocabulary.pvProtectionFinalizer;
      if (deletionCandidate(pv, f) || needsFinalizer(pv, f)) this.queue.add(pv.metadata!.name!);
    };
    this.volumes = this.watch(this.resolve(resources.persistentVolumes), { onAdd: offer, onUpdate: (_old, pv) => offer(pv), onDelete: () => undefined });
  }

  private async sync(name: string): Promise<void> {
    const pv = this.volumes.get(undefined, name);
    if (!pv) return;
    const finalizer = vocabulary.pvProtectionFinalizer;
    const finalizers = (pv.metadata?.finalizers ?? []) as string[];
    if (deletionCandidate(pv, finalizer)) {
      // A bound volume is in use; the volume controller sets it Released once its claim is gone.
      if (pv.status?.phase === 'Bound') return;
      await writeFinalizers(() => this.client.update(this.volumes.type, undefined, withFinalizers(pv, finalizers.filter((f) => f !== finalizer))));
      this.log('removed the protection finalizer of a volume no claim binds', { name });
      return;
    }
    if (needsFinalizer(pv, finalizer)) {
      await writeFinalizers(() => this.client.update(this.volumes.type, undefined, withFinalizers(pv, [...finalizers, finalizer])));
    }
  }
}
