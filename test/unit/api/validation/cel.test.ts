// CEL validation rules: messages, messageExpression, fieldPath and reason,
// transition rules with oldSelf, the Kubernetes libraries, and upstream's
// cost limits (refused at declaration, stopped at run time).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSchema, compileSchema, markers, type JSONSchemaProps, type ValidationRule } from '../../../../src/api/validation/index.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

const rules = (...r: ValidationRule[]) => ({ [markers.validations]: r });
const obj = (properties: Record<string, JSONSchemaProps>, extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps => ({ type: 'object', properties, ...extra });

const spec = (extra: Partial<JSONSchemaProps>): JSONSchemaProps => obj({
  spec: obj({
    replicas: { type: 'integer' },
    minReplicas: { type: 'integer' },
    name: { type: 'string', maxLength: 63 },
    tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 20 } },
  }, extra),
});

const describeAll = (schema: JSONSchemaProps, value: unknown, old?: unknown): string[] => {
  const compiled = compileSchema(schema);
  return (old === undefined ? compiled.validate(value) : compiled.validateUpdate(value, old)).map((e) => e.describe());
};

describe('CEL rules', () => {
  test('a rule that holds passes; one that fails says "failed rule" with the rule, or its message', () => {
    const schema = spec(rules({ rule: 'self.minReplicas <= self.replicas' }, { rule: 'self.replicas < 100', message: 'too many replicas' }));
    assert.deepEqual(describeAll(schema, { spec: { replicas: 3, minReplicas: 1 } }), []);
    assert.deepEqual(describeAll(schema, { spec: { replicas: 300, minReplicas: 400 } }), [
      'spec: Invalid value: "object": failed rule: self.minReplicas <= self.replicas',
      'spec: Invalid value: "object": too many replicas',
    ]);
  });

  test('a rule on a scalar shows the value; integers are CEL ints', () => {
    const schema = obj({ spec: obj({ replicas: { type: 'integer', ...rules({ rule: 'self % 2 == 0', message: 'must be even' }) } }) });
    assert.deepEqual(describeAll(schema, { spec: { replicas: 3 } }), ['spec.replicas: Invalid value: "integer": must be even']);
  });

  test('messageExpression builds the message; fieldPath and reason place and type the error', () => {
    const schema = spec(rules({
      rule: 'self.replicas >= self.minReplicas',
      messageExpression: "'replicas (' + string(self.replicas) + ') below minimum ' + string(self.minReplicas)",
      fieldPath: '.replicas',
      reason: 'FieldValueForbidden',
    }));
    assert.deepEqual(describeAll(schema, { spec: { replicas: 1, minReplicas: 2 } }), ['spec.replicas: Forbidden: replicas (1) below minimum 2']);
  });

  test('a messageExpression that fails to evaluate falls back to the message', () => {
    const schema = spec(rules({ rule: 'false', message: 'plain', messageExpression: 'string(1/0)' }));
    assert.deepEqual(describeAll(schema, { spec: {} }), ['spec: Invalid value: "object": plain']);
  });

  test('transition rules run on update only, with oldSelf the stored value', () => {
    const schema = obj({ spec: obj({ name: { type: 'string', ...rules({ rule: 'self == oldSelf', message: 'name is immutable' }) } }) });
    assert.deepEqual(describeAll(schema, { spec: { name: 'a' } }), [], 'no oldSelf on create');
    assert.deepEqual(describeAll(schema, { spec: { name: 'a' } }, { spec: { name: 'a' } }), []);
    assert.deepEqual(describeAll(schema, { spec: { name: 'b' } }, { spec: { name: 'a' } }), ['spec.name: Invalid value: "string": name is immutable']);
  });

  test('list-map items find their old selves by key', () => {
    const schema = obj({
      spec: obj({
        ports: {
          type: 'array', [markers.listType]: 'map', [markers.listMapKeys]: ['name'],
          items: obj({ name: { type: 'string' }, port: { type: 'integer' } }, rules({ rule: 'self.port >= oldSelf.port', message: 'port may only grow' })),
        },
      }),
    });
    const old = { spec: { ports: [{ name: 'a', port: 10 }, { name: 'b', port: 20 }] } };
    assert.deepEqual(describeAll(schema, { spec: { ports: [{ name: 'b', port: 25 }, { name: 'a', port: 5 }, { name: 'c', port: 1 }] } }, old),
      ['spec.ports[1]: Invalid value: "object": port may only grow']);
  });

  test('optionalOldSelf runs the rule on create too, oldSelf an optional', () => {
    const schema = obj({ spec: obj({ name: { type: 'string', ...rules({ rule: "!oldSelf.hasValue() || self == oldSelf.value()", optionalOldSelf: true, message: 'immutable once set' }) } }) });
    assert.deepEqual(describeAll(schema, { spec: { name: 'a' } }), []);
    assert.deepEqual(describeAll(schema, { spec: { name: 'b' } }, { spec: { name: 'a' } }), ['spec.name: Invalid value: "string": immutable once set']);
  });

  test('the optional syntax: .?field, [?key], optional entries, optMap; oldSelf.? in a rule with optionalOldSelf', () => {
    const schema = obj({
      spec: obj({
        name: { type: 'string', maxLength: 63 },
        labels: { type: 'object', maxProperties: 10, additionalProperties: { type: 'string', maxLength: 20 } },
      }, rules(
        { rule: "self.?name.orValue('x').size() <= 10", message: 'name too long' },
        { rule: "self.?labels[?'team'].optMap(t, t != 'nobody').orValue(true)", message: 'team nobody' },
        { rule: "[?self.?name, ?optional.none(), 'z'].size() >= 1 && {?'n': self.?name, 'k': 1}.size() >= 1" },
        { rule: "!oldSelf.hasValue() || !has(oldSelf.value().name) || (has(self.name) && oldSelf.value().name == self.name)", optionalOldSelf: true, message: 'name is immutable' },
      )),
    });
    assert.deepEqual(checkSchema(schema, 's').map((e) => e.describe()), []);
    assert.deepEqual(describeAll(schema, { spec: {} }), []);
    assert.deepEqual(describeAll(schema, { spec: { name: 'a-very-long-name', labels: { team: 'nobody' } } }), ['spec: Invalid value: "object": name too long', 'spec: Invalid value: "object": team nobody']);
    assert.deepEqual(describeAll(schema, { spec: { name: 'b' } }, { spec: { name: 'a' } }), ['spec: Invalid value: "object": name is immutable']);
    assert.deepEqual(describeAll(schema, { spec: { name: 'a' } }, { spec: { name: 'a' } }), []);
  });

  test('an evaluation error is reported with the rule', () => {
    const schema = spec(rules({ rule: 'self.replicas / self.minReplicas > 1' }));
    assert.deepEqual(describeAll(schema, { spec: { replicas: 1, minReplicas: 0 } }), ['spec: Invalid value: "object": int divide by zero evaluating rule: self.replicas / self.minReplicas > 1']);
  });

  test('rules are not run over an object with type errors', () => {
    const schema = spec(rules({ rule: 'self.replicas > 0' }));
    assert.deepEqual(describeAll(schema, { spec: { replicas: 'many' } }), [
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
    const withRequired = obj({ spec: obj({ replicas: { type: 'integer' } }, { required: ['replicas'], ...rules({ rule: 'self.replicas > 0' }) }) });
    assert.deepEqual(describeAll(withRequired, { spec: {} }), [
      'spec.replicas: Required value',
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });
});

describe('the Kubernetes CEL libraries', () => {
  const cases: [string, unknown][] = [
    ["self.tags.isSorted() && ![2, 1].isSorted()", { tags: ['a', 'b'] }],
    ['[1, 5, 3].sum() == 9 && [1, 5, 3].max() == 5 && [1, 5, 3].min() == 1 && [1, 5, 3].indexOf(5) == 1', {}],
    ["self.name.find('[0-9]+') == '42' && 'a1b22'.findAll('[0-9]+') == ['1', '22']", { name: 'abc42' }],
    ["url('https://example.com:8443/path?x=1').getHost() == 'example.com:8443' && isURL('https://a') && !isURL('not a url')", {}],
    ["ip('10.0.0.1').family() == 4 && ip('::1').isLoopback() && cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP('11.0.0.1')", {}],
    ["isIP('1.2.3.4') && !isIP('1.2.3') && cidr('192.168.1.7/24').masked() == cidr('192.168.1.0/24') && ip('2001:db8::1').isCanonical()", {}],
    ["quantity('1Gi').isGreaterThan(quantity('100Mi')) && quantity('500m').asApproximateFloat() == 0.5 && quantity('2k').asInteger() == 2000 && isQuantity('1.5Gi') && !isQuantity('abc')", {}],
    ["quantity('1').add(quantity('500m')).compareTo(quantity('1500m')) == 0 && quantity('1').sub(2).sign() == -1", {}],
    ["!format.dns1123Label().validate('ok-name').hasValue() && format.dns1123Label().validate('Not_OK').value().size() > 0", {}],
    ["self.name.lowerAscii() == 'abc42' && self.name.upperAscii().charAt(0) == 'A' && 'a,b'.split(',') == ['a', 'b'] && self.name.matches('^a')", { name: 'aBc42' }],
    ["sets.contains(self.tags, ['a']) && !sets.contains(['a'], self.tags) && sets.contains([], []) && sets.contains([1, 2.0, 3u], [1.0, 2u, 3])", { tags: ['a', 'b'] }],
    ["sets.equivalent(self.tags, ['b', 'a', 'a']) && !sets.equivalent(self.tags, ['a']) && sets.intersects(self.tags, ['x', 'b']) && !sets.intersects(self.tags, [])", { tags: ['a', 'b'] }],
    ["self.tags.all(i, t, i < 2 && t.size() < 5) && self.tags.exists(i, t, i == 1 && t == 'b') && self.tags.existsOne(i, t, t == 'a') && self.tags.transformList(i, t, i == 0, t + '!') == ['a!']", { tags: ['a', 'b'] }],
    ["{'a': 1, 'b': 2}.transformMap(k, v, v * 10) == {'a': 10, 'b': 20} && {'a': 1, 'b': 2}.transformMap(k, v, v > 1, k) == {'b': 'b'} && {'a': 1}.all(k, v, k == 'a' && v == 1)", {}],
    ["self.tags.all(t, t.size() < 5) && self.tags.exists(t, t == 'a') && self.tags.map(t, t + '!') == ['a!', 'b!']", { tags: ['a', 'b'] }],
  ];
  for (const [rule, value] of cases) {
    test(rule, () => {
      const schema = spec(rules({ rule }));
      assert.deepEqual(checkSchema(schema, 'schema').map((e) => e.describe()), []);
      assert.deepEqual(describeAll(schema, { spec: value }), []);
    });
  }
});

describe('cost limits', () => {
  test('a rule over unbounded lists and strings is refused when declared, with upstream message', () => {
    const schema = obj({
      spec: obj({ items: { type: 'array', items: { type: 'string' } } }, rules({ rule: "self.items.all(x, self.items.all(y, x.contains(y)))" })),
    });
    const errs = checkSchema(schema, 'spec.validation.openAPIV3Schema').map((e) => e.describe());
    assert.deepEqual(errs.length >= 1, true);
    assert.match(errs[0]!, /^spec\.validation\.openAPIV3Schema\.properties\[spec\]\.x-plat-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule\(s\), or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)$/);
  });

  test('the same rule with bounds is accepted', () => {
    const schema = obj({
      spec: obj({ items: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 20 } } }, rules({ rule: "self.items.all(x, self.items.all(y, x.contains(y)))" })),
    });
    assert.deepEqual(checkSchema(schema, 'schema'), []);
  });

  test('a rule under an unbounded list costs its own cost times the list bound', () => {
    const each = { type: 'string', maxLength: 10000, ...rules({ rule: "self.contains('a') && self.contains('b') && self.contains('c')" }) };
    const bounded = obj({ spec: obj({ l: { type: 'array', maxItems: 10, items: each } }) });
    const unbounded = obj({ spec: obj({ l: { type: 'array', items: { type: 'array', items: each } } }) });
    assert.deepEqual(checkSchema(bounded, 's'), []);
    assert.match(checkSchema(unbounded, 's')[0]!.describe(), /s\.properties\[spec\]\.properties\[l\]\.items\.items\.x-plat-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget/);
  });

  test('at run time, a call over the per-call limit stops every further rule', () => {
    const schema = obj({ spec: obj({ l: { type: 'array', items: { type: 'integer' } } }, rules({ rule: 'self.l.all(x, self.l.all(y, x + y >= 0))' }, { rule: 'false' })) });
    const compiled = compileSchema(schema, { perCall: 1000 });
    const errs = compiled.validate({ spec: { l: Array.from({ length: 100 }, (_, i) => i) } }).map((e) => e.describe());
    assert.deepEqual(errs, ["spec: Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(x, self.l.all(y, x + y >= 0))"]);
  });

  test('at run time, the per-request budget stops the rules once spent', () => {
    const item = obj({ n: { type: 'integer' } }, rules({ rule: '[1,2,3,4,5].all(x, x + self.n > 0)' }));
    const schema = obj({ spec: obj({ l: { type: 'array', items: item } }) });
    const compiled = compileSchema(schema, { perRequest: 50 });
    const errs = compiled.validate({ spec: { l: Array.from({ length: 20 }, () => ({ n: 1 })) } }).map((e) => e.describe());
    assert.equal(errs.length, 1);
    assert.match(errs[0]!, /^spec\.l\[\d+\]: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run$/);
  });
});

describe('libraries upstream 1.32 does not offer', () => {
  for (const rule of ["base64.encode(b'a') == 'YQ=='", "isSemver('1.2.3')", "semver('1.2.3').major() == 1"]) {
    test(`${rule} does not compile`, () => {
      assert.match(checkSchema(spec(rules({ rule })), 's')[0]!.describe(), /undeclared reference/);
    });
  }
});

describe('schema checker', () => {
  const check = (s: JSONSchemaProps) => checkSchema(s, 'spec.validation.openAPIV3Schema').map((e) => e.describe());

  test('a rule that does not compile is refused naming the rule', () => {
    const errs = check(spec(rules({ rule: 'self.replicas >' }, { rule: 'nosuch(self)' })));
    assert.equal(errs.length, 2);
    assert.match(errs[0]!, /^spec\.validation\.openAPIV3Schema\.properties\[spec\]\.x-plat-validations\[0\]\.rule: Invalid value: .*compilation failed: ERROR: <input>:1:/);
    assert.match(errs[1]!, /x-plat-validations\[1\]\.rule: Invalid value: .*compilation failed: ERROR: <input>: undeclared reference to 'nosuch' \(in container ''\)$/);
  });

  test('non-structural schemas and misplaced markers', () => {
    assert.deepEqual(check(obj({ spec: { properties: { a: { type: 'string' } } } as JSONSchemaProps })), [
      'spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    ]);
    assert.deepEqual(check(obj({ spec: { type: 'array' } })), ['spec.validation.openAPIV3Schema.properties[spec].items: Required value: must be specified']);
    assert.deepEqual(check(obj({ a: { type: 'integer', anyOf: [{ type: 'integer', minimum: 1 }] } })), [
      'spec.validation.openAPIV3Schema.properties[a].anyOf[0].type: Forbidden: must be empty to be structural',
    ]);
    assert.deepEqual(check(obj({ a: { type: 'string', allOf: [{ [markers.listType]: 'set' }] } })), [
      'spec.validation.openAPIV3Schema.properties[a].allOf[0].x-plat-list-type: Forbidden: must be undefined to be structural',
    ]);
    assert.deepEqual(check(obj({ a: { type: 'array', items: { type: 'string' }, uniqueItems: true } })), [
      'spec.validation.openAPIV3Schema.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    ]);
    assert.deepEqual(check(obj({ a: { type: 'array', items: { type: 'string' }, [markers.listType]: 'bag' } })), [
      'spec.validation.openAPIV3Schema.properties[a].x-plat-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"',
    ]);
    assert.deepEqual(check(obj({ a: { type: 'array', items: obj({ k: { type: 'string' } }), [markers.listType]: 'map' } })), [
      'spec.validation.openAPIV3Schema.properties[a].x-plat-list-map-keys: Required value: must not be empty if x-plat-list-type is map',
    ]);
    assert.deepEqual(check(obj({ a: { type: 'array', items: obj({ k: { type: 'string' } }), [markers.listType]: 'map', [markers.listMapKeys]: ['k'] } })), [
      'spec.validation.openAPIV3Schema.properties[a].items.properties[k].default: Required value: this property is in x-plat-list-map-keys, so it must have a default or be a required property',
    ]);
    assert.deepEqual(check({ type: 'object', additionalProperties: { type: 'string' } }), [
      'spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root',
    ]);
    assert.deepEqual(check(obj({ a: { type: 'string', pattern: '(unclosed' } })).length, 1);
  });

  test('a default that does not validate is refused', () => {
    assert.deepEqual(check(obj({ a: { type: 'integer', minimum: 0, default: -1 } })), [
      'spec.validation.openAPIV3Schema.properties[a].default: Invalid value: -1: in body should be greater than or equal to 0',
    ]);
  });

  test('a fieldPath must name a field of the rule\'s node', () => {
    assert.deepEqual(check(spec(rules({ rule: 'true', fieldPath: '.nosuch' }, { rule: 'true', fieldPath: '.' }, { rule: 'true', fieldPath: ".tags" }))), [
      'spec.validation.openAPIV3Schema.properties[spec].x-plat-validations[0].fieldPath: Invalid value: ".nosuch": fieldPath must be a valid path',
      'spec.validation.openAPIV3Schema.properties[spec].x-plat-validations[1].fieldPath: Invalid value: ".": fieldPath must be a valid path',
    ]);
  });

  test('a valid schema has no errors', () => {
    assert.deepEqual(check(spec(rules({ rule: 'self.replicas >= 0', fieldPath: '.replicas', reason: 'FieldValueInvalid' }))), []);
  });
});
