// The TTL-after-finished controller (upstream `ttl-after-finished`): deletes
// a Job `spec.ttlSecondsAfterFinished` seconds after it finished, the time
// its Complete or Failed condition turned True. A Job not yet due comes back
// on the queue when it will be. As upstream, the Job is read again from the
// server before it is deleted (its TTL may have changed), and deleted in the
// foreground, guarded by its uid, so its pods go before it does.

import type { ApiClient, ApiObject } from '../client/types.js';
import { isNotFound, isConflict } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

type Obj = Record<string, any>;

/** Whether the controller looks after the job at all: it has a TTL and has finished. */
export function needsCleanup(job: ApiObject): boolean {
  return job.spec?.ttlSecondsAfterFinished !== undefined && finishedAt(job) !== undefined;
}

/** When the job finished (its True Complete or Failed condition's transition), or undefined. */
export function finishedAt(job: ApiObject): number | undefined {
  const done = ((job.status?.conditions ?? []) as Obj[]).find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
  if (!done) return undefined;
  const at = Date.parse(String(done.lastTransitionTime ?? ''));
  return Number.isNaN(at) ? undefined : at;
}

/** Milliseconds until the job expires at `now` (≤ 0: due), or undefined when it is not the controller's to delete. */
export function timeLeft(job: ApiObject, now: number): number | undefined {
  if (job.metadata?.deletionTimestamp || job.spec?.ttlSecondsAfterFinished === undefined) return undefined;
  const finished = finishedAt(job);
  if (finished === undefined) return undefined;
  return finished + job.spec.ttlSecondsAfterFinished * 1000 - now;
}

export class TtlAfterFinishedController extends BaseController {
  readonly name = 'ttl-after-finished';
  private readonly queue: WorkQueue;
  private readonly jobs: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue((key) => this.sync(key), { name: 'ttl_jobs_to_delete', failure: 'deleting a finished job failed' });
    const offer = (job: ApiObject) => {
      if (!job.metadata?.deletionTimestamp && needsCleanup(job)) this.queue.add(`${job.metadata!.namespace}/${job.metadata!.name}`);
    };
    this.jobs = this.watch(this.resolve(resources.jobs), { onAdd: offer, onUpdate: (_old, job) => offer(job), onDelete: () => undefined });
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const cached = this.jobs.get(namespace, name);
    if (!cached) return;
    const left = timeLeft(cached, this.now());
    if (left === undefined) return;
    if (left > 0) {
      this.queue.addAfter(key, left);
      return;
    }
    // The cache may be behind: judge the job as the server has it now.
    const fresh = await this.client.get(this.jobs.type, namespace, name);
    if (!fresh) return;
    const freshLeft = timeLeft(fresh, this.now());
    if (freshLeft === undefined) return;
    if (freshLeft > 0) {
      this.queue.addAfter(key, freshLeft);
      return;
    }
    try {
      await this.client.delete(this.jobs.type, namespace, name, { propagationPolicy: 'Foreground', preconditions: { uid: fresh.metadata?.uid } });
      this.log('deleted a finished job whose TTL expired', { namespace, name });
    } catch (e) {
      // Gone already, or replaced by another job of the same name.
      if (isNotFound(e) || isConflict(e)) return;
      throw e;
    }
  }
}
