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
import { budgetSelects, evictions, podDisruptionBudgets, podHealthy, setDisruptionAllowed, verdictFor } from '../api/policy/v1/poddisruptionbudget.js';
import { decodeObject } from '../api/decode.js';
import type { Registry } from './registry.js';
import { answeredAs, type RestDescription, type RestObject } from './rest.js';
import type { DeleteOptions, RequestScope, ResourceStore, WriteOptions } from './store.js';
import { decodeOptions } from './writeoptions.js';

const violates = "Cannot evict pod as it would violate the pod's disruption budget.";
/** Upstream bounds the evictions a budget holds unconfirmed. */
const maxDisruptedPods = 2000;

/**
 * The budget refuses for now. As upstream, a budget the disruption controller
 * has not caught up with asks the client to come back in 10 s; one that
 * allows no disruption names no time.
 */
function tooManyRequests(cause: string, retryAfterSeconds = 0): ApiError {
  const retry = retryAfterSeconds > 0 ? { retryAfterSeconds } : {};
  return new ApiError(429, 'TooManyRequests', violates, { causes: [{ reason: 'DisruptionBudget', message: cause }], ...retry },
    retryAfterSeconds > 0 ? { 'Retry-After': String(retryAfterSeconds) } : {});
}

const success = (): KubeObject => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });

export function evictionRest(registry: Registry): RestObject | undefined {
  const podStore = registry.store('', 'v1', 'pods');
  const budgets = registry.store(podDisruptionBudgets.group, podDisruptionBudgets.version, podDisruptionBudgets.plural);
  if (!podStore || !budgets) return undefined;
  const describe: RestDescription = { group: '', version: 'v1', resource: 'pods', subresource: 'eviction', namespaced: true, kind: evictions, parentKind: pods, deleteAnswersObject: false, stored: false };
  return {
    describe,
    create: async (path, body, opts, scope) => {
      const sent = decodeObject(evictions, body.value, decodeOptions(body, opts, scope));
      if (sent.metadata?.name !== path.name) throw errors.badRequest('name in URL does not match name in Eviction object');
      const eviction = await podStore.admitAnswered(answeredAs(describe), path.name!, path.namespace, sent, opts, scope);
      const dryRun = opts.dryRun || (eviction.deleteOptions?.dryRun ?? []).includes('All');
      const deleteOptions: DeleteOptions = { ...(eviction.deleteOptions ?? {}), dryRun };
      const writeOpts: WriteOptions = { ...opts, dryRun };
      // The writes the eviction makes were admitted with it; their own warnings are not the client's.
      const writeScope: RequestScope = { ...scope, admitted: true };
      const quiet: RequestScope = { ...writeScope, warnings: [] };
      const namespace = path.namespace;
      const name = path.name!;
      const pod = await podStore.get(namespace, name);
      const phase = pod.status?.phase;
      const finished = phase === 'Succeeded' || phase === 'Failed';
      // Finished pods go without a word; any other says why it goes (as upstream).
      const remove = async () => {
        const options = dryRun || finished ? deleteOptions : await markDisruptionTarget(podStore, namespace, name, deleteOptions, writeOpts, quiet);
        await podStore.delete(namespace, name, options, writeScope);
        return success();
      };
      // Done, not yet running, or already going: nothing a budget protects.
      if (finished || phase === 'Pending' || pod.metadata?.deletionTimestamp) return remove();
      const covering = ((await budgets.list(namespace, {})).items as KubeObject[]).filter((b) => budgetSelects(b, pod));
      // Upstream answers this with a failed Status of its own: code 500, no reason, the message as is.
      if (covering.length > 1) throw new ApiError(500, '', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
      const budget = covering[0];
      if (!budget) return remove();
      if (!podHealthy(pod)) {
        const status = budget.status ?? {};
        if (budget.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow') return remove();
        if (status.currentHealthy >= status.desiredHealthy && status.desiredHealthy > 0) return remove();
      }
      await budgets.updateWith(namespace, budget.metadata!.name, (live) => {
        const status = (live.status ??= {});
        if ((status.observedGeneration ?? 0) < (live.metadata?.generation ?? 0)) throw tooManyRequests(`The disruption budget ${live.metadata!.name} is still being processed by the server.`, 10);
        // Upstream names the budget, by its resource's singular.
        const budget = { group: podDisruptionBudgets.group, resource: 'poddisruptionbudget' };
        if (status.disruptionsAllowed < 0) throw errors.forbidden(budget, live.metadata!.name, 'pdb disruptions allowed is negative');
        if (Object.keys(status.disruptedPods ?? {}).length > maxDisruptedPods) {
          throw errors.forbidden(budget, live.metadata!.name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
        }
        if (!(status.disruptionsAllowed > 0)) {
          throw tooManyRequests(`The disruption budget ${live.metadata!.name} needs ${status.desiredHealthy ?? 0} healthy pods and has ${status.currentHealthy ?? 0} currently`);
        }
        status.disruptionsAllowed -= 1;
        if (status.disruptionsAllowed === 0) setDisruptionAllowed(status, status.observedGeneration, verdictFor(0), rfc3339Now());
        status.disruptedPods ??= {};
        setOwn(status.disruptedPods, name, rfc3339Now());
        return live;
      }, writeOpts, quiet, { subresource: 'status' });
      return remove();
    },
  };
}

/**
 * Before the delete, the pod says why it goes, as upstream's eviction does
 * (PodDisruptionConditions): a DisruptionTarget condition written through
 * status, on the pod the preconditions name. Answers the delete's options,
 * its resourceVersion precondition moved to the version this write made.
 */
async function markDisruptionTarget(podStore: ResourceStore, namespace: string | undefined, name: string, options: DeleteOptions, opts: WriteOptions, scope: RequestScope): Promise<DeleteOptions> {
  const marked = await podStore.updateWith(namespace, name, (live) => {
    const { uid, resourceVersion } = options.preconditions ?? {};
    const precondition = (what: string) => errors.conflict({ group: '', resource: 'Pod' }, name, `${what}. The object might have been ${what.startsWith('the UID') ? 'deleted and then recreated' : 'modified'}`);
    if (uid && uid !== live.metadata?.uid) throw precondition(`the UID in the precondition (${uid}) does not match the UID in record (${live.metadata?.uid})`);
    if (resourceVersion && resourceVersion !== live.metadata?.resourceVersion) {
      throw precondition(`the ResourceVersion in the precondition (${resourceVersion}) does not match the ResourceVersion in record (${live.metadata?.resourceVersion})`);
    }
    const status = (live.status ??= {});
    const conditions: Record<string, any>[] = status.conditions ?? [];
    const previous = conditions.find((c) => c.type === 'DisruptionTarget');
    const condition = { type: 'DisruptionTarget', status: 'True', lastProbeTime: null, lastTransitionTime: previous?.status === 'True' ? previous.lastTransitionTime : rfc3339Now(), reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting' };
    status.conditions = previous ? conditions.map((c) => (c === previous ? condition : c)) : [...conditions, condition];
    return live;
  }, opts, scope, { subresource: 'status' });
  if (!options.preconditions?.resourceVersion) return options;
  return { ...options, preconditions: { ...options.preconditions, resourceVersion: marked.metadata!.resourceVersion } };
}
