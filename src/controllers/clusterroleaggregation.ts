// The ClusterRole aggregation controller: a ClusterRole with an
// aggregationRule gets as its rules the union of the rules of every other
// ClusterRole its selectors match (by name order, each rule once), kept up to
// date as those roles and their labels change, as upstream's.

import type { ApiClient, ApiObject, ResourceType } from '../client/types.js';
import { ApiCallError } from '../client/types.js';
import type { InformerFactory, InformerSubscription } from '../client/informer.js';
import { WorkQueue } from '../client/workqueue.js';
import { deepEqual } from '../machinery/equal.js';
import { labelSelectorOf } from '../machinery/selectors.js';
import { vocabulary } from '../machinery/vocabulary.js';
import type { Controller } from './controller.js';

const hasAggregationRule = (role: ApiObject) => role.aggregationRule !== undefined && role.aggregationRule !== null;

/** The rules `role` aggregates from `all` ClusterRoles. */
export function aggregatedRules(role: ApiObject, all: readonly ApiObject[]): unknown[] {
  const rules: unknown[] = [];
  const name = (r: ApiObject) => String(r.metadata?.name);
  const byName = [...all].sort((a, b) => (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0));
  for (const selector of role.aggregationRule?.clusterRoleSelectors ?? []) {
    let matcher;
    try {
      matcher = labelSelectorOf(selector);
    } catch {
      continue; // validation keeps bad selectors out; an old stored one selects nothing
    }
    for (const other of byName) {
      if (other.metadata?.name === role.metadata?.name || !matcher.matches(other.metadata?.labels)) continue;
      for (const rule of other.rules ?? []) if (!rules.some((r) => deepEqual(r, rule))) rules.push(rule);
    }
  }
  return rules;
}

export class ClusterRoleAggregationController implements Controller {
  readonly name = 'clusterrole-aggregation';
  private readonly queue: WorkQueue;
  private readonly type: ResourceType;
  private subscription?: InformerSubscription;

  constructor(
    private readonly client: ApiClient,
    private readonly log: (msg: string, extra?: object) => void,
    private readonly informers: InformerFactory,
  ) {
    const type = client.resources().find((r) => r.group === vocabulary.rbacGroup && r.resource === 'clusterroles');
    if (!type) throw new Error(`the catalog declares no clusterroles.${vocabulary.rbacGroup}`);
    this.type = type;
    this.queue = new WorkQueue((name) => this.sync(name), (name, e) => this.log('cluster role aggregation failed', { clusterRole: name, err: String(e) }));
  }

  async start(): Promise<void> {
    // Any ClusterRole's change may change what any aggregated one gathers.
    const enqueueAll = () => {
      for (const role of this.subscription?.list() ?? []) if (hasAggregationRule(role)) this.queue.add(String(role.metadata?.name));
    };
    this.subscription = this.informers.subscribe(this.type, { onAdd: enqueueAll, onUpdate: enqueueAll, onDelete: enqueueAll });
    await this.subscription.start();
    enqueueAll();
  }

  stop(): void {
    this.subscription?.stop();
    this.queue.stop();
  }

  private async sync(name: string): Promise<void> {
    const role = this.subscription?.get(undefined, name);
    if (!role || !hasAggregationRule(role)) return;
    const rules = aggregatedRules(role, this.subscription!.list());
    if (deepEqual(rules, role.rules ?? [])) return;
    try {
      await this.client.update(this.type, undefined, { ...role, rules });
    } catch (e) {
      // Deleted meanwhile: nothing to do. A conflict retries from the informer's newer copy.
      if (e instanceof ApiCallError && e.code === 404) return;
      throw e;
    }
  }
}
