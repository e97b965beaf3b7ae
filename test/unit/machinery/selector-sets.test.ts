// Set-based label selectors as upstream's labels package tests them
// (TestSelectorMatches, TestRequirementSelectorMatching,
// TestSetSelectorParser), re-expressed as rows; then lists of thousands of
// values, held in sets, answering as a list would; field selector terms.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFieldSelector, parseLabelSelector } from '../../../src/machinery/selectors.js';
import { ApiError } from '../../../src/machinery/errors.js';

test('matching (upstream\'s TestSelectorMatches and TestRequirementSelectorMatching, without > and <)', () => {
  const labelset = { foo: 'bar', baz: 'blah' };
  const rows: [selector: string, labels: Record<string, string>, matches: boolean][] = [
    ['', { x: 'y' }, true],
    ['x=y', { x: 'y' }, true],
    ['x=y,z=w', { x: 'y', z: 'w' }, true],
    ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
    ['notin=in', { notin: 'in' }, true],
    ['x', { x: 'z' }, true],
    ['!x', { y: 'z' }, true],
    ['x=z', {}, false],
    ['x=y', { x: 'z' }, false],
    ['x=y,z=w', { x: 'w', z: 'w' }, false],
    ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
    ['x', { y: 'z' }, false],
    ['!x', { x: 'z' }, false],
    ['foo=bar', labelset, true],
    ['baz=blah', labelset, true],
    ['foo=bar,baz=blah', labelset, true],
    ['foo=blah', labelset, false],
    ['baz=bar', labelset, false],
    ['foo=bar,foobar=bar,baz=blah', labelset, false],
    ['x in (foo),y notin (alpha)', { x: 'foo', y: 'baz' }, true],
    ['x in (foo),y in (alpha)', { x: 'foo', y: 'baz' }, false],
    ['x notin (),y', { y: '' }, true],
    ['!x,y', { y: '' }, true],
    ['x notin (),!y', { y: '' }, false],
    ['x in ()', { y: 'baz' }, false],
    ['x in ()', { x: '' }, true],
  ];
  for (const [selector, labels, matches] of rows) assert.equal(parseLabelSelector(selector).matches(labels), matches, `${selector} on ${JSON.stringify(labels)}`);
});

test('parsing set-based requirements (upstream\'s TestSetSelectorParser)', () => {
  // [selector, labels it matches, labels it does not]
  const valid: [string, Record<string, string>, Record<string, string>][] = [
    ['\rx', { x: '' }, {}],
    ['this-is-a-dns.domain.com/key-with-dash', { 'this-is-a-dns.domain.com/key-with-dash': 'v' }, {}],
    ['this-is-another-dns.domain.com/key-with-dash in (so,what)', { 'this-is-another-dns.domain.com/key-with-dash': 'what' }, { 'this-is-another-dns.domain.com/key-with-dash': 'who' }],
    ['0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)', { '0.1.2.domain/99': 'x' }, { '0.1.2.domain/99': 'tick.tack.clock' }],
    ['foo  in\t (abc)', { foo: 'abc' }, { foo: 'abd' }],
    ['x notin\n (abc)', { x: 'abd' }, { x: 'abc' }],
    ['x  notin\t\t\t(abc,def)', {}, { x: 'def' }],
    ['x in (abc,def)', { x: 'def' }, { x: 'ghi' }],
    ['x in (abc,)', { x: '' }, { x: 'ab' }],
    ['x notin (abc,def),bar,z in (),w', { bar: '1', z: '', w: '2' }, { bar: '1', z: '', w: '2', x: 'abc' }],
    ['x,y in (a)', { x: '1', y: 'a' }, { y: 'a' }],
    ['x=a,y!=b,z in (h,i,j)', { x: 'a', z: 'j' }, { x: 'a', y: 'b', z: 'j' }],
    ['x notin ( )', { x: 'a' }, { x: '' }],
    ['x notin (, a)', { x: 'b' }, { x: 'a' }],
    ['a ', { a: 'x' }, {}],
    ['a in (x,y,notin, z,in)', { a: 'notin' }, { a: 'out' }],
  ];
  for (const [selector, yes, no] of valid) {
    const parsed = parseLabelSelector(selector);
    assert.equal(parsed.matches(yes), true, `${JSON.stringify(selector)} on ${JSON.stringify(yes)}`);
    assert.equal(parsed.matches(no), false, `${JSON.stringify(selector)} on ${JSON.stringify(no)}`);
  }
  for (const bad of ['x=a||y=b', 'x==a==b', '!x=a', ',x,y', 'x nott in (y)', 'a in (xyz),', 'a in (xyz)b notin ()', 'a in (xyz abc)', 'a notin(', 'a (', '(']) {
    assert.throws(() => parseLabelSelector(bad), (e: unknown) => e instanceof ApiError && e.code === 400, JSON.stringify(bad));
  }
});

test('thousands of values, repeated ones among them, answer as a short list would', () => {
  const values = Array.from({ length: 20_000 }, (_, i) => `v${i % 15_000}`);
  const inList = parseLabelSelector(`app in (${values.join(',')})`);
  const notInList = parseLabelSelector(`app notin (${values.join(', ')})`);
  for (const [labels, inside] of [[{ app: 'v0' }, true], [{ app: 'v14999' }, true], [{ app: 'v15000' }, false], [{}, false], [{ app: '' }, false]] as const) {
    assert.equal(inList.matches(labels), inside, JSON.stringify(labels));
    assert.equal(notInList.matches(labels), !inside, JSON.stringify(labels));
  }
  // A value past 63 characters among them is upstream's error, naming it.
  assert.throws(() => parseLabelSelector(`app in (${[...values.slice(0, 100), 'x'.repeat(64)].join(',')})`),
    (e: unknown) => e instanceof ApiError && e.code === 400 && e.message.includes(`invalid label value: "${'x'.repeat(64)}": at key: must be no more than 63 characters`));
});

test('field selector terms split at their first operator; requirements on one field all hold', () => {
  const fields = (text: string) => parseFieldSelector(text, () => true);
  const values: Record<string, string> = { 'metadata.name': 'web', type: 'Opaque' };
  const rows: [selector: string, matches: boolean][] = [
    ['metadata.name == web', true],
    ['metadata.name=web,metadata.name=web', true],
    ['metadata.name=web,metadata.name=db', false],
    ['metadata.name!=', true],
    ['type!=a,type!=b,type!=Opaque', false],
    [Array.from({ length: 5000 }, (_, i) => `metadata.name!=n${i}`).join(','), true],
    [[...Array.from({ length: 5000 }, (_, i) => `metadata.name!=n${i}`), 'metadata.name!=web'].join(','), false],
  ];
  for (const [selector, matches] of rows) assert.equal(fields(selector).matches((f) => values[f] ?? ''), matches, selector.slice(0, 60));
  assert.deepEqual(fields('a!b=c').requirements, [{ field: 'a!b', operator: '=', value: 'c' }]);
  for (const bad of ['=x', '!=x', 'justtext', `metadata.name${' '.repeat(1000)}x`]) {
    assert.throws(() => fields(bad), (e: unknown) => e instanceof ApiError && e.code === 400 && e.message.startsWith('invalid selector:'), JSON.stringify(bad.slice(0, 20)));
  }
});
