// A webhook's matchConditions, as upstream 1.30+ runs them once rules and
// selectors matched: CEL expressions over `object`, `oldObject` (at the
// version the webhook is called with), `request` (the review's request
// fields) and `authorizer` (checks of what the requesting user may do). Any
// condition false skips the webhook; all true calls it; an error with none
// false follows the failure policy: Ignore skips the webhook, Fail refuses
// the request (403). The conditions of one webhook share one runtime budget
// per request.
//
// Authorization checks are asked of the server's authorizer between
// evaluations (see api/validation/cel/authz.ts): an expression is evaluated,
// the checks it reached without an answer are asked, and it is evaluated
// again with the answers, until it reaches none unanswered.

import type { Attributes, Decision } from '../../machinery/authorization.js';
import { errors, type ApiError } from '../../machinery/errors.js';
import {
  authorizerValue, cel, compileExpression, jsonToCel, matchConditionVariables, withAuthorizationAnswers,
  type AuthorizationAnswers, type Compiled,
} from '../../api/validation/index.js';
import type { Authorize } from '../plugins/signerauthorization.js';
import { requestResource, type AdmissionRequest, type CalledAs } from '../types.js';
import { reviewRequest, versioned } from './review.js';

export interface CompiledCondition {
  name: string;
  expression: string;
  /** The program, or why the expression does not compile (an evaluation error when the webhook is matched). */
  program: Compiled | string;
}

/** Compiles a webhook's stored matchConditions once, when its configuration is read. */
export function compileMatchConditions(raw: unknown): CompiledCondition[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter((c): c is Record<string, unknown> => typeof c === 'object' && c !== null).map((c) => {
    const expression = typeof c.expression === 'string' ? c.expression.trim() : '';
    return { name: String(c.name ?? ''), expression, program: compileExpression(expression, matchConditionVariables) };
  });
}

/** The authorizer's decisions on one request's checks, and the checks still to ask. */
export class RequestAuthorizations implements AuthorizationAnswers {
  private readonly decisions = new Map<string, Decision>();
  private pending = new Map<string, Attributes>();
  constructor(private readonly authorize: Authorize | undefined) {}

  lookup(attributes: Attributes): Decision | undefined {
    // Fails the check, so the failure policy decides (the server always has one; some tests do not).
    if (!this.authorize) throw new Error('no authorizer is configured');
    const key = JSON.stringify([attributes.user, attributes.verb, attributes.isResourceRequest, attributes.path, attributes.apiGroup,
      attributes.apiVersion, attributes.resource, attributes.subresource, attributes.namespace, attributes.name]);
    const known = this.decisions.get(key);
    if (!known) this.pending.set(key, attributes);
    return known;
  }

  get waiting(): boolean {
    return this.pending.size > 0;
  }

  /** Asks the authorizer every pending check; a failure to ask is the decision's error, as upstream's. */
  async answerPending(): Promise<void> {
    const asked = [...this.pending];
    this.pending = new Map();
    await Promise.all(asked.map(async ([key, attributes]) => {
      let decision: Decision;
      try {
        decision = await this.authorize!(attributes);
      } catch (e) {
        decision = { decision: 'no-opinion', reason: '', evaluationError: (e as Error).message };
      }
      this.decisions.set(key, decision);
    }));
  }
}

// Each round answers at least one new check, and the per-call limit admits
// two checks (350,000 each): a few rounds always suffice.
const maxRounds = 8;

export async function evaluate(program: Compiled, vars: Record<string, unknown>, limit: number, answers: RequestAuthorizations): Promise<ReturnType<Compiled['eval']>> {
  for (let round = 0; ; round++) {
    const result = withAuthorizationAnswers(answers, () => program.eval(vars, limit));
    if (!answers.waiting || round === maxRounds) return result;
    await answers.answerPending();
  }
}

/**
 * Whether to call a webhook with these match conditions, called as
 * `invocation`; throws the 403 of a failed condition under failurePolicy Fail.
 */
export async function conditionsMatch(conditions: readonly CompiledCondition[] | undefined, failurePolicy: string | undefined, invocation: CalledAs,
  request: AdmissionRequest, authorize?: Authorize): Promise<boolean> {
  if (!conditions?.length) return true;
  const resource = requestResource(request);
  const vars = {
    object: jsonToCel(versioned(request.object, invocation, request) ?? null),
    oldObject: jsonToCel(versioned(request.oldObject, invocation, request) ?? null),
    request: jsonToCel(reviewRequest(request.uid, request, invocation)),
    authorizer: authorizerValue(request.user ?? { username: '', groups: [] }, {
      group: resource.group, version: resource.version, resource: resource.resource,
      subresource: request.subresource ?? '', namespace: request.namespace ?? '', name: request.name,
    }),
  };
  const answers = new RequestAuthorizations(authorize);
  const failures: string[] = [];
  const { costLimits } = cel();
  let remaining = costLimits.matchConditions;
  for (const c of conditions) {
    if (typeof c.program === 'string') { failures.push(`expression '${c.expression}' resulted in error: ${c.program}`); continue; }
    const limit = Math.min(costLimits.perCall, remaining);
    const result = await evaluate(c.program, vars, limit, answers);
    if (result.exceeded) {
      failures.push(limit < costLimits.perCall
        ? 'validation failed due to running out of cost budget, no further validation rules will be run'
        : `expression '${c.expression}' resulted in error: ${result.error}`);
      break;
    }
    remaining -= result.cost;
    if (result.error !== undefined) { failures.push(`expression '${c.expression}' resulted in error: ${result.error}`); continue; }
    if (result.value === false) return false;
    if (result.value !== true) failures.push(`expression '${c.expression}' resulted in error: no such overload`);
  }
  if (!failures.length) return true;
  if (failurePolicy === 'Ignore') return false;
  throw conditionError(request, failures);
}

/** Upstream's NewForbidden over the aggregate of the errors: one as it is, several in brackets. */
function conditionError(request: AdmissionRequest, failures: string[]): ApiError {
  const resource = requestResource(request);
  const why = failures.length === 1 ? failures[0]! : `[${failures.join(', ')}]`;
  return errors.forbidden({ group: resource.group, resource: resource.resource }, request.name, why);
}
