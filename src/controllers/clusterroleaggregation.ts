// The ClusterRole aggregation controller: a ClusterRole with an
// aggregationRule gets as its rules the union of the rules of every other
// ClusterRole its selectors match (by name order, each rule once), kept up to
// date as those roles and their labels change, as upstream's.

import type { ApiClient, ApiObject } from '../client/types.js';
import { ApiCallError } from '../client/types.js';
import type { InformerSubscription } from '../client/informer.js';
import { resources } from '../client/resources.js';
import type { WorkQueue } from '../client/workqueue.js';
import { deepEqual } from '../machinery/equal.js';
import { labelSelectorOf } from '../machinery/selectors.js';
import { BaseController, type KitArgument, type Log } from './controller.js';

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

export class ClusterRoleAggregationController extends BaseController {
  readonly name = 'clusterrole-aggregation';
  private readonly queue: WorkQueue;
  private readonly roles: InformerSubscription;

  constructor(client: ApiClient, log: Log, kit: KitArgument) {
    super(client, log, kit);
    this.queue = this.workQueue((name) => this.sync(name), { name: 'ClusterRoleAggregator', failure: 'cluster role aggregation failed' });
    this.roles = this.watch(this.resolve(resources.clusterRoles), { onAdd: this.enqueueAll, onUpdate: this.enqueueAll, onDelete: this.enqueueAll });
  }

  // Any ClusterRole's change may change what any aggregated one gathers.
  private readonly enqueueAll = () => {
    for (const role of this.roles.list()) if (hasAggregationRule(role)) this.queue.add(String(role.metadata?.name));
  };

  override async start(): Promise<void> {
    await super.start();
    this.enqueueAll();
  }

  private async sync(name: string): Promise<void> {
    const role = this.roles.get(undefined, name);
    if (!role || !hasAggregationRule(role)) return;
    const rules = aggregatedRules(role, this.roles.list());
    if (deepEqual(rules, role.rules ?? [])) return;
    try {
      await this.client.update(this.roles.type, undefined, { ...role, rules });
    } catch (e) {
      // Deleted meanwhile: nothing to do. A conflict retries from the informer's newer copy.
      if (e instanceof ApiCallError && e.code === 404) return;
      throw e;
    }
  }
}
