// One evaluation of a policy for one request, binding and parameter, as
// upstream's validator runs it: the match conditions (any false skips the
// policy; an error follows failurePolicy), then every validation in order
// (false fails it, with the message of its messageExpression, else its
// message, else `failed expression: <expression>`), then the audit
// annotations. Each expression may cost up to the per-call limit, and all of
// them together (variables included) the per-evaluation budget; running out
// of it ends the evaluation as an error under failurePolicy.
//
// Variables are computed on first read and kept for the evaluation, as
// upstream's composited variables: one that fails is an error only to the
// expressions that read it.

import { celError, isCelError } from '@bufbuild/cel';
import type { KubeObject } from '../../api/kind.js';
import { authorizerValue } from '../../api/validation/index.js';
import { costLimits } from '../../api/validation/cel/cost.js';
import { awaitingAnswer } from '../../api/validation/cel/authz.js';
import { JsonList, JsonMap, type ToCel } from '../../api/validation/cel/jsonvalues.js';
import type { Authorize } from '../plugins/signerauthorization.js';
import { requestResource, type AdmissionRequest, type CalledAs } from '../types.js';
import { evaluate, RequestAuthorizations } from '../webhook/conditions.js';
import { reviewRequest, versioned } from '../webhook/review.js';
import type { CompiledPolicy, Program } from './source.js';

/** What a policy decided: deny (a failed validation, or an error under failurePolicy Fail) or admit. */
export interface Decision {
  deny: boolean;
  message: string;
  /** The Status reason of a denial; upstream's default is Invalid. */
  reason: string;
  /** The validation that failed, for the audit record. */
  expressionIndex: number;
}

export interface Evaluation {
  /** The denials only (admissions carry nothing further). */
  denials: Decision[];
  /** `<policy>/<key>` and value of each audit annotation with a value. */
  annotations: [string, string][];
}

const maxMessageBytes = 5 * 1024;
const outOfBudget = 'validation failed due to running out of cost budget, no further validation rules will be run';

class OutOfBudget extends Error {}

/** Integral JSON numbers as CEL ints, converted as expressions read them (the objects are not copied). */
const jsonInts: ToCel = (v) => {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v !== 'object' || v === null) return v;
  return Array.isArray(v) ? new JsonList(v, jsonInts) : new JsonMap(v as Record<string, unknown>, undefined, jsonInts);
};

export const celOfObject = (obj: KubeObject | undefined): unknown => (obj === undefined ? null : jsonInts(obj));

const mapMark = Symbol.for('@bufbuild/cel/map');

/** `variables`: a CEL map whose entries are computed when first read, their cost added to the evaluation's. */
class LazyVariables {
  readonly [mapMark] = {};
  private readonly computed = new Map<string, unknown>();
  private readonly computing = new Set<string>();
  /** Cost spent computing variables since the last `takeCost`. */
  private spent = 0;

  constructor(private readonly declared: CompiledPolicy['variables'], private vars: Record<string, unknown> = {}) {}

  bind(vars: Record<string, unknown>): void {
    this.vars = vars;
  }

  takeCost(): number {
    const cost = this.spent;
    this.spent = 0;
    return cost;
  }

  get size(): number {
    return this.declared.length;
  }

  get(name: unknown): unknown {
    if (typeof name !== 'string') return undefined;
    if (this.computed.has(name)) return this.computed.get(name);
    const variable = this.declared.find((v) => v.name === name);
    if (!variable) return undefined;
    if (typeof variable.program === 'string') return celError(`composited variable "${name}" fails to compile: ${variable.program}`, 0);
    if (this.computing.has(name)) return celError(`composited variable "${name}" refers to itself`, 0);
    this.computing.add(name);
    let result;
    try {
      result = variable.program.eval(this.vars, costLimits.perCall);
    } finally {
      this.computing.delete(name);
    }
    this.spent += result.cost;
    const value = result.error !== undefined ? celError(result.error, 0) : result.value;
    // An authorization check not answered yet is asked and the expression evaluated again: its value is not kept.
    if (result.error !== awaitingAnswer) this.computed.set(name, value);
    return value;
  }

  has(name: unknown): boolean {
    return this.get(name) !== undefined;
  }

  *keys(): IterableIterator<string> {
    for (const v of this.declared) yield v.name;
  }

  *values(): IterableIterator<unknown> {
    for (const v of this.declared) yield this.get(v.name);
  }

  *entries(): IterableIterator<[string, unknown]> {
    for (const v of this.declared) yield [v.name, this.get(v.name)];
  }

  [Symbol.iterator](): IterableIterator<[string, unknown]> {
    return this.entries();
  }
}

export interface EvaluationInput {
  policy: CompiledPolicy;
  invocation: CalledAs;
  request: AdmissionRequest;
  params: KubeObject | null;
  namespaceObject: KubeObject | null;
  authorize?: Authorize;
}

const failedExpression = (expression: string, error: string) => `expression '${expression}' resulted in error: ${error}`;

export async function evaluatePolicy(input: EvaluationInput): Promise<Evaluation> {
  const { policy, invocation, request } = input;
  const failClosed = policy.failurePolicy !== 'Ignore';
  const resource = requestResource(request);
  const variables = new LazyVariables(policy.variables);
  const vars: Record<string, unknown> = {
    object: celOfObject(versioned(request.object, invocation, request)),
    oldObject: celOfObject(versioned(request.oldObject, invocation, request)),
    request: jsonInts(reviewRequest(request.uid, request, invocation)),
    namespaceObject: input.namespaceObject ? jsonInts(input.namespaceObject) : null,
    params: input.params ? jsonInts(input.params) : null,
    authorizer: authorizerValue(request.user ?? { username: '', groups: [] }, {
      group: resource.group, version: resource.version, resource: resource.resource,
      subresource: request.subresource ?? '', namespace: request.namespace ?? '', name: request.name,
    }),
    variables,
  };
  variables.bind(vars);
  const answers = new RequestAuthorizations(input.authorize);
  let remaining = costLimits.perRequest;
  const run = async (program: Exclude<Program, string>) => {
    const result = await evaluate(program, vars, costLimits.perCall, answers);
    const cost = result.cost + variables.takeCost();
    if (cost > remaining) throw new OutOfBudget(outOfBudget);
    remaining -= cost;
    return result;
  };
  const error = (message: string): Decision => ({ deny: failClosed, message, reason: '', expressionIndex: -1 });
  const denials: Decision[] = [];
  const annotations: [string, string][] = [];
  try {
    const conditionFailures: string[] = [];
    for (const c of policy.matchConditions) {
      if (typeof c.program === 'string') { conditionFailures.push(failedExpression(c.expression, c.program)); continue; }
      const result = await run(c.program);
      if (result.error !== undefined) { conditionFailures.push(failedExpression(c.expression, result.error)); continue; }
      if (result.value === false) return { denials: [], annotations: [] };
      if (result.value !== true) conditionFailures.push(failedExpression(c.expression, 'no such overload'));
    }
    if (conditionFailures.length) {
      const decision = error(conditionFailures.length === 1 ? conditionFailures[0]! : `[${conditionFailures.join(', ')}]`);
      return { denials: decision.deny ? [decision] : [], annotations: [] };
    }
    for (const [index, v] of policy.validations.entries()) {
      const expression = v.expression.trim();
      if (typeof v.program === 'string') { denials.push({ ...error(`compilation error: ${v.program}`), expressionIndex: index }); continue; }
      const result = await run(v.program);
      if (result.error !== undefined || (result.value !== true && result.value !== false)) {
        denials.push({ ...error(failedExpression(expression, result.error ?? 'no such overload')), expressionIndex: index });
        continue;
      }
      if (result.value === true) continue;
      let message = v.message.trim() ? v.message : `failed expression: ${expression}`;
      if (v.messageExpression && typeof v.messageExpression !== 'string') {
        const made = await run(v.messageExpression);
        const text = made.error === undefined && typeof made.value === 'string' ? made.value.trim() : '';
        // As upstream: an empty, multi-line or too long message falls back to the static one.
        if (text && !/[\r\n]/.test(text) && Buffer.byteLength(text) <= maxMessageBytes) message = text;
      }
      denials.push({ deny: true, message, reason: v.reason || 'Invalid', expressionIndex: index });
    }
    for (const a of policy.auditAnnotations) {
      if (typeof a.program === 'string') { denials.push(error(`compilation error: ${a.program}`)); continue; }
      const result = await run(a.program);
      if (result.error !== undefined) { denials.push(error(failedExpression(a.expression.trim(), result.error))); continue; }
      if (result.value === null) continue;
      if (typeof result.value === 'string') { annotations.push([`${policy.name}/${a.key}`, result.value]); continue; }
      const type = typeof result.value === 'bigint' ? 'int' : isCelError(result.value) ? 'error' : typeof result.value === 'boolean' ? 'bool' : typeof result.value;
      denials.push(error(`valueExpression '${a.expression.trim()}' resulted in unsupported return type: ${type}. Return type must be either string or null.`));
    }
  } catch (e) {
    if (!(e instanceof OutOfBudget)) throw e;
    const decision = error(e.message);
    return { denials: decision.deny ? [decision] : [], annotations: [] };
  }
  return { denials: denials.filter((d) => d.deny), annotations };
}
