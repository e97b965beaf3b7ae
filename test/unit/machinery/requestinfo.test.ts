import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo } from '../../../src/server/requestinfo.js';
import { decodeContinue, encodeContinue } from '../../../src/registry/continue.js';
import { ApiError } from '../../../src/machinery/errors.js';

const info = (method: string, path: string, q = '') => parseRequestInfo(method, path, new URLSearchParams(q), new Set(['status', 'finalize']));

test('request info from paths', () => {
  assert.deepEqual(
    (({ verb, apiGroup, apiVersion, namespace, resource, name, subresource }) => ({ verb, apiGroup, apiVersion, namespace, resource, name, subresource }))(info('GET', '/api/v1/namespaces/a/serviceaccounts/b')),
    { verb: 'get', apiGroup: '', apiVersion: 'v1', namespace: 'a', resource: 'serviceaccounts', name: 'b', subresource: undefined });
  assert.equal(info('GET', '/api/v1/namespaces/a/serviceaccounts').verb, 'list');
  assert.equal(info('GET', '/api/v1/namespaces/a/serviceaccounts', 'watch=true').verb, 'watch');
  assert.equal(info('GET', '/api/v1/watch/namespaces/a/serviceaccounts').verb, 'watch');
  assert.equal(info('DELETE', '/api/v1/namespaces/a/configmaps').verb, 'deletecollection');
  assert.equal(info('DELETE', '/api/v1/namespaces/a/configmaps/x').verb, 'delete');
  const nsStatus = info('PUT', '/api/v1/namespaces/a/status');
  assert.equal(nsStatus.resource, 'namespaces');
  assert.equal(nsStatus.name, 'a');
  assert.equal(nsStatus.subresource, 'status');
  const named = info('POST', '/apis/example.io/v1beta1/namespaces/n/widgets');
  assert.equal(named.apiGroup, 'example.io');
  assert.equal(named.verb, 'create');
  assert.equal(info('GET', '/healthz').isResourceRequest, false);
  assert.equal(info('GET', '/api/v1').isResourceRequest, false);
});

test('authorization sees the selectors of collection reads and the name a metadata.name field selector picks, as upstream', () => {
  const one = info('GET', '/api/v1/namespaces/a/secrets', 'fieldSelector=metadata.name%3Ds1');
  assert.equal(one.verb, 'list');
  assert.equal(one.name, undefined, 'the route stays a list');
  assert.equal(one.selectedName, 's1');
  assert.equal(one.fieldSelector, 'metadata.name=s1');
  assert.equal(info('GET', '/api/v1/namespaces/a/secrets', 'watch=1&fieldSelector=type%3Dx,metadata.name%3D%3Ds%5C,2').selectedName, 's,2');
  assert.equal(info('GET', '/api/v1/namespaces/a/secrets', 'fieldSelector=metadata.name!%3Ds1').selectedName, undefined);
  assert.equal(info('GET', '/api/v1/namespaces/a/secrets', 'fieldSelector=metadata.name%3D..').selectedName, undefined, 'not a path segment name');
  assert.equal(info('GET', '/api/v1/pods', 'labelSelector=app%3Dweb').labelSelector, 'app=web');
  assert.equal(info('DELETE', '/api/v1/namespaces/a/pods', 'fieldSelector=spec.nodeName%3Dn').fieldSelector, 'spec.nodeName=n');
  assert.equal(info('GET', '/api/v1/watch/namespaces/a/pods', 'fieldSelector=spec.nodeName%3Dn').fieldSelector, undefined, 'not for the deprecated watch paths');
  assert.equal(info('GET', '/api/v1/namespaces/a/pods/p', 'fieldSelector=spec.nodeName%3Dn').fieldSelector, undefined, 'not for a get');
});

test('continue tokens round-trip and refuse keys outside the collection', () => {
  const token = encodeContinue(42, '/registry/secrets/a/b');
  assert.deepEqual(decodeContinue(token, '/registry/secrets/'), { revision: 42, startKey: '/registry/secrets/a/b' });
  assert.throws(() => decodeContinue(token, '/registry/configmaps/'), (e: unknown) => e instanceof ApiError && e.code === 400);
  assert.throws(() => decodeContinue('!!!notbase64', '/registry/secrets/'), (e: unknown) => e instanceof ApiError && e.code === 400);
  assert.throws(() => decodeContinue(Buffer.from('{"v":1,"rv":1,"start":"/registry/secrets/../x"}').toString('base64url'), '/registry/secrets/'), (e: unknown) => e instanceof ApiError && e.code === 400);
});
