// The request target's path and query: the plain-target shortcut answers what
// URL's parse answers, and a long hostile target is decided in one pass.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitTarget } from '../../../src/server/app.js';

function byUrl(target: string): { path: string; query: string } {
  const url = new URL(target, 'https://localhost');
  return { path: decodeURIComponent(url.pathname), query: JSON.stringify([...url.searchParams]) };
}

test('a plain target splits as URL parses it; others take URL\'s road', () => {
  const targets = [
    '/', '/api', '/api/', '/api/v1/namespaces/a/configmaps', '/api/v1/namespaces/a/configmaps/x.y-z?fieldManager=kubectl&dryRun=All',
    '/a//b', '/a/./b', '/a/../b', '/a/.b', '/a/b.', '/a/b..c', '/..', '/a/b?', '/a/b?x=%20y+z&w', '/a%2Fb', '/a/b?q=a:b,c',
    '/apis/coordination.plat.io/v1/namespaces/plat-system/leases?labelSelector=apiserver.plat.io/identity%3Dplat-apiserver',
    '/.well-known/openid-configuration', '/api/v1/namespaces/default/pods?watch=true&resourceVersion=12&timeoutSeconds=300',
  ];
  for (const t of targets) {
    const got = splitTarget(t);
    assert.deepEqual({ path: got.path, query: JSON.stringify([...got.query]) }, byUrl(t), t);
  }
});

test('long targets that almost match are decided at once (no backtracking blow-up)', () => {
  // Nested choices in the pattern would take exponential time on these; the test would then never end.
  const hostile = [
    `/${'a'.repeat(5000)}!`, `/${'a/'.repeat(1000)}!`, `/${'ab'.repeat(40)}?x=/`, `/${'a.'.repeat(1000)}!`,
    `/${Array.from({ length: 60 }, () => 'segment').join('/')}?q=a/b`,
  ];
  for (const t of hostile) assert.equal(splitTarget(t).path, byUrl(t).path);
});
