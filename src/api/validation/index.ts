// Validation, defaulting and pruning from a schema, for custom resources
// (and any kind whose schema says what upstream's hand-written validation
// says): `checkSchema` when a schema is declared (its errors are the 422 of
// the declaration), `compileSchema` once per schema and version, then per
// request, in upstream's order: `prune`, `applyDefaults` (on decode and again
// on read of stored objects), `validate` or `validateUpdate` in the version
// the client sent. Built-in kinds keep their strategies' hand-written
// messages; nothing here is wired into them.

import { FieldError, fieldErrors, maxListedErrors } from '../../machinery/errors.js';
import type { RuleLimits, RuleWalk } from './cel/rules.js';
import type * as CelParts from './celparts.js';
import { cel, schemaNeeds } from './engines.js';
import { compileDefaulter } from './defaults.js';
import { compilePruner } from './pruning.js';
import type { JSONSchemaProps } from './structural.js';
import { compileValidator } from './validator.js';

export { checkSchema } from './check.js';
export { hasUnprunedDefaults, pruneDefaults } from './defaults.js';
export { markers, type JSONSchemaProps, type ValidationRule } from './structural.js';

export interface CompiledSchema {
  /** Drops the fields the schema does not name (in place); the paths dropped, for fieldValidation. */
  prune(obj: unknown): string[];
  /** Fills defaults in place (on decode, and on read of stored objects). */
  applyDefaults(obj: unknown): void;
  /** Every error of a new object: schema checks, then the CEL rules. */
  validate(obj: unknown): FieldError[];
  /** As validate, with transition rules seeing `oldSelf` from `old`. */
  validateUpdate(obj: unknown, old: unknown): FieldError[];
}

const blocking = new Set(['FieldValueTypeInvalid', 'FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany']);
const notChecked = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/** Compiles a (checked) schema once into its validator and defaulter. */
export function compileSchema(schema: JSONSchemaProps, limits: RuleLimits = {}): CompiledSchema {
  const check = compileValidator(schema);
  // The rules compile on the first validation, CEL loaded by then (see engines.ts): serving a kind does not load CEL.
  const declaresRules = schemaNeeds(schema).rules;
  let compiledRules: RuleWalk | undefined;
  let rulesCompiled = !declaresRules;
  const rulesOf = () => {
    if (!rulesCompiled) {
      compiledRules = cel().compileRules(schema, limits);
      rulesCompiled = true;
    }
    return compiledRules;
  };
  const applyDefaults = compileDefaulter(schema);
  const prune = compilePruner(schema);
  const run = (obj: unknown, old: unknown): FieldError[] => {
    const errs: FieldError[] = [];
    check(obj, '', errs);
    const rules = rulesOf();
    if (!rules) return errs;
    // As upstream: rules are not run over an object of the wrong shape (type, enum, required, size);
    // nor, here, over one whose errors filled the list (the validator stopped walking it).
    if (errs.length > maxListedErrors || errs.some((e) => blocking.has(e.type))) {
      errs.push(fieldErrors.invalid('<nil>', null, notChecked));
      return errs;
    }
    rules(obj, old, '', errs, { remaining: limits.perRequest ?? cel().costLimits.perRequest });
    return errs;
  };
  return { prune, applyDefaults, validate: (obj) => run(obj, undefined), validateUpdate: run };
}
export type { Compiled } from './cel/program.js';
export type { AuthorizationAnswers } from './cel/authz.js';
export { cel, celLoaded, loadCel, loadRe2, loaderFor, re2, re2Loaded, schemaNeeds } from './engines.js';

// CEL's entry points, for callers that loaded it (loadCel): importing them loads nothing.
export const compileExpression: typeof CelParts.compileExpression = (...args) => cel().compileExpression(...args);
export const jsonToCel: typeof CelParts.jsonToCel = (...args) => cel().jsonToCel(...args);
export const authorizerValue: typeof CelParts.authorizerValue = (...args) => cel().authorizerValue(...args);
export const withAuthorizationAnswers: typeof CelParts.withAuthorizationAnswers = (...args) => cel().withAuthorizationAnswers(...args);

/** The variables of an admission webhook's match conditions (see admission/webhook/conditions.ts). */
export const matchConditionVariables = ['object', 'oldObject', 'request', 'authorizer'] as const;
