// A webhook's matchConditions, as upstream 1.30+ runs them once rules and
// selectors matched: CEL expressions over `object`, `oldObject` (at the
// version the webhook is called with) and `request` (the review's request
// fields). Any condition false skips the webhook; all true calls it; an
// error with none false follows the failure policy: Ignore skips the
// webhook, Fail refuses the request (403). The conditions of one webhook
// share one runtime budget per request.
//
// `authorizer` is not offered: our authorizers may answer asynchronously
// and CEL evaluation is synchronous, so an expression naming it does not
// compile (the configuration's validation refuses it).

import { errors, type ApiError } from '../../machinery/errors.js';
import { compileExpression, costLimits, jsonToCel, matchConditionVariables, type Compiled } from '../../api/validation/index.js';
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

/**
 * Whether to call a webhook with these match conditions, called as
 * `invocation`; throws the 403 of a failed condition under failurePolicy Fail.
 */
export function conditionsMatch(conditions: readonly CompiledCondition[] | undefined, failurePolicy: string | undefined, invocation: CalledAs, request: AdmissionRequest): boolean {
  if (!conditions?.length) return true;
  const vars = {
    object: jsonToCel(versioned(request.object, invocation, request) ?? null),
    oldObject: jsonToCel(versioned(request.oldObject, invocation, request) ?? null),
    request: jsonToCel(reviewRequest(request.uid, request, invocation)),
  };
  const failures: string[] = [];
  let remaining = costLimits.matchConditions;
  for (const c of conditions) {
    if (typeof c.program === 'string') { failures.push(`expression '${c.expression}' resulted in error: ${c.program}`); continue; }
    const limit = Math.min(costLimits.perCall, remaining);
    const result = c.program.eval(vars, limit);
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
