// The CEL functions that take a pattern run on RE2 with upstream's
// semantics: Go's FindString and FindAllString for `find` and `findAll`
// (leftmost-first matches, code points not UTF-16 halves, an empty match
// right after a match skipped, the limit), a partial match for `matches` in
// both its forms, RE2's syntax (named groups, flags mid-pattern, POSIX
// classes, Unicode classes), and upstream's errors for a pattern RE2
// refuses.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression } from '../../../../src/api/validation/index.js';
import { loadCel, loadRe2 } from '../../../../src/api/validation/engines.js';

// CEL and RE2 load on first need (validation/engines.ts); these tests call the code under them directly.
await Promise.all([loadCel(), loadRe2()]);

/** The value of `expr` over `self`, lists as arrays; a string `error: ...` when it fails. */
function run(expr: string, self: unknown = null): unknown {
  const program = compileExpression(expr, ['self']);
  if (typeof program === 'string') return `compile: ${program}`;
  const r = program.eval({ self }, 1_000_000);
  if (r.error !== undefined) return `error: ${r.error}`;
  const v = r.value as unknown;
  return typeof v === 'object' && v !== null && Symbol.iterator in v ? [...(v as Iterable<unknown>)] : v;
}

describe('find and findAll on RE2', () => {
  const cases: [string, unknown][] = [
    // Leftmost, then the first alternative (not the longest).
    ["'xabcabc'.find('a|ab')", 'a'],
    ["'xabcabc'.findAll('ab|a')", ['ab', 'ab']],
    ["'aaa'.find('a+?')", 'a'],
    ["'aaa'.find('a*?$')", 'aaa'],
    ["'abc'.find('x')", ''],
    // Empty matches: at each place, but not right after a match.
    ["'abc'.findAll('')", ['', '', '', '']],
    ["'aXbX'.findAll('X*')", ['', 'X', 'X']],
    // Where a Java-style matcher (re2js's) reports one more empty match, right after a match, and Go's does not.
    ["'baaab'.findAll('a*')", ['', 'aaa', '']],
    ["'aab'.findAll('a|')", ['a', 'a', '']],
    ["'ab'.findAll('b|$')", ['b']],
    // A skipped match does not count towards the limit.
    ["'aXbX'.findAll('X*', 3)", ['', 'X', 'X']],
    // After an empty match the search resumes a whole code point on, never between a surrogate pair's halves.
    ["'😀😀'.findAll('')", ['', '', '']],
    ["'😀x'.findAll('x*')", ['', 'x']],
    ["'😀😀x'.findAll('😀*')", ['😀😀', '']],
    // The limit: none at 0, all when negative.
    ["'a1b2c3'.findAll('[0-9]', 2)", ['1', '2']],
    ["'a1b2c3'.findAll('[0-9]', 0)", []],
    ["'a1b2c3'.findAll('[0-9]', -1)", ['1', '2', '3']],
    // Code points, not UTF-16 halves.
    ["'😀a😀'.findAll('.')", ['😀', 'a', '😀']],
    ["'héllo wörld'.findAll('\\\\pL+')", ['héllo', 'wörld']],
    ["'héllo'.findAll('\\\\w+')", ['h', 'llo']],
    // RE2's syntax, which JavaScript's engine does not share.
    ["'ab'.find('(?P<second>b)')", 'b'],
    ["'aBc'.find('a(?i)b')", 'aB'],
    ["'x12y'.find('[[:digit:]]+')", '12'],
    ["'a.b'.find('\\\\Q.\\\\E')", '.'],
    // Anchors and boundaries see the whole string, wherever the search resumes.
    ["'ab\\nab'.findAll('^ab')", ['ab']],
    ["'ab\\nab'.findAll('(?m)^ab$')", ['ab', 'ab']],
    ["'foobar bar'.findAll('\\\\bbar')", ['bar']],
    ["'ab\\nab'.findAll('(?m)$')", ['', '']],
    ["'aa'.findAll('\\\\Aa')", ['a']],
    // A literal prefix is searched for; what follows it still sees the whole string.
    ["'xabc1 abc22 abcx'.findAll('abc[0-9]+')", ['abc1', 'abc22']],
    ["'😀ab ab'.findAll('ab\\\\b')", ['ab', 'ab']],
    ["'ab\\nab'.findAll('ab$')", ['ab']],
    // The pattern that backtracks exponentially in JavaScript's engine.
    [`'${'a'.repeat(40)}!'.find('^(a+)+$')`, ''],
    [`'${'a'.repeat(40)}'.find('^(a+)+$')`, 'a'.repeat(40)],
  ];
  for (const [expr, expected] of cases) {
    test(expr, () => assert.deepEqual(run(expr), expected));
  }

  test("a pattern RE2 refuses is upstream's error: 'Illegal regex' for find and findAll, Go's own for matches", () => {
    assert.equal(run("'a'.find(self)", '(a'), 'error: Illegal regex: error parsing regexp: missing closing ): `(a`');
    assert.equal(run("'a'.findAll(self)", 'a{2,1}'), 'error: Illegal regex: error parsing regexp: invalid repeat count: `{2,1}`');
    assert.equal(run("'a'.findAll(self, 1)", '[a'), 'error: Illegal regex: error parsing regexp: missing closing ]: `[a`');
    assert.equal(run("'a'.matches(self)", '(a'), 'error: error parsing regexp: missing closing ): `(a`');
    // A lookahead is JavaScript's, not RE2's.
    assert.match(String(run("'ab'.find(self)", 'a(?=b)')), /^error: Illegal regex: error parsing regexp: /);
  });

  test('a constant pattern RE2 refuses is refused when the expression is compiled, as upstream builds its program', () => {
    assert.equal(run("self.find('(a')"), 'compile: program instantiation failed: error parsing regexp: missing closing ): `(a`');
    assert.equal(run("[1].all(x, self.findAll('a{2,1}', 2).size() > 0)"), 'compile: program instantiation failed: error parsing regexp: invalid repeat count: `{2,1}`');
    assert.equal(run("self.matches('[')"), 'compile: program instantiation failed: error parsing regexp: missing closing ]: `[`');
    assert.equal(run("matches(self, '(')"), 'compile: program instantiation failed: error parsing regexp: missing closing ): `(`');
  });
});

describe('matches on RE2', () => {
  test('a partial match, in both the method and the function form', () => {
    assert.equal(run("'abc'.matches('b')"), true);
    assert.equal(run("'abc'.matches('^b')"), false);
    assert.equal(run("matches('abc', 'b')"), true);
    assert.equal(run("matches('abc', '^b$')"), false);
    assert.equal(run("self.matches('^(a+)+$')", `${'a'.repeat(5000)}!`), false);
  });
});
