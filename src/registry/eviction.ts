// pods/{name}/eviction: a delete of the pod that respects its disruption
// budget, as upstream: one covering budget that allows no disruption answers
// 429; otherwise the budget's allowance is taken (compare-and-swap on its
// status) and the pod deleted. Pods that are done, pending or going, and pods
// no budget covers, are deleted at once.

import { ApiError, errors } from '../machinery/errors.js';
import { rfc3339Now } from '../machinery/time.js';
import { setOwn } from '../machinery/ownkeys.js';
import type { KubeObject } from '../api/kind.js';
import { pods } from '../api/core/v1/pod.js';
import { budgetSelects, evictions, podDisruptionBudgets, podHealthy } from '../api/policy/v1/poddisruptionbudget.js';
import { decodeObject } from '../api/decode.js';
import type { Registry } from './registry.js';
import type { RestObject } from './rest.js';
import type { DeleteOptions, WriteOptions } from './store.js';

const violates = "Cannot evict pod as it would violate the pod's disruption budget.";
/** Upstream bounds the evictions a budget holds unconfirmed. */
const maxDisruptedPods = 2000;

/** As upstream, without Retry-After: clients (kubectl drain) retry on their own schedule, not after a server-given pause. */
function tooManyRequests(cause: string): ApiError {
  return new ApiError(429, 'TooManyRequests', violates, { causes: [{ reason: 'DisruptionBudget', message: cause }] });
}

const success = (): KubeObject => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });

export function evictionRest(registry: Registry): RestObject | undefined {
  const podStore = registry.store('', 'v1', 'pods');
  const budgets = registry.store(podDisruptionBudgets.group, podDisruptionBudgets.version, podDisruptionBudgets.plural);
  if (!podStore || !budgets) return undefined;
  return {
    describe: { group: '', version: 'v1', resource: 'pods', subresource: 'eviction', namespaced: true, kind: evictions, parentKind: pods, deleteAnswersObject: false, stored: false },
    create: async (path, body, opts) => {
      const eviction = decodeObject(evictions, body, opts);
      if (eviction.metadata?.name !== path.name) throw errors.badRequest('name in URL does not match name in Eviction object');
      const deleteOptions: DeleteOptions = { ...(eviction.deleteOptions ?? {}) };
      const dryRun = opts.dryRun || (eviction.deleteOptions?.dryRun ?? []).includes('All');
      const writeOpts: WriteOptions = { ...opts, dryRun };
      const namespace = path.namespace;
      const name = path.name!;
      const pod = await podStore.get(namespace, name);
      const remove = async () => {
        await podStore.delete(namespace, name, deleteOptions, writeOpts);
        return success();
      };
      // Done, not yet running, or already going: nothing a budget protects.
      const phase = pod.status?.phase;
      if (phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || pod.metadata?.deletionTimestamp) return remove();
      const covering = ((await budgets.list(namespace, {})).items as KubeObject[]).filter((b) => budgetSelects(b, pod));
      if (covering.length > 1) throw errors.internal('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
      const budget = covering[0];
      if (!budget) return remove();
      if (!podHealthy(pod)) {
        const status = budget.status ?? {};
        if (budget.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return remove();
        if (status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0) return remove();
      }
      await budgets.updateWith(namespace, budget.metadata!.name, (live) => {
        const status = (live.status ??= {});
        if ((status.observedGeneration ?? 0) < (live.metadata?.generation ?? 0)) throw tooManyRequests(`The disruption budget ${live.metadata!.name} is still being processed by the server.`);
        if (status.disruptionsAllowed < 0) throw errors.forbidden({ group: '', resource: 'pods' }, name, 'pdb disruptions allowed is negative', 'Cannot evict pod as it would violate the pod\'s disruption budget: ');
        if (Object.keys(status.disruptedPods ?? {}).length > maxDisruptedPods) {
          throw errors.forbidden({ group: '', resource: 'pods' }, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
        }
        if (!(status.disruptionsAllowed > 0)) {
          throw tooManyRequests(`The disruption budget ${live.metadata!.name} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`);
        }
        status.disruptionsAllowed -= 1;
        status.disruptedPods ??= {};
        setOwn(status.disruptedPods, name, rfc3339Now());
        return live;
      }, { ...writeOpts, warnings: [] }, { subresource: 'status' });
      return remove();
    },
  };
}
