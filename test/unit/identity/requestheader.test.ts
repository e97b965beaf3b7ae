// The authenticating proxy's headers leave the request once believed, so that
// nothing after authentication mistakes them for the client's own.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { RequestHeaderAuthenticator } from '../../../src/auth/authn/requestheader.js';
import { clientCert, newCa } from '../../support/certs.js';

function fakeRequest(certPem: string, cn: string, headers: Record<string, string[]>): IncomingMessage {
  const raw = new X509Certificate(certPem).raw;
  const peer = { raw, subject: { CN: cn } };
  const socket = { authorized: true, getPeerCertificate: () => peer };
  const single: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) single[k] = v.join(', ');
  return { socket, headers: single, headersDistinct: { ...headers } } as unknown as IncomingMessage;
}

test('believed headers are stripped; the others stay', async () => {
  const ca = await newCa('proxy-ca');
  const proxy = await clientCert(ca, 'front-proxy');
  const auth = new RequestHeaderAuthenticator({
    anchors: [new X509Certificate(ca.cert)], allowedNames: [],
    usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'],
  });
  const req = fakeRequest(proxy.cert, 'front-proxy', {
    'x-remote-user': ['', 'alice'], 'x-remote-group': ['g1', 'g2'], 'x-remote-extra-a%zz': ['1'], 'x-remote-extra-__proto__': ['p'], accept: ['application/json'],
  });
  const r = auth.authenticate(req);
  assert.equal(r.kind, 'user');
  if (r.kind !== 'user') return;
  assert.equal(r.user.username, 'alice');
  assert.deepEqual(r.user.groups, ['g1', 'g2']);
  // Malformed percent-encoding is kept as sent; __proto__ is an ordinary key.
  assert.deepEqual(Object.keys(r.user.extra!).sort(), ['__proto__', 'a%zz']);
  assert.deepEqual(r.user.extra!['a%zz'], ['1']);
  assert.deepEqual(Object.keys(req.headers), ['accept']);
  assert.deepEqual(Object.keys(req.headersDistinct), ['accept']);
});

test('a certificate of another CA: rejected, and the headers are left alone', async () => {
  const ca = await newCa('proxy-ca');
  const other = await clientCert(await newCa('proxy-ca'), 'front-proxy');
  const auth = new RequestHeaderAuthenticator({
    anchors: [new X509Certificate(ca.cert)], allowedNames: [], usernameHeaders: ['X-Remote-User'], groupHeaders: [], extraHeaderPrefixes: [],
  });
  const req = fakeRequest(other.cert, 'front-proxy', { 'x-remote-user': ['alice'] });
  assert.equal(auth.authenticate(req).kind, 'rejected');
});
