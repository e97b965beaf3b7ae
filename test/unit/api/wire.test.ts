// Reading request bodies: depth limits before anything recurses, YAML's
// prototype-named and merge keys, repeated keys in YAML, and what JSON text
// keeps that its parsed value loses.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBody, parseJson, readJson, readYaml } from '../../../src/api/wire.js';
import { maxNestingDepth } from '../../../src/machinery/limits.js';
import { ApiError } from '../../../src/machinery/errors.js';

const tooDeepMessage = `the object provided is nested too deeply: exceeded max depth of ${maxNestingDepth}`;

function refusedAsTooDeep(fn: () => unknown): void {
  assert.throws(fn, (e: unknown) => e instanceof ApiError && e.code === 400 && e.reason === 'BadRequest' && e.message === tooDeepMessage);
}

const nested = (open: string, close: string, levels: number, inner = '1') => `${open.repeat(levels)}${inner}${close.repeat(levels)}`;

test('JSON deeper than the limit is a 400 before it is parsed; exactly the limit is read', () => {
  refusedAsTooDeep(() => parseJson('['.repeat(100_000)));
  refusedAsTooDeep(() => parseJson(nested('[', ']', 100_000)));
  refusedAsTooDeep(() => parseJson(nested('{"a":', '}', maxNestingDepth + 1)));
  assert.ok(parseJson(nested('{"a":', '}', maxNestingDepth)));
  // Brackets inside strings are text, not nesting.
  assert.deepEqual(parseJson(JSON.stringify({ s: '['.repeat(1000) })), { s: '['.repeat(1000) });
});

test('YAML deeper than the limit is a 400 from its syntax tree, flow or block, and the process lives on', () => {
  for (let round = 0; round < 3; round++) {
    // The yaml package overflows its stack on such input, and a second overflow used to abort the process.
    refusedAsTooDeep(() => readYaml(nested('[', ']', 100_000, '')));
    refusedAsTooDeep(() => readYaml(nested('{a: ', '}', 20_000)));
    refusedAsTooDeep(() => readYaml(`${'- '.repeat(50_000)}x\n`));
  }
  const indented = Array.from({ length: maxNestingDepth + 1 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n';
  refusedAsTooDeep(() => readYaml(indented));
  assert.ok(readYaml(nested('[', ']', maxNestingDepth)).value);
  assert.ok(readYaml(Array.from({ length: maxNestingDepth }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' 1\n').value);
});

test('YAML is refused while it is lexed once its open collections pass the limit; brackets and dashes inside scalars are text', () => {
  // Exactly the limit, by flow brackets, by items opened on one line, and both together.
  assert.ok(readYaml(`${'- '.repeat(maxNestingDepth)}x\n`).value);
  refusedAsTooDeep(() => readYaml(`${'- '.repeat(maxNestingDepth + 1)}x\n`));
  assert.ok(readYaml(`${'- '.repeat(maxNestingDepth / 2)}${nested('[', ']', maxNestingDepth / 2)}\n`).value);
  refusedAsTooDeep(() => readYaml(`${'- '.repeat(maxNestingDepth / 2)}${nested('[', ']', maxNestingDepth / 2 + 1)}\n`));
  // Items on separate lines do not add up.
  assert.equal((readYaml(`${'- x\n'.repeat(maxNestingDepth + 5)}`).value as unknown[]).length, maxNestingDepth + 5);
  // Scalars full of brackets and dashes: plain, quoted, literal block; and a comment.
  const many = (c: string) => c.repeat(maxNestingDepth + 5);
  const text = [
    `plain: x${many('[')}`,
    `single: '${many('[')}'`,
    `double: "${many('{')}"`,
    `dashes: x ${many('- ')}x`,
    `block: |\n  ${many('[')}\n  ${many('- ')}`,
    `# ${many('[')}`,
    `flow: [a, '${many('[')}']`,
  ].join('\n') + '\n';
  const value = readYaml(text).value as Record<string, unknown>;
  assert.equal(value.plain, `x${many('[')}`);
  assert.equal(value.single, many('['));
  assert.equal(value.double, many('{'));
  assert.equal(value.dashes, `x ${many('- ')}x`);
  assert.equal(value.block, `${many('[')}\n${many('- ')}\n`);
  assert.deepEqual(value.flow, ['a', many('[')]);
});

test('YAML aliases cannot multiply depth past the limit', () => {
  const per = 200;
  let text = `a0: &a0 ${nested('[', ']', per)}\n`;
  for (let i = 1; i < 4; i++) text += `a${i}: &a${i} ${nested('[', ']', per, `*a${i - 1}`)}\n`;
  refusedAsTooDeep(() => readYaml(text));
});

test('YAML keys named like Object.prototype members are ordinary keys, merged or not', () => {
  const { value } = readYaml([
    '__proto__: {polluted: 1}',
    'constructor: c',
    'base: &base {__proto__: p, toString: t, hasOwnProperty: h}',
    'merged:',
    '  <<: *base',
    '  valueOf: v',
    '',
  ].join('\n')) as { value: Record<string, any> };
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(Object.getOwnPropertyDescriptor(value, '__proto__')?.value, { polluted: 1 });
  assert.equal(value.constructor, 'c');
  assert.deepEqual(Object.keys(value.merged), ['__proto__', 'toString', 'hasOwnProperty', 'valueOf']);
  assert.equal(Object.getPrototypeOf(value.merged), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(value.merged, '__proto__')?.value, 'p');
});

test('repeated YAML keys are reported in upstream\'s words, numbered by the repeated value\'s line', () => {
  const text = [
    'metadata:',
    '  name: a',
    'data:',
    '  a: "1"',
    '  b: "2"',
    '  a: "3"',
    'metadata:',
    '  name: b',
    'list: [{k: 1, k: 2}]',
    '1: x',
    '"1": y',
    '',
  ].join('\n');
  const { value, duplicates } = readYaml(text, true);
  assert.deepEqual(duplicates, ['yaml: unmarshal errors:\n  line 6: key "a" already set in map\n  line 8: key "metadata" already set in map\n  line 9: key "k" already set in map']);
  // As without strictness, the last one wins.
  assert.deepEqual((value as any).data, { a: '3', b: '2' });
  assert.deepEqual(readYaml(text).duplicates, [], 'looked for only when asked');
  assert.deepEqual(readYaml('a: 1\nb: 2\n', true).duplicates, []);
});

test('malformed YAML is a 400 that says where', () => {
  assert.throws(() => readYaml('a: [1, 2\n'), (e: unknown) => e instanceof ApiError && e.code === 400
    && /^the object provided is unrecognized: error converting YAML to JSON: .* at line \d+, column \d+$/.test(e.message));
  assert.throws(() => readYaml('a: 1\n---\nb: 2\n'), /expected one YAML document/);
});

test('JSON text yields its repeated keys when asked, and the literal text of its numbers', () => {
  const text = '{"a":1,"a":2,"n":1.0,"m":[1e10]}';
  const body = readJson(text, true);
  assert.deepEqual(body.value, { a: 2, n: 1, m: [1e10] });
  assert.deepEqual(body.duplicates, ['duplicate field "a"']);
  assert.equal(body.numberText?.('/n'), '1.0');
  assert.equal(body.numberText?.('/m/0'), '1e10');
  assert.equal(body.numberText?.('/a'), undefined);
  assert.deepEqual(parseBody(Buffer.from(text), 'json').duplicates, []);
  assert.equal(parseBody(Buffer.from('a: 1\na: 2\n'), 'yaml', undefined, true).duplicates.length, 1);
  // A long sequence is walked, not spread onto the stack.
  assert.deepEqual(parseBody(Buffer.from(`a: [${'1,'.repeat(150_000)}1]\na: 2\n`), 'yaml', undefined, true).duplicates, ['yaml: unmarshal errors:\n  line 2: key "a" already set in map']);
});

test('a YAML body that is JSON text reads as the YAML reader reads it: values, repeated keys in YAML\'s words, merge keys, errors', () => {
  // What the YAML reader makes of a text (a leading comment line keeps the JSON shortcut out).
  const asYaml = (text: string, findDuplicates = false) => readYaml(`# yaml\n${text}`, findDuplicates);
  const bodies = [
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"}},"data":{"k":"v\\n\\t\\u00e9\\ud83d\\ude00"}}',
    '{"a":[1,2.5,-0.0,1e3,12345678901234567890,true,false,null,{"b":[]}],"c":"yes","d":"0x10","e":{}}',
    '[{"k":1},{"k":"2"}]',
    '{"__proto__":{"polluted":1},"constructor":"c"}',
    '{"a":1,"b":{"c":2,"c":3},"a":4}',
    '{"base":{"x":1},"m":{"<<":{"x":2},"y":3}}',
    '{a: 1, "b": [1,]}',
  ];
  for (const text of bodies) {
    for (const strict of [false, true]) {
      const fast = readYaml(text, strict);
      const slow = asYaml(text, strict);
      assert.deepEqual(fast.value, slow.value, `${text} (strict ${strict})`);
      // Line numbers of repeated keys: the comment line moved the slow reader's by one.
      assert.deepEqual(fast.duplicates, slow.duplicates.map((d) => d.replace(/line (\d+)/g, (_m, n) => `line ${Number(n) - 1}`)), `${text} repeats`);
    }
  }
  assert.equal(Object.getPrototypeOf(readYaml(bodies[3]).value), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(readYaml(bodies[4], true).duplicates, ['yaml: unmarshal errors:\n  line 1: key "c" already set in map\n  line 1: key "a" already set in map']);
  assert.throws(() => readYaml('{"a": 1'), (e: unknown) => e instanceof ApiError && e.code === 400 && /error converting YAML to JSON/.test(e.message));
});
