// The CEL parser and interpreter of validation rules against the CEL
// specification's own tests (@bufbuild/cel-spec's test data, taken from
// cel-go and the conformance suite):
//   - every parser test with an expected tree gets that tree (cel-go's debug
//     form), and the syntax errors stay errors, except the optional syntax,
//     which upstream turns on for validation rules and we read;
//   - every conformance expression the library's own planner evaluates gives
//     the same result here (the library is conformance-tested), except for
//     what this environment leaves out by design;
//   - the optional values' and two-variable comprehensions' tests give the
//     specification's expected values.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { celEnv, isCelError, parse, plan, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { RE2JS } from '@bufbuild/re2';
import { tests as parsing } from '@bufbuild/cel-spec/testdata/parsing.js';
import { tests as conformance } from '@bufbuild/cel-spec/testdata/conformance.js';
import { KindAdorner, toDebugString } from '@bufbuild/cel-spec/testdata/to-debug-string.js';
import type { SerializedIncrementalTest, SerializedIncrementalTestSuite } from '@bufbuild/cel-spec/testdata/tests.js';
import { parseCel } from '../../../../src/api/validation/cel/parser.js';
import { compileExpression } from '../../../../src/api/validation/index.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

function flatten(suite: SerializedIncrementalTestSuite, path = ''): [string, SerializedIncrementalTest][] {
  const here = `${path}/${suite.name}`;
  return [...(suite.tests ?? []).map((t) => [here, t] as [string, SerializedIncrementalTest]), ...(suite.suites ?? []).flatMap((s) => flatten(s, here))];
}

describe('the parser against cel-go\'s parser tests', () => {
  const cases = flatten(parsing).map(([, t]) => t);

  test('every expected tree', () => {
    const wrong: string[] = [];
    for (const t of cases.filter((c) => c.ast)) {
      let got: string;
      try { got = toDebugString(parseCel(t.original.expr), KindAdorner.singleton); } catch (e) { got = (e as Error).message; }
      if (got !== t.ast) wrong.push(t.original.expr);
    }
    assert.equal(cases.filter((c) => c.ast).length > 100, true);
    assert.deepEqual(wrong, []);
  });

  test('syntax errors stay errors (but the optional syntax, which is on here)', () => {
    // Nesting limits are parser options upstream; the `__result__` accumulator is cel-go's old name.
    const elsewhere = (t: SerializedIncrementalTest) => /unsupported syntax|recursion|__result__|nesting|max recursion/.test(t.error ?? '') || t.original.expr.length > 60;
    const accepted: string[] = [];
    for (const t of cases.filter((c) => c.error && !c.ast && !elsewhere(c))) {
      try { parseCel(t.original.expr); accepted.push(t.original.expr); } catch { /* refused, as upstream */ }
    }
    assert.deepEqual(accepted, []);
  });
});

describe('the interpreter against the conformance suite', () => {
  const env = celEnv({ funcs: strings, re2: { compile: (p: string) => RE2JS.compile(p) } });
  const equals = env.funcs.find('_==_')!;
  const suites = /^\/conformance\/(basic|comparisons|conversions|fields|fp_math|integer_math|lists|logic|macros|parse|string|string_ext|timestamps)\//;
  // Protobuf messages cannot be built in validation rules; unbound names are compile errors, as in upstream's checked environment.
  const leftOut = (expr: string) => /google\.protobuf\.\w+\{|TestAllTypes|NestedTestAllTypes/.test(expr);

  test('the same results as the library\'s planner', () => {
    const differ: string[] = [];
    let compared = 0;
    for (const [path, t] of flatten(conformance)) {
      const o = t.original as { expr: string; bindings?: unknown; typeEnv?: unknown; container?: string; disableMacros?: boolean };
      if (!suites.test(`${path}/`) || o.bindings || o.typeEnv || o.container || o.disableMacros || leftOut(o.expr)) continue;
      let expected: unknown;
      try { expected = plan(env, parse(o.expr))({}); } catch { continue; }
      const program = compileExpression(o.expr, []);
      if (typeof program === 'string') {
        if (!/undeclared reference/.test(program)) differ.push(`${o.expr}: ${program}`);
        continue;
      }
      compared++;
      const r = program.eval({}, Number.MAX_SAFE_INTEGER);
      const same = isCelError(expected) ? r.error !== undefined : r.error === undefined && equals.call(0, undefined, [expected as CelValue, r.value!]) === true;
      if (!same) differ.push(`${o.expr}: ${r.error ?? String(r.value)}`);
    }
    assert.equal(compared > 1000, true, `compared ${compared}`);
    assert.deepEqual(differ, []);
  });

  // The library evaluates neither optional values nor two-variable comprehensions: these suites are held to the specification's values.
  test('optional values and two-variable comprehensions give the specification\'s expected values', () => {
    const differ: string[] = [];
    let compared = 0;
    for (const [path, t] of flatten(conformance)) {
      if (!path.includes('/optionals') && !path.includes('/macros2')) continue;
      const o = t.original as { expr: string; value?: Record<string, unknown>; evalError?: unknown };
      if (leftOut(o.expr) || /optional_type/.test(o.expr)) continue;
      const program = compileExpression(o.expr, []);
      if (typeof program === 'string') { differ.push(`${o.expr}: ${program}`); continue; }
      const r = program.eval({}, Number.MAX_SAFE_INTEGER);
      const v = o.value ?? {};
      const want = 'boolValue' in v ? v.boolValue : 'int64Value' in v ? BigInt(v.int64Value as string) : 'stringValue' in v ? v.stringValue : 'doubleValue' in v ? v.doubleValue : undefined;
      if (o.evalError) { compared++; if (r.error === undefined) differ.push(`${o.expr}: ${String(r.value)}, not an error`); continue; }
      if (want === undefined) continue;
      compared++;
      if (r.value !== want) differ.push(`${o.expr}: ${r.error ?? String(r.value)}, not ${String(want)}`);
    }
    assert.equal(compared > 60, true, `compared ${compared}`);
    assert.deepEqual(differ, []);
  });
});
