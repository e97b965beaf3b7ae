import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { labelSelectorOf, parseLabelSelector, parseFieldSelector } from '../../../src/machinery/selectors.js';
import { ApiError } from '../../../src/machinery/errors.js';

test('label selector operators', () => {
  const labels = { app: 'web', tier: 'front', env: 'prod' };
  const cases: [string, boolean][] = [
    ['', true], ['app=web', true], ['app==web', true], ['app!=web', false], ['app!=db', true],
    ['app in (web,db)', true], ['app notin (web,db)', false], ['missing notin (x)', true],
    ['tier', true], ['!tier', false], ['!missing', true], ['app=web,tier=back', false],
    ['app in (web, db),env=prod', true], ['missing!=x', true], ['missing=x', false],
  ];
  for (const [sel, want] of cases) assert.equal(parseLabelSelector(sel).matches(labels), want, sel);
  assert.equal(parseLabelSelector('a').matches(undefined), false);
  assert.equal(parseLabelSelector('!a').matches(undefined), true);
});

test('malformed label selectors are 400 BadRequest', () => {
  for (const bad of ['a b c', 'a=b,,c', '=x', 'a in b', 'a=b c', 'Bad Key=1', 'a=' + 'x'.repeat(64)]) {
    assert.throws(() => parseLabelSelector(bad), (e: unknown) => e instanceof ApiError && e.code === 400, bad);
  }
});

test('field selectors: supported fields only, escapes, = and !=', () => {
  const supported = (f: string) => ['metadata.name', 'type'].includes(f);
  const s = parseFieldSelector('metadata.name=a\\,b,type!=Opaque', supported);
  assert.equal(s.exactValue('metadata.name'), 'a,b');
  const values: Record<string, string> = { 'metadata.name': 'a,b', type: 'tls' };
  assert.equal(s.matches((f) => values[f]), true);
  values.type = 'Opaque';
  assert.equal(s.matches((f) => values[f]), false);
  assert.throws(() => parseFieldSelector('spec.x=1', supported), (e: unknown) => e instanceof ApiError && e.code === 400 && /field label not supported: spec.x/.test(e.message));
  assert.throws(() => parseFieldSelector('justtext', supported), (e: unknown) => e instanceof ApiError && e.code === 400);
});

describe('labelSelectorOf (LabelSelector objects)', () => {
  test('matchLabels and every operator, ANDed; empty and absent select everything', () => {
    const selector = labelSelectorOf({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'edge'] },
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'team', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    assert.equal(selector.matches({ app: 'web', tier: 'edge', team: 'a' }), true);
    assert.equal(selector.matches({ app: 'web', tier: 'edge', team: 'a', env: 'dev' }), false);
    assert.equal(selector.matches({ app: 'web', tier: 'back', team: 'a' }), false);
    assert.equal(selector.matches({ app: 'web', tier: 'edge', team: 'a', legacy: 'y' }), false);
    assert.equal(selector.matches({ app: 'web', tier: 'edge' }), false);
    assert.equal(labelSelectorOf({}).empty, true);
    assert.equal(labelSelectorOf(undefined).matches({ any: 'thing' }), true);
  });

  test('keys named like Object.prototype members are ordinary keys', () => {
    const selector = labelSelectorOf(JSON.parse('{"matchLabels":{"constructor":"x"}}'));
    assert.equal(selector.matches(JSON.parse('{"constructor":"x"}')), true);
    assert.equal(selector.matches({}), false);
    assert.equal(labelSelectorOf({ matchExpressions: [{ key: 'toString', operator: 'Exists' }] }).matches({}), false);
  });

  test('a selector that does not validate is refused with the messages', () => {
    assert.throws(() => labelSelectorOf({ matchExpressions: [{ key: 'a', operator: 'Near', values: [] }] }), /selector\.matchExpressions\[0\]\.operator: Invalid value: "Near": not a valid selector operator/);
  });
});
