// ValidatingAdmissionPolicy: the bound policies whose constraints match a
// request, evaluated in the validating phase, in policy then binding name
// order, once per parameter. A failed validation does what its binding's
// validationActions say: Deny rejects the request (the first denial is the
// one the client gets, with the validation's reason and code), Warn sends a
// warning, Audit records the failure in the audit event. A policy or binding
// that cannot be applied (parameters missing, a selector that cannot be
// decided) and an expression that fails are errors: failurePolicy Fail
// denies, Ignore skips the policy. Writes of the admission configuration
// kinds themselves are never subject to policies, so a bad policy cannot
// lock itself in (upstream's rule).

import { ApiError, type StatusDetails, type StatusReason } from '../../machinery/errors.js';
import { productGroup, vocabulary } from '../../machinery/vocabulary.js';
import type { KubeObject } from '../../api/kind.js';
import { resources } from '../../client/resources.js';
import type { AdmissionListers } from '../listers.js';
import type { NamespaceGetter } from '../plugins/namespacelifecycle.js';
import type { Authorize } from '../plugins/signerauthorization.js';
import { forbiddenRequest, qualifiedOf } from '../errors.js';
import { addAuditAnnotation, addWarning, type AdmissionPlugin, type AdmissionRequest } from '../types.js';
import { WebhookMatcher, type NamespaceLabelCache, type ServesVersion } from '../webhook/matcher.js';
import { convertAheadFor } from '../webhook/review.js';
import { celLoaded, loadCel } from '../../api/validation/index.js';
import type { Decision } from './evaluate.js';
import { PolicyMatcher } from './matcher.js';
import { collectParams, type LiveRead } from './params.js';
import { PolicySource, type BoundPolicy, type CompiledBinding, type CompiledPolicy } from './source.js';

/** The audit annotation listing the failures of validations bound with the Audit action. */
export const validationFailureAnnotation = `${productGroup('validation.policy.admission')}/validation_failure`;

const exemptKinds = new Set(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding', 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding']);

const codes: Partial<Record<string, number>> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

export interface PolicyPluginParts {
  listers: AdmissionListers;
  getNamespace: NamespaceGetter;
  getObject?: LiveRead;
  authorize?: Authorize;
  serves?: ServesVersion;
}

/** A denial by a policy: upstream's Forbidden-shaped message with the validation's reason and its code. */
export class PolicyDenial extends ApiError {}

/** The name upstream's NewForbidden gives the request's object: its name, else its generateName, else Unknown. */
function objectName(request: AdmissionRequest): string {
  return request.name || request.object?.metadata?.name || request.object?.metadata?.generateName || 'Unknown';
}

function denialError(request: AdmissionRequest, policy: string, binding: string | undefined, decision: Pick<Decision, 'message' | 'reason'>): PolicyDenial {
  const message = binding !== undefined
    ? `ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${decision.message}`
    : `ValidatingAdmissionPolicy '${policy}' denied request: ${decision.message}`;
  const forbidden = forbiddenRequest({ ...request, name: objectName(request) }, message);
  const reason = (decision.reason || 'Invalid') as StatusReason;
  const details: StatusDetails = { ...forbidden.details, causes: [...(forbidden.details?.causes ?? []), { message }] };
  return new PolicyDenial(codes[reason] ?? 422, reason, forbidden.message, details);
}

interface Denied {
  policy: string;
  binding?: string;
  decision: Pick<Decision, 'message' | 'reason'>;
}

// Policies compile and run with CEL, and their evaluation imports it: both load with the first bound policy, not with the server.
let evaluator: typeof import('./evaluate.js') | undefined;
function loadEvaluation(): Promise<void> | undefined {
  if (evaluator && celLoaded()) return undefined;
  return Promise.all([loadCel(), import('./evaluate.js').then((m) => { evaluator = m; })]).then(() => undefined);
}

export class ValidatingAdmissionPolicyPlugin implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  private readonly source: PolicySource;
  private readonly matcher: PolicyMatcher;

  constructor(private readonly parts: PolicyPluginParts, policies = parts.listers.lister(resources.validatingAdmissionPolicies),
    bindings = parts.listers.lister(resources.validatingAdmissionPolicyBindings)) {
    this.source = new PolicySource(policies, bindings);
    const serves = parts.serves ?? (() => true);
    this.matcher = new PolicyMatcher(new WebhookMatcher(parts.getNamespace, serves, parts.authorize), serves);
  }

  /** Without a bound policy for the resource (most writes) the chain goes on at once, without a promise. */
  validate(request: AdmissionRequest): Promise<void> | undefined {
    if (request.kind.group === vocabulary.admissionRegistrationGroup && exemptKinds.has(request.kind.kind)) return undefined;
    if (this.source.anyBound) {
      const loading = loadEvaluation();
      if (loading) return loading.then(() => this.validate(request));
    }
    const candidates = this.source.candidates(qualifiedOf(request).resource);
    return candidates.length === 0 ? undefined : this.validateWith(candidates, request);
  }

  private async validateWith(candidates: readonly BoundPolicy[], request: AdmissionRequest): Promise<void> {
    const cache: NamespaceLabelCache = new Map();
    const denied: Denied[] = [];
    const audited: object[] = [];
    const annotations = new Map<string, Set<string>>();
    let namespaceObject: Promise<KubeObject | null> | undefined;
    const namespaceOf = () => (namespaceObject ??= request.namespace
      ? this.parts.getNamespace(request.namespace, false).then((ns) => ns ?? null, () => null)
      : Promise.resolve(null));
    const configError = (policy: CompiledPolicy, binding: CompiledBinding | undefined, error: unknown) => {
      if (policy.failurePolicy === 'Ignore') return;
      const why = error instanceof Error ? error.message : String(error);
      denied.push({ policy: policy.name, binding: binding?.name, decision: { message: `failed to configure ${binding ? 'binding' : 'policy'}: ${why}`, reason: '' } });
    };
    for (const { policy, bindings } of candidates) {
      let invocation;
      try {
        invocation = await this.matcher.matches(policy.match, request, cache);
      } catch (e) {
        configError(policy, undefined, e);
        continue;
      }
      if (!invocation) continue;
      await convertAheadFor(invocation, request);
      for (const binding of bindings) {
        if (binding.match) {
          try {
            if (!(await this.matcher.matches(binding.match, request, cache))) continue;
          } catch (e) {
            configError(policy, binding, e);
            continue;
          }
        }
        // A live read that fails (the store unavailable) is the binding's error, under the policy's failurePolicy.
        const collected = await collectParams(policy, binding, request, this.parts.listers, this.parts.getObject)
          .catch((e: unknown) => ({ error: e instanceof Error ? e.message : String(e) }));
        if ('error' in collected) {
          configError(policy, binding, collected.error);
          continue;
        }
        for (const params of collected.params) {
          const evaluation = await evaluator!.evaluatePolicy({ policy, invocation, request, params, namespaceObject: await namespaceOf(), authorize: this.parts.authorize });
          for (const [key, value] of evaluation.annotations) {
            let values = annotations.get(key);
            if (!values) annotations.set(key, values = new Set());
            values.add(value);
          }
          for (const decision of evaluation.denials) {
            for (const action of binding.actions) {
              if (action === 'Deny') denied.push({ policy: policy.name, binding: binding.name, decision });
              else if (action === 'Warn') addWarning(request, `Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${decision.message}`);
              else if (action === 'Audit') {
                audited.push({ message: decision.message, policy: policy.name, binding: binding.name, expressionIndex: decision.expressionIndex, validationActions: binding.actions });
              }
            }
          }
        }
      }
    }
    // As upstream, what policies annotate is recorded even when one of them denies.
    for (const [key, values] of annotations) addAuditAnnotation(request, key, [...values].sort().join(', '));
    if (audited.length) addAuditAnnotation(request, validationFailureAnnotation, JSON.stringify(audited));
    const first = denied[0];
    if (first) throw denialError(request, first.policy, first.binding, first.decision);
  }
}
