// Type checking of a ValidatingAdmissionPolicy's validations against the
// kinds it matches, as upstream's type checker reports it in
// `status.typeChecking`: each validation's expression and messageExpression
// is checked with `object` and `oldObject` typed by the schema of each kind
// (and `params` by the paramKind's, when known); what does not check is one
// warning per expression, a line per kind: `apps/v1, Kind=Deployment:
// ERROR: <input>:1:7: undefined field 'replicas'` with cel-go's excerpt.
//
// The checker is a light inference over the syntax tree, enough for what
// upstream's warnings are mostly about: fields the schema does not have,
// and operators applied to operands of types no overload takes (a string
// compared with a number). Anything it cannot type is `dyn` and checks.

import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { cel } from '../../validation/engines.js';
import { resolve, type Schema } from '../../schema.js';
import { ObjectMeta } from '../../meta/v1.js';
import type { JSONSchemaProps } from '../../validation/structural.js';

/** A CEL type as far as the checker knows it. */
export type CelType =
  | { kind: 'int' | 'uint' | 'double' | 'string' | 'bool' | 'bytes' | 'timestamp' | 'duration' | 'null' | 'dyn' }
  | { kind: 'list'; elem: () => CelType }
  | { kind: 'map'; elem: () => CelType }
  | { kind: 'object'; field: (name: string) => CelType | undefined };

const dyn: CelType = { kind: 'dyn' };
const prim = (kind: 'int' | 'uint' | 'double' | 'string' | 'bool' | 'bytes' | 'timestamp' | 'duration' | 'null'): CelType => ({ kind });

function stringType(format: string | undefined): CelType {
  if (format === 'date-time') return prim('timestamp');
  if (format === 'byte') return prim('bytes');
  return prim('string');
}

/** The type of values of a built-in kind's schema. */
export function typeOfSchema(raw: Schema): CelType {
  const s = resolve(raw);
  if (s.intOrString || s.preserveUnknownFields) return dyn;
  switch (s.type) {
    case 'integer': return prim('int');
    case 'number': return prim('double');
    case 'boolean': return prim('bool');
    case 'string': return s.protoMessage === 'quantity' ? dyn : stringType(s.format);
    case 'array': return s.items ? { kind: 'list', elem: () => typeOfSchema(s.items!) } : dyn;
    case 'object': {
      if (s.additionalProperties) return { kind: 'map', elem: () => typeOfSchema(s.additionalProperties!) };
      const props = s.properties;
      if (!props || Object.keys(props).length === 0) return dyn;
      return { kind: 'object', field: (name) => (Object.hasOwn(props, name) ? typeOfSchema(props[name]!) : undefined) };
    }
    default: return dyn;
  }
}

/** The type of values of a custom resource's schema; `root` adds what every object has (apiVersion, kind, metadata). */
export function typeOfJsonSchema(s: JSONSchemaProps, root = false): CelType {
  if (s['x-kubernetes-int-or-string'] === true || s['x-kubernetes-preserve-unknown-fields'] === true) return dyn;
  const embedded = root || s['x-kubernetes-embedded-resource'] === true;
  switch (s.type) {
    case 'integer': return prim('int');
    case 'number': return prim('double');
    case 'boolean': return prim('bool');
    case 'string': return stringType(s.format);
    case 'array': return s.items ? { kind: 'list', elem: () => typeOfJsonSchema(s.items!) } : dyn;
    case 'object': {
      if (typeof s.additionalProperties === 'object') return { kind: 'map', elem: () => typeOfJsonSchema(s.additionalProperties as JSONSchemaProps) };
      if (s.additionalProperties === true) return { kind: 'map', elem: () => dyn };
      const props = s.properties ?? {};
      if (!embedded && Object.keys(props).length === 0) return dyn;
      return {
        kind: 'object',
        field: (name) => {
          if (Object.hasOwn(props, name)) return typeOfJsonSchema(props[name]!);
          if (!embedded) return undefined;
          if (name === 'apiVersion' || name === 'kind') return prim('string');
          return name === 'metadata' ? typeOfSchema(ObjectMeta) : undefined;
        },
      };
    }
    default: return dyn;
  }
}

const numeric = new Set(['int', 'uint', 'double']);
/** The overload family of a primitive type: operators take operands of one family (numbers mix). */
const family = (t: CelType): string | undefined => (numeric.has(t.kind) ? 'number'
  : ['string', 'bool', 'bytes', 'timestamp', 'duration'].includes(t.kind) ? t.kind : undefined);

const comparisons: Record<string, string> = { '_==_': '==', '_!=_': '!=', '_<_': '<', '_<=_': '<=', '_>_': '>', '_>=_': '>=' };
const arithmetic: Record<string, string> = { '_+_': '+', '_-_': '-', '_*_': '*', '_/_': '/', '_%_': '%' };

/** cel-go's name of a type in an overload error. */
const typeName = (t: CelType): string => (t.kind === 'object' ? 'object' : t.kind === 'list' ? 'list(dyn)' : t.kind === 'map' ? 'map(string, dyn)' : t.kind === 'null' ? 'null_type' : t.kind);

interface Issue { at: number; message: string }

class Checker {
  readonly issues: Issue[] = [];
  /** Where the search for each token's next occurrence resumes (the tree holds no positions; tokens come in source order). */
  private readonly cursor = new Map<string, number>();

  constructor(private readonly source: string, private readonly variables: ReadonlyMap<string, CelType>) {}

  /** The offset of the next `token` in the source (operators not part of a longer one). */
  private find(token: string, pattern: RegExp): number {
    pattern.lastIndex = this.cursor.get(token) ?? 0;
    const m = pattern.exec(this.source);
    if (!m) return 0;
    this.cursor.set(token, m.index + 1);
    return m.index;
  }

  private fieldAt(field: string): number {
    return this.find(`.${field}`, new RegExp(`\\.\\s*${field.replace(/[^A-Za-z0-9_]/g, '')}(?![A-Za-z0-9_])`, 'g'));
  }

  private operatorAt(op: string): number {
    const escaped = op.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    return this.find(op, new RegExp(`(?<![=!<>])${escaped}(?!=)`, 'g'));
  }

  type(e: Expr, scope: ReadonlyMap<string, CelType>): CelType {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': {
        switch (k.value.constantKind.case) {
          case 'int64Value': return prim('int');
          case 'uint64Value': return prim('uint');
          case 'doubleValue': return prim('double');
          case 'stringValue': return prim('string');
          case 'boolValue': return prim('bool');
          case 'bytesValue': return prim('bytes');
          case 'nullValue': return prim('null');
          default: return dyn;
        }
      }
      case 'identExpr': return scope.get(k.value.name) ?? this.variables.get(k.value.name) ?? dyn;
      case 'selectExpr': {
        const operand = k.value.operand ? this.type(k.value.operand, scope) : dyn;
        const field = k.value.field;
        let result: CelType = dyn;
        if (operand.kind === 'object') {
          const found = operand.field(field);
          if (found) result = found;
          else this.issues.push({ at: this.fieldAt(field), message: `undefined field '${field}'` });
        } else if (operand.kind === 'map') result = operand.elem();
        return k.value.testOnly ? prim('bool') : result;
      }
      case 'callExpr': {
        const fn = k.value.function;
        const target = k.value.target ? this.type(k.value.target, scope) : undefined;
        const args = k.value.args.map((a) => this.type(a, scope));
        const op = comparisons[fn] ?? arithmetic[fn];
        if (op && args.length === 2) {
          const [a, b] = args as [CelType, CelType];
          const fa = family(a);
          const fb = family(b);
          const mixedTime = (fn === '_+_' || fn === '_-_') && fa !== fb && [fa, fb].every((f) => f === 'timestamp' || f === 'duration');
          if (fa && fb && fa !== fb && !mixedTime) {
            this.issues.push({ at: this.operatorAt(op), message: `found no matching overload for '${fn}' applied to '(${typeName(a)}, ${typeName(b)})'` });
            return comparisons[fn] ? prim('bool') : dyn;
          }
          if (comparisons[fn]) return prim('bool');
          return a.kind === b.kind && fa ? a : dyn;
        }
        if (fn === '_&&_' || fn === '_||_' || fn === '!_' || fn === '@in') return prim('bool');
        if (fn === '_[_]' && args.length === 2) {
          const base = args[0]!;
          return base.kind === 'list' || base.kind === 'map' ? base.elem() : dyn;
        }
        if (fn === 'size') return prim('int');
        if (fn === '_?_:_' && args.length === 3) return args[1]!.kind === args[2]!.kind && family(args[1]!) ? args[1]! : dyn;
        if (['startsWith', 'endsWith', 'contains', 'matches'].includes(fn) && target) return prim('bool');
        return dyn;
      }
      case 'listExpr':
        for (const el of k.value.elements) this.type(el, scope);
        return { kind: 'list', elem: () => dyn };
      case 'structExpr':
        for (const en of k.value.entries) {
          if (en.keyKind.case === 'mapKey') this.type(en.keyKind.value, scope);
          if (en.value) this.type(en.value, scope);
        }
        return dyn;
      case 'comprehensionExpr': {
        const c = k.value;
        const range = c.iterRange ? this.type(c.iterRange, scope) : dyn;
        const inner = new Map(scope);
        if (c.iterVar) inner.set(c.iterVar, range.kind === 'list' ? range.elem() : range.kind === 'map' ? prim('string') : dyn);
        if (c.iterVar2) inner.set(c.iterVar2, range.kind === 'map' ? range.elem() : dyn);
        if (c.accuInit) inner.set(c.accuVar, this.type(c.accuInit, scope));
        for (const part of [c.loopCondition, c.loopStep]) if (part) this.type(part, inner);
        return c.result ? this.type(c.result, inner) : dyn;
      }
      default:
        return dyn;
    }
  }
}

/** cel-go's rendering of an issue: `ERROR: <input>:line:column: message` and the line with a caret under the place. */
function render(source: string, issue: Issue): string {
  const before = source.slice(0, issue.at);
  const line = before.split('\n').length;
  const column = issue.at - (before.lastIndexOf('\n') + 1) + 1;
  const text = source.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${column}: ${issue.message}\n | ${text}\n | ${'.'.repeat(column - 1)}^`;
}

/** An object type with the given fields, each of unknown type (a policy's `variables`). */
export function fieldsType(names: ReadonlySet<string>): CelType {
  return { kind: 'object', field: (name) => (names.has(name) ? dyn : undefined) };
}

/**
 * The issues of `expression` with `object`/`oldObject` of type `object`,
 * `params` of type `params` and `variables` of type `variables`; undefined
 * when it checks (or does not parse: validation reported that).
 */
export function checkExpression(expression: string, object: CelType, params: CelType = dyn, variables: CelType = dyn): string | undefined {
  let ast: Expr;
  try {
    ast = cel().parseCel(expression);
  } catch {
    return undefined;
  }
  const checker = new Checker(expression, new Map([['object', object], ['oldObject', object], ['params', params], ['variables', variables]]));
  checker.type(ast, new Map());
  return checker.issues.length ? checker.issues.map((i) => render(expression, i)).join('\n') : undefined;
}

export interface ExpressionWarning { fieldRef: string; warning: string }

/** A kind to check against, by its name in warnings (`apps/v1, Kind=Deployment`). */
export interface CheckedType { gvk: string; type: CelType }

/** The warnings of a policy's validations over `types`, as upstream's checker sets them in status. */
export function policyTypeWarnings(policy: Record<string, any>, types: readonly CheckedType[], params?: CelType): ExpressionWarning[] {
  const warnings: ExpressionWarning[] = [];
  if (types.length === 0) return warnings;
  const validations: unknown[] = Array.isArray(policy.spec?.validations) ? policy.spec.validations : [];
  const check = (expression: unknown, fieldRef: string) => {
    if (typeof expression !== 'string' || !expression.trim()) return;
    const lines = types.flatMap(({ gvk, type }) => {
      const issues = checkExpression(expression, type, params);
      return issues ? [`${gvk}: ${issues}`] : [];
    });
    if (lines.length) warnings.push({ fieldRef, warning: lines.join('\n') });
  };
  validations.forEach((v, i) => {
    if (typeof v !== 'object' || v === null) return;
    const validation = v as Record<string, unknown>;
    check(validation.expression, `spec.validations[${i}].expression`);
    if (validation.messageExpression) check(validation.messageExpression, `spec.validations[${i}].messageExpression`);
  });
  return warnings;
}
