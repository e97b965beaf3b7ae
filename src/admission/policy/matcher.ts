// Whether a policy's matchConstraints (or a binding's matchResources) match a
// request, as upstream's policy matcher decides it: the rules as a webhook's
// (webhook/matcher.ts, shared), narrowed to resourceNames when given, the
// exclusions first (at the request's version and, for Equivalent, at every
// equivalent one), then the namespace and object selectors, whose errors
// count only when the rules match.

import { requestKind, requestResource, type AdmissionRequest, type CalledAs, type GroupVersionResource } from '../types.js';
import { equivalentResources, ruleMatches, type NamespaceLabelCache, type ServesVersion, type WebhookMatcher } from '../webhook/matcher.js';
import type { CompiledWebhook } from '../webhook/source.js';
import type { CompiledMatch, NamedRule } from './source.js';

export class PolicyMatcher {
  /** The selectors of each match in the shape the webhook matcher reads (built once per compiled match). */
  private readonly selectorsOf = new WeakMap<CompiledMatch, CompiledWebhook>();

  constructor(private readonly webhooks: WebhookMatcher, private readonly serves: ServesVersion) {}

  /**
   * The resource and kind the request is seen at when `match` matches it,
   * undefined when it does not; throws an ApiError when the selectors cannot
   * be decided (a missing namespace, a broken selector).
   */
  async matches(match: CompiledMatch, request: AdmissionRequest, cache: NamespaceLabelCache): Promise<CalledAs | undefined> {
    const calledAs = this.byRules(match, request);
    if (!calledAs) return undefined;
    const selected = await this.webhooks.selected({ ...calledAs, webhook: this.selectors(match) }, request, cache);
    return selected ? calledAs : undefined;
  }

  /** The resource and kind a rule matches the request at (its own first, then an equivalent one for Equivalent). */
  byRules(match: CompiledMatch, request: AdmissionRequest): CalledAs | undefined {
    const own = requestResource(request);
    const others = match.matchPolicy === 'Equivalent' ? equivalentResources(request, this.serves) : [];
    const hit = (rules: readonly NamedRule[], resource: GroupVersionResource) => rules.some((rule) =>
      (rule.resourceNames.length === 0 || rule.resourceNames.includes(request.name)) && ruleMatches(rule, request, resource));
    if (hit(match.excludeRules, own) || others.some((other) => hit(match.excludeRules, other.resource))) return undefined;
    // A binding without resource rules narrows by its selectors alone.
    if (match.rules.length === 0 || hit(match.rules, own)) return { resource: own, kind: requestKind(request) };
    return others.find((other) => hit(match.rules, other.resource));
  }

  private selectors(match: CompiledMatch): CompiledWebhook {
    let hook = this.selectorsOf.get(match);
    if (!hook) {
      hook = {
        uid: '', configurationName: '', name: '', rules: [], namespaceSelector: match.namespaceSelector, objectSelector: match.objectSelector,
        matchPolicy: match.matchPolicy, failurePolicy: 'Fail', timeoutSeconds: 0, admissionReviewVersions: [], reinvocationPolicy: 'Never', matchConditions: [],
      };
      this.selectorsOf.set(match, hook);
    }
    return hook;
  }
}
