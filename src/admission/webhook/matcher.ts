// Whether a webhook is called for a request, as upstream decides it: a rule
// matches (operation, group, version, resource and sub-resource with their
// wildcards, scope), the namespace's labels match the namespaceSelector (a
// Namespace object's own labels when it is the one written) and the object
// or the old object matches the objectSelector. With matchPolicy Equivalent
// a rule may also match the same resource reached at another version.

import { errors } from '../../machinery/errors.js';
import type { Labels } from '../../machinery/selectors.js';
import { requestKind, requestResource, type AdmissionRequest, type GroupVersionKind, type GroupVersionResource, type CalledAs } from '../types.js';
import type { NamespaceGetter } from '../plugins/namespacelifecycle.js';
import type { CompiledWebhook, WebhookRule } from './source.js';
import { servedVersions, type KindVersion } from '../../api/kind.js';
import { conditionsMatch } from './conditions.js';
import type { Authorize } from '../plugins/signerauthorization.js';

/** Another version at which the request's resource is served: same group and resource name, same objects, another apiVersion. */
export interface EquivalentResource {
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

/** Whether the server serves a version of a resource now (--runtime-config may turn declared versions off). */
export type ServesVersion = (group: string, version: KindVersion, resource: string) => boolean;

/** The served versions of the request's resource other than the one the request named, from its kind's declaration. */
export function equivalentResources(request: AdmissionRequest, serves: ServesVersion): EquivalentResource[] {
  // A sub-resource whose object is of another kind (an Eviction on pods) has no equivalents to offer.
  if (request.resource) return [];
  const k = request.kind;
  const asked = requestResource(request);
  return servedVersions(k).filter((v) => (v.group !== asked.group || v.name !== asked.version) && serves(v.group, v, k.plural))
    .map((v) => ({ resource: { group: v.group, version: v.name, resource: k.plural }, kind: { group: v.group, version: v.name, kind: k.kind } }));
}

/** A matching webhook and what it is called with: the request's resource, or the equivalent one its rule names. */
export interface Invocation extends CalledAs {
  webhook: CompiledWebhook;
}

const namespacesResource = { group: '', resource: 'namespaces' };

const isNamespaceRequest = (r: AdmissionRequest) => r.kind.group === '' && r.kind.plural === 'namespaces';

function listed(items: readonly string[], value: string): boolean {
  return items.some((item) => item === '*' || item === value);
}

export function ruleMatches(rule: WebhookRule, request: AdmissionRequest, resource: GroupVersionResource): boolean {
  const namespaced = !isNamespaceRequest(request) && !!request.namespace;
  if (rule.scope === 'Namespaced' && !namespaced) return false;
  if (rule.scope === 'Cluster' && namespaced) return false;
  if (rule.scope !== '*' && rule.scope !== 'Namespaced' && rule.scope !== 'Cluster') return false;
  if (!listed(rule.operations, request.operation)) return false;
  if (!listed(rule.apiGroups, resource.group) || !listed(rule.apiVersions, resource.version)) return false;
  const subresource = request.subresource ?? '';
  return rule.resources.some((entry) => {
    const slash = entry.indexOf('/');
    const res = slash < 0 ? entry : entry.slice(0, slash);
    const sub = slash < 0 ? '' : entry.slice(slash + 1);
    return (res === '*' || res === resource.resource) && (sub === '*' || sub === subresource);
  });
}

/** Labels of namespaces looked up for one request, shared by its webhooks. */
export type NamespaceLabelCache = Map<string, Promise<Labels | undefined>>;

export class WebhookMatcher {
  /** `serves`: versions turned off are no equivalents (every declared served version is, without it). */
  constructor(private readonly getNamespace: NamespaceGetter, private readonly serves: ServesVersion = () => true, private readonly authorize?: Authorize) {}

  /**
   * The invocation when `hook` is to be called; throws an ApiError when that
   * cannot be decided (missing namespace, broken selector). Rules are checked
   * first and without waiting, so webhooks that do not match cost little.
   */
  async invocation(hook: CompiledWebhook, request: AdmissionRequest, cache: NamespaceLabelCache): Promise<Invocation | undefined> {
    const invocation = this.byRules(hook, request);
    return invocation && (await this.selected(invocation, request, cache)) ? invocation : undefined;
  }

  /** The invocation when one of the hook's rules matches the request (at its own version or, for Equivalent, another). */
  byRules(hook: CompiledWebhook, request: AdmissionRequest): Invocation | undefined {
    // The version the request named first, as upstream; its object is converted to it for the webhook.
    const own = requestResource(request);
    if (hook.rules.some((rule) => ruleMatches(rule, request, own))) return { webhook: hook, resource: own, kind: requestKind(request) };
    if (hook.matchPolicy !== 'Equivalent') return undefined;
    const others = equivalentResources(request, this.serves);
    for (const rule of hook.rules) {
      for (const other of others) {
        if (ruleMatches(rule, request, other.resource)) return { webhook: hook, resource: other.resource, kind: other.kind };
      }
    }
    return undefined;
  }

  /** Whether the selectors of a rule-matched webhook select the request. */
  async selected(invocation: Invocation, request: AdmissionRequest, cache: NamespaceLabelCache): Promise<boolean> {
    const hook = invocation.webhook;
    // As upstream: a selector that does not match skips the webhook even when the other one could not be evaluated.
    const ns = await this.namespaceMatches(hook, request, cache).then((matches) => ({ matches, error: undefined }), (error: Error) => ({ matches: false, error }));
    if (!ns.matches && !ns.error) return false;
    const obj = this.objectMatches(hook, request);
    if (!obj.matches && !obj.error) return false;
    if (ns.error) throw ns.error;
    if (obj.error) throw obj.error;
    return conditionsMatch(hook.matchConditions, hook.failurePolicy, invocation, request, this.authorize);
  }

  private async namespaceMatches(hook: CompiledWebhook, request: AdmissionRequest, cache: NamespaceLabelCache): Promise<boolean> {
    const namespaceObject = isNamespaceRequest(request);
    if (!request.namespace && !namespaceObject) return true; // other cluster-scoped objects are never exempted
    const selector = hook.namespaceSelector;
    if (selector instanceof Error) throw errors.internal(selector.message);
    if (selector.empty) return true;
    // A namespace being created or changed is judged by its new labels; the store does not have them yet.
    if (namespaceObject && !request.subresource && (request.operation === 'CREATE' || request.operation === 'UPDATE')) {
      return selector.matches(request.object?.metadata?.labels);
    }
    const name = request.namespace ?? request.name;
    let labels = cache.get(name);
    if (!labels) {
      labels = this.getNamespace(name, false).then((ns) => (ns ? (ns.metadata?.labels ?? {}) : undefined));
      cache.set(name, labels);
    }
    const found = await labels;
    if (found === undefined) throw errors.notFound(namespacesResource, name);
    return selector.matches(found);
  }

  private objectMatches(hook: CompiledWebhook, request: AdmissionRequest): { matches: boolean; error?: Error } {
    const selector = hook.objectSelector;
    if (selector instanceof Error) return { matches: false, error: errors.internal(selector.message) };
    if (selector.empty) return { matches: true };
    const labelled = (obj: AdmissionRequest['object']) => obj !== undefined && selector.matches(obj.metadata?.labels ?? {});
    return { matches: labelled(request.object) || labelled(request.oldObject) };
  }
}

/** Webhooks are never called for writes of webhook configurations, so a broken webhook cannot lock itself in (upstream's rule). */
export function exemptFromWebhooks(request: AdmissionRequest, configurationGroup: string): boolean {
  return request.kind.group === configurationGroup
    && (request.kind.kind === 'ValidatingWebhookConfiguration' || request.kind.kind === 'MutatingWebhookConfiguration');
}
