// The runtime cost meter against rules that grow their values: each call is
// charged from its operands before it runs, and a call that can make its
// result larger than its operands (`format`, `replace`, `strings.quote`,
// list `+`) pays at least a tenth of the size it makes, so the per-call and
// per-request limits stop a rule before its memory grows, whatever the
// static estimate said. Everything here compiles and runs programs with
// their runtime limits directly: no estimator is involved.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression, compileSchema, loadCel, markers, type JSONSchemaProps } from '../../../../src/api/validation/index.js';
import { costLimitExceeded } from '../../../../src/api/validation/cel/program.js';
import { costLimits } from '../../../../src/api/validation/cel/cost.js';

await loadCel();

function evaluate(expr: string, self: unknown, limit = costLimits.perCall) {
  const program = compileExpression(expr, ['self']);
  if (typeof program === 'string') throw new Error(program);
  return program.eval({ self }, limit);
}

/** `depth` nested comprehensions, each doubling the string of the one above through format(); the innermost is `last`. */
function doublingRule(depth: number, last: (v: string) => string): string {
  let body = last(`x${depth}`);
  for (let i = depth; i >= 1; i--) body = `['%s%s'.format([x${i - 1}, x${i - 1}])].all(x${i}, ${body})`;
  return `[self].all(x0, ${body})`;
}

describe('growing values meet the runtime limits', () => {
  test('a string doubled through format() is stopped by the per-call limit, however cheap the rest of the rule', () => {
    // 16 doublings of 100 characters: 6.5 million characters, each format() charged 1 upstream.
    const r = evaluate(doublingRule(16, (v) => `${v}.size() > 0`), 'A'.repeat(100));
    assert.equal(r.exceeded, true);
    assert.equal(r.error, costLimitExceeded);
    // Short of the limit, the rule runs to its answer.
    assert.equal(evaluate(doublingRule(8, (v) => `${v}.lowerAscii().size() == 25600`), 'A'.repeat(100)).value, true);
  });

  test('the same rule in a schema fails with upstream runtime-cost error, not with the heap', () => {
    const rule = doublingRule(22, (v) => `${v}.lowerAscii().size() > 0`);
    const schema: JSONSchemaProps = { type: 'object', properties: { spec: { type: 'object', properties: { s: { type: 'string' } }, [markers.validations]: [{ rule }] } } };
    const errors = compileSchema(schema).validate({ spec: { s: 'A'.repeat(100) } }).map((e) => e.describe());
    assert.deepEqual(errors, [
      `spec: Invalid value: "object": '${costLimitExceeded}': no further validation rules will be run due to call cost exceeds limit for rule: ${rule}`,
    ]);
  });

  test('growth within the per-call limit still runs out of the per-request budget', () => {
    // Each item's rule makes 25,600 characters (about 5,000 of cost): 50 items pass a budget of 100,000.
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'string', [markers.validations]: [{ rule: doublingRule(8, (v) => `${v}.size() > 0`) }] } } },
    };
    const errors = compileSchema(schema, { perRequest: 100_000 }).validate({ items: Array.from({ length: 50 }, () => 'A'.repeat(100)) }).map((e) => e.describe());
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors.at(-1)!, /^items\[\d+\]: Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run$/);
  });

  test('a list doubled through + is stopped by the per-call limit', () => {
    let body = 'l30.size() > 0';
    for (let i = 30; i >= 1; i--) body = `[l${i - 1} + l${i - 1}].all(l${i}, ${body})`;
    const r = evaluate(`[self].all(l0, ${body})`, Array.from({ length: 100 }, (_, i) => i));
    assert.equal(r.exceeded, true);
  });

  test('a call the budget cannot pay for is not run: the cost error, not the failure of building its result', () => {
    // The result would be ten billion characters, past the longest string there can be.
    const r = evaluate("self.replace('', self)", 'a'.repeat(100_000));
    assert.equal(r.exceeded, true);
    assert.equal(r.error, costLimitExceeded);
  });
});

describe("comprehensions' results", () => {
  test('a map over 20,000 items builds one list, read to its end without recursing through each append', () => {
    const r = evaluate('self.map(x, x * 2.0).exists(y, y == 40000.0) && self.filter(x, x > 10.0).size() == 19990', Array.from({ length: 20_000 }, (_, i) => i + 1), costLimits.perRequest);
    assert.equal(r.error, undefined);
    assert.equal(r.value, true);
  });

  test('transformMap over 20,000 items inserts each entry once, and the map it makes reads as any map', () => {
    const items = Array.from({ length: 20_000 }, (_, i) => `v${i}`);
    const r = evaluate("[self.transformMap(i, v, v)].all(m, m.size() == 20000 && m[19999] == 'v19999' && m[0u] == 'v0' && !(20000 in m))", items, costLimits.perRequest);
    assert.equal(r.error, undefined);
    assert.equal(r.value, true);
    // Each value built by insertion shows only its own entries; a key already there is upstream's error.
    assert.equal(evaluate("{'a': 1}.transformMap(k, v, v) == {'a': 1} && ['x', 'y'].transformMap(i, v, i > 0, v) == {1: 'y'}", null).value, true);
  });

  test('a list appended to keeps each earlier value as it was', () => {
    // `a` is appended to twice: the second append must not see the first's item.
    assert.equal(evaluate('[self.map(x, x)].all(a, a + [1] != a + [2] && size(a + [1]) == 3 && (a + [2])[2] == 2)', [5, 6]).value, true);
    const long = Array.from({ length: 40 }, (_, i) => i);
    assert.equal(evaluate('[self.map(x, x)].all(a, (a + [-1])[40] == -1 && (a + [-2])[40] == -2 && size(a) == 40)', long).value, true);
  });
});

describe('what each call is charged', () => {
  const thousand = 'a'.repeat(1000);
  const cases: [string, unknown, number][] = [
    // A tenth of what they make, once that passes upstream's charge of 1 (or its traversal).
    ["'%s%s'.format([self, self])", thousand, 212],
    ["self.replace('', 'xy')", 'a'.repeat(100), 32],
    ['strings.quote(self)', '"'.repeat(100), 22],
    ['self + self', Array.from({ length: 1000 }, (_, i) => i), 102],
    // Upstream's own figures where little grows.
    ["'%d items'.format([5])", null, 1],
    ['strings.quote(self)', 'abc', 2],
    ["self.replace('a', 'b')", 'a'.repeat(100), 21],
    ['self + self', thousand, 202],
    ['self + [1]', Array.from({ length: 1000 }, (_, i) => i), 2],
    ["self.join('-')", ['ab', 'cd'], 2],
    ['self.lowerAscii()', 'ABC'.repeat(100), 31],
  ];
  for (const [expr, self, cost] of cases) {
    test(`${expr} over ${JSON.stringify(self).slice(0, 24)}: ${cost}`, () => {
      const r = evaluate(expr, self);
      assert.equal(r.error, undefined);
      assert.equal(r.cost, cost);
    });
  }
});

describe('the string functions rebuilt to make their result once', () => {
  const cases: [string, unknown][] = [
    // Go's strings.Replace: an empty `old` matches before each character and at the end; a negative count is all.
    ["'abc'.replace('', 'x')", 'xaxbxcx'],
    ["'abc'.replace('', 'x', 2)", 'xaxbc'],
    ["'a😀b'.replace('', '-')", '-a-😀-b-'],
    ["'abcb'.replace('b', 'XY', -1)", 'aXYcXY'],
    ["'abcb'.replace('b', 'XY', 1)", 'aXYcb'],
    ["'abcb'.replace('b', 'XY', 0)", 'abcb'],
    ["'aaaa'.replace('aa', 'b')", 'bb'],
    ["strings.quote('a\"b\\\\c\\n')", '"a\\"b\\\\c\\n"'],
    // Go's strings.Split with an empty separator: one part a character, not a UTF-16 half.
    ["'a😀b'.split('').size()", 3n],
    ["'a,b,,c'.split(',')[2]", ''],
    ["'AbC Ünï'.lowerAscii()", 'abc Ünï'],
    ["'aBc üNï'.upperAscii()", 'ABC üNÏ'.replace('Ï', 'ï')],
    ["'%s-%d-%.2f %% %x|%X|%o|%b|%e'.format(['a', 3, 1.5, 'hi', 255, 8, 5, 1234.5])", 'a-3-1.50 % 6869|FF|10|101|1.234500e+03'],
    ["'%s'.format([[1, 'a', {'k': true}]])", '[1, a, {k: true}]'],
    ["'%s %s'.format(['a'])", 'error: invalid argument to function format: too few arguments for format string'],
    ["'%s'.format(['a', 'b'])", 'error: invalid argument to function format: too many arguments for format string'],
    ["'x%'.format([])", 'error: invalid argument to function format: invalid format string'],
    ["'%.2'.format([1.0])", 'error: invalid argument to function format: invalid format string'],
    ["'%q'.format([1])", 'error: invalid argument to function format: could not parse formatting clause: unrecognized formatting clause: q'],
  ];
  for (const [expr, expected] of cases) {
    test(expr, () => {
      const r = evaluate(expr, null);
      assert.equal(r.error === undefined ? r.value : `error: ${r.error}`, expected);
    });
  }
});
