// The static token file parser: Go's CSV rules, as upstream reads
// --token-auth-file, and a message naming the line of every malformed one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsv, parseTokenFile, TokenFileAuthenticator, TokenFileError } from '../../../src/auth/authn/tokenfile.js';

const source = '/etc/tokens.csv';

function fails(text: string, message: string): void {
  assert.throws(() => parseTokenFile(text, source), (e: unknown) => {
    assert.ok(e instanceof TokenFileError, String(e));
    assert.equal(e.message, message);
    return true;
  });
}

test('tokens, users, uids and quoted groups', () => {
  const text = [
    't-alice,alice,uid-1,"devs,ops"',
    '',
    '  t-bob, bob,  uid-2',
    't-carol,carol,,ops,ignored-fifth-column',
    '"t,quoted","dan ""the man""",uid-4',
    '',
  ].join('\r\n');
  const { tokens, warnings } = parseTokenFile(text, source);
  assert.deepEqual(warnings, []);
  assert.deepEqual(tokens.get('t-alice'), { username: 'alice', uid: 'uid-1', groups: ['devs', 'ops'] });
  assert.deepEqual(tokens.get('t-bob'), { username: 'bob', uid: 'uid-2', groups: [] }, 'leading spaces are trimmed');
  assert.deepEqual(tokens.get('t-carol'), { username: 'carol', groups: ['ops'] }, 'an empty uid is no uid');
  assert.deepEqual(tokens.get('t,quoted'), { username: 'dan "the man"', uid: 'uid-4', groups: [] });
  assert.equal(tokens.size, 4);
});

test('a quoted field may span lines; records are numbered by their first line', () => {
  assert.deepEqual(parseCsv('a,"b\nc",d\ne,f,g\n'), [
    { line: 1, fields: ['a', 'b\nc', 'd'] },
    { line: 3, fields: ['e', 'f', 'g'] },
  ]);
  assert.deepEqual(parseCsv('a,b,\n'), [{ line: 1, fields: ['a', 'b', ''] }], 'a trailing comma ends with an empty field');
});

test('empty and repeated tokens are warned about; the last one of a repeated token wins', () => {
  const { tokens, warnings } = parseTokenFile(',nobody,uid-0\nt,first,u1\nt,second,u2\n', source);
  assert.equal(tokens.get('t')?.username, 'second');
  assert.equal(tokens.size, 1);
  assert.deepEqual(warnings, [
    `empty token has been found in token file '${source}', line 1`,
    `duplicate token has been found in token file '${source}', line 3`,
  ]);
});

test('malformed lines stop the parse with a message naming the line', () => {
  fails('t1,alice,u1\nt2,bob\n', `token file '${source}' must have at least 3 columns (token, user name, user uid), found 2 on line 2`);
  fails('t1,alice,u1\n\n   \n', `token file '${source}' must have at least 3 columns (token, user name, user uid), found 1 on line 3`);
  fails('t1,alice,u1\nt2,b"ob,u2\n', `token file '${source}': parse error on line 2, column 5: bare " in non-quoted-field`);
  fails('t1,"alice"x,u1\n', `token file '${source}': parse error on line 1, column 11: extraneous or missing " in quoted-field`);
  fails('t1,alice,u1\nt2,bob,"u2\n', `token file '${source}': parse error on line 2, column 8: extraneous or missing " in quoted-field`);
});

test('the authenticator answers the users of its tokens and nothing for others', () => {
  const auth = new TokenFileAuthenticator(parseTokenFile('t-alice,alice,uid-1,"devs"\n', source).tokens);
  assert.deepEqual(auth.authenticateToken('t-alice'), { kind: 'user', user: { username: 'alice', uid: 'uid-1', groups: ['devs'] }, audiences: [] });
  assert.deepEqual(auth.authenticateToken('t-alic'), { kind: 'none' });
  assert.deepEqual(auth.authenticateToken('constructor'), { kind: 'none' }, 'inherited names are no tokens');
});
