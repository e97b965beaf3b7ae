// PodNodeSelector: a namespace decides which nodes its pods may land on. Its
// annotation (or, without one, the configuration's clusterDefaultNodeSelector)
// is merged into each new pod's node selector, a pod selecting otherwise is
// refused, and the configuration's entry for the namespace, when it has one,
// is a whitelist the merged selector must stay within. Creates of pods only,
// both phases, as upstream.
//
// Configuration (upstream's shape, read once at start):
//   podNodeSelectorPluginConfig:
//     clusterDefaultNodeSelector: "env=prod"
//     <namespace>: "env=prod,tier=web"

import { errors } from '../../machinery/errors.js';
import { ownValue } from '../../machinery/ownkeys.js';
import { productGroup } from '../../machinery/vocabulary.js';
import type { KubeObject } from '../../api/kind.js';
import type { NamespaceGetter } from './namespacelifecycle.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { AdmissionConfigError } from '../plugin-names.js';
import { configSource } from '../config.js';
import { labelsConflict, mapObject, plainError, podWritten, selectorMap, stringMap } from './pods.js';

/** The namespace annotations read, ours and upstream's, merged when both are set. */
export const nodeSelectorAnnotations = [`${productGroup('scheduler.alpha')}/node-selector`, 'scheduler.alpha.kubernetes.io/node-selector'];

const clusterDefaultKey = 'clusterDefaultNodeSelector';
const podsResource = { group: '', resource: 'pods' };

/** The configuration's selectors by namespace (and the cluster default), each checked now. */
export function nodeSelectorConfig(config: Record<string, unknown> | undefined): Map<string, Map<string, string>> {
  const selectors = new Map<string, Map<string, string>>();
  if (!config) return selectors;
  const what = configSource(config, 'PodNodeSelector');
  const entries = ownValue(config, 'podNodeSelectorPluginConfig');
  if (entries === undefined || entries === null) return selectors;
  if (typeof entries !== 'object' || Array.isArray(entries)) throw new AdmissionConfigError(`${what}: podNodeSelectorPluginConfig must map namespaces to node selectors`);
  for (const [namespace, text] of Object.entries(entries)) {
    if (typeof text !== 'string') throw new AdmissionConfigError(`${what}: podNodeSelectorPluginConfig.${namespace} must be a node selector string`);
    try {
      selectors.set(namespace, selectorMap(text));
    } catch (e) {
      throw new AdmissionConfigError(`${what}: podNodeSelectorPluginConfig.${namespace}: ${(e as Error).message}`);
    }
  }
  return selectors;
}

export class PodNodeSelector implements AdmissionPlugin {
  readonly name = 'PodNodeSelector';

  constructor(private readonly getNamespace: NamespaceGetter, private readonly selectors: ReadonlyMap<string, ReadonlyMap<string, string>>) {}

  async mutate(r: AdmissionRequest): Promise<void> {
    const pod = this.podCreated(r);
    if (!pod) return;
    const fromNamespace = await this.namespaceSelector(r.namespace ?? '');
    const own = stringMap(pod.spec?.nodeSelector);
    this.checkConflict(pod, r, fromNamespace, own);
    // The pod's own entries win where both name a key (they agree, or the check above refused).
    const merged = new Map([...fromNamespace, ...own]);
    pod.spec ??= {};
    // An empty selector is left out, as upstream's omitempty does.
    if (merged.size) pod.spec.nodeSelector = mapObject(merged);
    else delete pod.spec.nodeSelector;
    this.checkWhitelist(pod, r, merged);
  }

  async validate(r: AdmissionRequest): Promise<void> {
    const pod = this.podCreated(r);
    if (!pod) return;
    const own = stringMap(pod.spec?.nodeSelector);
    this.checkConflict(pod, r, await this.namespaceSelector(r.namespace ?? ''), own);
    this.checkWhitelist(pod, r, own);
  }

  private podCreated(r: AdmissionRequest): KubeObject | undefined {
    return r.operation === 'CREATE' ? podWritten(r) : undefined;
  }

  private checkConflict(pod: KubeObject, r: AdmissionRequest, fromNamespace: ReadonlyMap<string, string>, own: ReadonlyMap<string, string>): void {
    if (labelsConflict(fromNamespace, own)) {
      throw errors.forbidden(podsResource, pod.metadata?.name ?? r.name, 'pod node label selector conflicts with its namespace node label selector');
    }
  }

  /** Every key the pod selects must be in the namespace's whitelist with the same value (no whitelist: anything). */
  private checkWhitelist(pod: KubeObject, r: AdmissionRequest, selector: ReadonlyMap<string, string>): void {
    const whitelist = this.selectors.get(r.namespace ?? '');
    if (!whitelist || whitelist.size === 0) return;
    for (const [key, value] of selector) {
      if (whitelist.get(key) !== value) {
        throw errors.forbidden(podsResource, pod.metadata?.name ?? r.name, 'pod node label selector labels conflict with its namespace whitelist');
      }
    }
  }

  /** The namespace's annotations merged (a conflict between them is an error), else the cluster default. */
  private async namespaceSelector(name: string): Promise<Map<string, string>> {
    const ns = await this.getNamespace(name, false);
    if (!ns) throw errors.notFound({ group: '', resource: 'namespaces' }, name);
    const annotations = ns.metadata?.annotations;
    let selector = new Map<string, string>();
    let found = false;
    for (const key of nodeSelectorAnnotations) {
      const text = annotations && typeof annotations === 'object' ? ownValue(annotations as Record<string, unknown>, key) : undefined;
      if (typeof text !== 'string') continue;
      let labels: Map<string, string>;
      try {
        labels = selectorMap(text);
      } catch (e) {
        throw plainError((e as Error).message);
      }
      if (labelsConflict(selector, labels)) throw plainError(`${name} annotations' node label selectors conflict`);
      selector = new Map([...selector, ...labels]);
      found = true;
    }
    return found ? selector : new Map(this.selectors.get(clusterDefaultKey) ?? []);
  }
}
