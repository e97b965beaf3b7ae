// The name segment of a proxy path, as upstream's SplitSchemeNamePort reads
// it (its own test table), and port numbers as Go's strconv.ParseInt.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGoInt64, splitSchemeNamePort } from '../../../src/machinery/schemenameport.js';

test('[scheme:]name[:port] (upstream\'s TestSplitSchemeNamePort)', () => {
  // [segment, scheme, name, port] or [segment] when it does not split
  const rows: ([string, string, string, string] | [string])[] = [
    ['aoeu:asdf', '', 'aoeu', 'asdf'],
    ['http:aoeu:asdf', 'http', 'aoeu', 'asdf'],
    ['https:aoeu:', 'https', 'aoeu', ''],
    ['https:aoeu:asdf', 'https', 'aoeu', 'asdf'],
    ['aoeu:', '', 'aoeu', ''],
    ['aoeu', '', 'aoeu', ''],
    [':asdf'],
    ['aoeu:asdf:htns'],
    ['http::asdf'],
    ['http::'],
    [''],
    // and the forms of the proxy paths
    ['https:web:443', 'https', 'web', '443'],
    ['p1:8080', '', 'p1', '8080'],
    ['ftp:n1:10255'],
    ['a:b:c:d'],
  ];
  for (const [segment, scheme, name, port] of rows) {
    assert.deepEqual(splitSchemeNamePort(segment), name === undefined ? undefined : { scheme, name, port }, segment);
  }
});

test('port numbers as strconv.ParseInt(s, 10, 64)', () => {
  const rows: [string, bigint | undefined][] = [
    ['443', 443n], ['+443', 443n], ['-1', -1n], ['0443', 443n], ['9223372036854775807', 9223372036854775807n],
    ['9223372036854775808', undefined], ['', undefined], ['https', undefined], ['4 43', undefined], ['0x1bb', undefined], ['1_000', undefined],
  ];
  for (const [text, value] of rows) assert.equal(parseGoInt64(text), value, text);
});
