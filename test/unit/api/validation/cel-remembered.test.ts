// Rules whose passing outcome is remembered by the fields they read
// (cel/remembered.ts): which rules qualify, and that a remembered outcome
// answers exactly as running the rules would (errors, costs, budgets,
// oldSelf, null against absent).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FieldError } from '../../../../src/machinery/errors.js';
import { markers, type JSONSchemaProps, type ValidationRule } from '../../../../src/api/validation/index.js';
import { compileRules, compileRule } from '../../../../src/api/validation/cel/rules.js';
import { rememberedOutcomesFor } from '../../../../src/api/validation/cel/remembered.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

await Promise.all([loadCel(), loadRe2()]);

const withRules = (s: JSONSchemaProps, ...rules: (string | ValidationRule)[]): JSONSchemaProps =>
  ({ ...s, [markers.validations]: rules.map((r) => (typeof r === 'string' ? { rule: r } : r)) });
const node: JSONSchemaProps = {
  type: 'object',
  properties: {
    type: { type: 'string' }, value: { type: 'string' }, port: { type: 'integer' }, on: { type: 'boolean' },
    either: { [markers.intOrString]: true } as JSONSchemaProps,
    nested: { type: 'object', properties: { a: { type: 'string' } } }, tags: { type: 'array', items: { type: 'string' } },
    name: { type: 'string', nullable: true }, 'a-b': { type: 'string' },
  },
};

function keyed(...rules: string[]): boolean {
  const asts = rules.map((r) => { const c = compileRule({ rule: r }); assert.ok(c.program, `${r}: ${c.compileError}`); return c.program.ast; });
  return rememberedOutcomesFor(node, asts) !== undefined;
}

test('only rules that read fields of self, scalar ones by value, are remembered', () => {
  const cases: [string[], boolean][] = [
    [["self.type in ['Exact', 'PathPrefix'] ? self.value.startsWith('/') : true"], true],
    [['!(has(self.nested) && self.type != "Nested")', 'size(self.value) < 10 && self.port > 0 && self.on'], true],
    [["self.either == 'x' || has(self.tags)"], true],
    [['self.value == oldSelf.value'], true],
    [['self.size() > 0'], false], // self as a whole
    [["self == {'type': 'x'}"], false],
    [["self['type'] == 'x'"], false], // indexed
    [["self.?type.orValue('') == ''"], false], // through an optional
    [["self.nested.a == 'x'"], false], // an object's value
    [['self.tags.all(t, t != "")'], false], // a list's value
    [["self.a__dash__b == 'x'"], false], // an escaped name
    [['[1].all(self, self > 0)'], false], // a variable named self
    [["self.type == 'x'", 'self.size() > 0'], false], // one rule of the node reads more
  ];
  for (const [rules, expected] of cases) assert.equal(keyed(...rules), expected, rules.join(' ; '));
  assert.equal(rememberedOutcomesFor({ type: 'array', items: { type: 'string' } }, [compileRule({ rule: 'true' }).program!.ast]), undefined);
});

const listOf = (item: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { items: { type: 'array', items: item } } });

function run(schema: JSONSchemaProps, value: unknown, old?: unknown, limits: { perCall?: number; perRequest?: number } = {}): { errors: string[]; spent: number } {
  const errs: FieldError[] = [];
  const budget = { remaining: limits.perRequest ?? 1_000_000 };
  compileRules(schema, limits)!(value, old, '', errs, budget);
  return { errors: errs.map((e) => e.describe()), spent: (limits.perRequest ?? 1_000_000) - budget.remaining };
}

test('a remembered pass does not hide a failing value, and charges what running the rules charges', () => {
  const schema = listOf(withRules(node, "self.value.startsWith('/')", "!has(self.name) || self.name != ''"));
  const items = [{ value: '/a' }, { value: 'a' }, { value: '/a' }, { value: '/a', name: null }, { value: '/a', name: '' }, { value: '/a', name: 'n' }];
  const once = run(schema, { items });
  // The same items each on its own walker (nothing remembered across them), for the expected answer.
  const alone = items.map((item, i) => run(listOf(withRules(node, "self.value.startsWith('/')", "!has(self.name) || self.name != ''")), { items: [...items.slice(0, i).map(() => ({ value: '/z' })), item] }));
  assert.deepEqual(once.errors, [
    "items[1]: Invalid value: \"object\": failed rule: self.value.startsWith('/')",
    "items[4]: Invalid value: \"object\": failed rule: !has(self.name) || self.name != ''",
  ]);
  assert.deepEqual(once.errors, alone.flatMap((a) => a.errors));
  // Validated again (every pass remembered now): the same errors, the same cost.
  assert.deepEqual(run(schema, { items }), once);
  const compiled = compileRules(schema)!;
  const spent: number[] = [];
  for (let round = 0; round < 3; round++) {
    const budget = { remaining: 1_000_000 };
    compiled({ items }, undefined, '', [], budget);
    spent.push(1_000_000 - budget.remaining);
  }
  assert.deepEqual(spent, [once.spent, once.spent, once.spent]);
});

test('the per-request budget runs out at the same item whether outcomes are remembered or not', () => {
  const schema = listOf(withRules(node, "self.value.startsWith('/') && self.value.endsWith('x')"));
  const same = Array.from({ length: 40 }, () => ({ value: '/x' }));
  const different = Array.from({ length: 40 }, (_, i) => ({ value: `/${String.fromCharCode(97 + (i % 26))}x` }));
  const costOfOne = run(schema, { items: [{ value: '/x' }] }).spent;
  const limits = { perRequest: costOfOne * 10 + 1 };
  const compiled = compileRules(schema, limits)!;
  const answers = [same, same, different].map((items) => {
    const errs: FieldError[] = [];
    compiled({ items }, undefined, '', errs, { remaining: limits.perRequest });
    return errs.map((e) => e.describe());
  });
  assert.deepEqual(answers[0], ['items[10]: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run']);
  assert.deepEqual(answers[1], answers[0]);
  assert.deepEqual(answers[2], answers[0]);
});

test('rules reading oldSelf are run again whenever there is an old value', () => {
  const schema = withRules(node, { rule: 'self.value == oldSelf.value', message: 'immutable' });
  const compiled = compileRules(schema)!;
  const answer = (value: unknown, old: unknown) => {
    const errs: FieldError[] = [];
    compiled(value, old, '', errs, { remaining: 1_000_000 });
    return errs.map((e) => e.describe());
  };
  assert.deepEqual(answer({ value: 'a' }, { value: 'a' }), []);
  assert.deepEqual(answer({ value: 'a' }, { value: 'b' }), ['<nil>: Invalid value: "object": immutable']);
  assert.deepEqual(answer({ value: 'a' }, undefined), []);
  assert.deepEqual(answer({ value: 'a' }, { value: 'c' }), ['<nil>: Invalid value: "object": immutable']);
});

test('values that never repeat are answered the same after the node stops remembering', () => {
  const schema = listOf(withRules(node, "self.value.startsWith('/')", 'self.port > 0'));
  const compiled = compileRules(schema)!;
  for (let batch = 0; batch < 30; batch++) {
    const items = Array.from({ length: 100 }, (_, i) => ({ value: i === 7 ? `x${batch}` : `/${batch}-${i}`, port: i === 9 ? 0 : i + 1 }));
    const errs: FieldError[] = [];
    compiled({ items }, undefined, '', errs, { remaining: 10_000_000 });
    assert.deepEqual(errs.map((e) => e.field), ['items[7]', 'items[9]'], `batch ${batch}`);
  }
});

test('a list whose rules read its items through comprehensions is remembered by its length and its items\' fields', () => {
  const list: JSONSchemaProps = { type: 'array', items: node };
  const keyedList = (...rules: string[]) => rememberedOutcomesFor(list, rules.map((r) => compileRule({ rule: r }).program!.ast)) !== undefined;
  const cases: [string[], boolean][] = [
    [["self.filter(f, f.type == 'CORS').size() <= 1", "!(self.exists(f, f.type == 'A') && self.exists(f, f.type == 'B'))"], true],
    [['self.all(a, self.exists_one(b, a.value == b.value))', 'size(self) < 4'], true],
    [['self.all(f, has(f.nested))'], true],
    [["self.all(f, f.nested.a == 'x')"], false], // an object's value
    [["self.all(i, f, f.type == 'x')"], false], // a comprehension's index
    [["self[0].type == 'x'"], false], // indexed
    [['self.all(f, f == f)'], false], // an item as a whole
    [['self.all(f, f.tags.all(f, f != ""))'], false], // an item's variable named again
    [["self.filter(f, f.type == 'A').all(x, x.nested.a == 'y')"], false], // a filtered list read, not counted
    [["self.filter(f, [f][0].nested.a == 'x').size() > 0"], false],
  ];
  for (const [rules, expected] of cases) assert.equal(keyedList(...rules), expected, rules.join(' ; '));

  const schema = { type: 'object', properties: { items: withRules(list, { rule: "self.filter(f, f.type == 'A').size() <= 1", message: 'one A' }) } } as JSONSchemaProps;
  const compiled = compileRules(schema)!;
  const answer = (items: unknown[]) => {
    const errs: FieldError[] = [];
    compiled({ items }, undefined, '', errs, { remaining: 1_000_000 });
    return errs.map((e) => e.describe());
  };
  for (let round = 0; round < 2; round++) {
    assert.deepEqual(answer([{ type: 'A' }, { type: 'B' }]), []);
    assert.deepEqual(answer([{ type: 'A' }, { type: 'A' }]), ['items: Invalid value: "array": one A']);
    assert.deepEqual(answer([{ type: 'B' }, { type: 'A' }, { type: 'A' }]), ['items: Invalid value: "array": one A']);
    assert.deepEqual(answer([{ type: 'B' }, { type: 'A' }]), []);
    // A list too long to be remembered is answered all the same.
    assert.deepEqual(answer(Array.from({ length: 100 }, (_, i) => ({ type: i === 50 || i === 99 ? 'A' : 'B' }))), ['items: Invalid value: "array": one A']);
  }
});
