// The disruption controller: keeps each PodDisruptionBudget's status current
// from the pods it covers, as upstream's: how many pods it counts on
// (expectedPods: the covered pods, or the replicas of their controllers when
// the budget is a percentage or a maxUnavailable), how many must stay healthy
// (desiredHealthy), how many are (currentHealthy, less the pods whose
// eviction was just allowed), and so how many evictions are allowed now.
// The eviction sub-resource reads and decrements that allowance.

import type { ApiObject, ApiClient } from '../client/types.js';
import { isConflict, isNotFound } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { deepEqual } from '../machinery/equal.js';
import { rfc3339Now } from '../machinery/time.js';
import { budgetSelects, podHealthy, scaledValue, setDisruptionAllowed, verdictFor, type DisruptionVerdict } from '../api/policy/v1/poddisruptionbudget.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

type Obj = Record<string, any>;

/** How long an allowed eviction is waited for before its pod counts again, as upstream. */
const deletionTimeoutMs = 2 * 60 * 1000;

export class DisruptionController extends BaseController {
  readonly name = 'disruption';
  private readonly queue: WorkQueue;
  private readonly budgets: InformerSubscription;
  private readonly pods: InformerSubscription;
  private readonly controllers: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue((key) => this.sync(key), { name: 'disruption', failure: 'disruption budget sync failed' });
    const budgetKey = (pdb: ApiObject) => `${pdb.metadata!.namespace}/${pdb.metadata!.name}`;
    this.budgets = this.watch(this.resolve(resources.podDisruptionBudgets), {
      onAdd: (pdb) => this.queue.add(budgetKey(pdb)), onUpdate: (_o, pdb) => this.queue.add(budgetKey(pdb)), onDelete: () => undefined,
    });
    // Any change of a pod or a controller may change the budgets of its namespace.
    const touch = (obj: ApiObject) => {
      for (const pdb of this.budgets.list()) if (pdb.metadata?.namespace === obj.metadata?.namespace) this.queue.add(budgetKey(pdb));
    };
    this.pods = this.watch(this.resolve(resources.pods), { onAdd: touch, onUpdate: (_o, pod) => touch(pod), onDelete: touch });
    this.controllers = this.watch(this.resolve(resources.replicationControllers), { onAdd: touch, onUpdate: (_o, rc) => touch(rc), onDelete: touch });
  }

  override async start(): Promise<void> {
    await this.pods.start();
    await this.controllers.start();
    await this.budgets.start();
  }

  /** Pods the budget counts on and must keep healthy; an Error when a covered pod has no controller to scale from. */
  private expectations(pdb: Obj, covered: Obj[]): { expected: number; desired: number } {
    const { minAvailable, maxUnavailable } = pdb.spec ?? {};
    if (maxUnavailable === undefined && (minAvailable === undefined || typeof minAvailable === 'number')) {
      return { expected: covered.length, desired: minAvailable ?? 0 };
    }
    // Percentages and maxUnavailable count the replicas of the pods' controllers.
    let expected = 0;
    const seen = new Set<string>();
    for (const pod of covered) {
      const owner = ((pod.metadata?.ownerReferences ?? []) as Obj[]).find((o) => o.controller === true);
      if (!owner) throw new Error(`found no controllers for pod "${pod.metadata?.name}"`);
      if (seen.has(owner.uid)) continue;
      seen.add(owner.uid);
      const rc = owner.kind === 'ReplicationController' ? this.controllers.get(pod.metadata?.namespace, owner.name) : undefined;
      if (!rc || rc.metadata?.uid !== owner.uid) throw new Error(`found no controllers for pod "${pod.metadata?.name}"`);
      expected += rc.spec?.replicas ?? 0;
    }
    const desired = maxUnavailable !== undefined ? Math.max(0, expected - scaledValue(maxUnavailable, expected)) : scaledValue(minAvailable, expected);
    return { expected, desired };
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const pdb = this.budgets.get(namespace, name);
    if (!pdb) return;
    const covered = this.pods.list().filter((pod) => budgetSelects(pdb, pod));
    const now = this.now();
    // Evictions allowed a moment ago whose pods are still there do not count as healthy yet.
    const disrupted: Record<string, string> = {};
    for (const [podName, at] of Object.entries((pdb.status?.disruptedPods ?? {}) as Record<string, string>)) {
      const pod = covered.find((p) => p.metadata?.name === podName);
      if (pod && !pod.metadata?.deletionTimestamp && now - Date.parse(at) < deletionTimeoutMs) disrupted[podName] = at;
    }
    const healthy = covered.filter((pod) => podHealthy(pod) && !Object.hasOwn(disrupted, pod.metadata!.name)).length;
    let status: Obj;
    try {
      const { expected, desired } = this.expectations(pdb, covered);
      const allowed = Math.max(0, healthy - desired);
      status = {
        observedGeneration: pdb.metadata?.generation, disruptionsAllowed: allowed, currentHealthy: healthy, desiredHealthy: desired, expectedPods: expected,
        condition: verdictFor(allowed),
      };
    } catch (e) {
      // Fail safe: no evictions until the budget can be computed.
      status = { observedGeneration: pdb.metadata?.generation, disruptionsAllowed: 0, currentHealthy: healthy, desiredHealthy: 0, expectedPods: 0, condition: ['False', 'SyncFailed', (e as Error).message] };
    }
    const verdict = status.condition as DisruptionVerdict;
    delete status.condition;
    if (Object.keys(disrupted).length) status.disruptedPods = disrupted;
    status.conditions = pdb.status?.conditions;
    setDisruptionAllowed(status, pdb.metadata?.generation, verdict, rfc3339Now(new Date(now)));
    if (deepEqual(status, pdb.status ?? {})) return;
    try {
      await this.client.update(this.budgets.type, namespace, { ...pdb, status }, 'status');
    } catch (e) {
      // Changed meanwhile (its event brings it back) or gone.
      if (isConflict(e) || isNotFound(e)) return;
      throw e;
    }
  }
}
