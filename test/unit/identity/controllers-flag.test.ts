// --controllers, as upstream's controller manager reads it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { badControllerEntry, controllerEnabled, controllerNames } from '../../../src/controllers/index.js';

test('the first entry naming a controller decides; * turns on the rest', () => {
  assert.equal(controllerEnabled('namespace', ['*']), true);
  assert.equal(controllerEnabled('namespace', ['-namespace', '*']), false);
  assert.equal(controllerEnabled('namespace', ['namespace', '-namespace']), true);
  assert.equal(controllerEnabled('namespace', ['serviceaccount']), false, 'without * only the named ones run');
  assert.deepEqual(controllerNames, ['namespace', 'serviceaccount', 'garbagecollector', 'serviceaccount-token', 'root-ca-cert-publisher', 'clusterrole-aggregation', 'csrsigning', 'csrapproving', 'csrcleaner', 'disruption', 'pod-garbage-collector', 'endpoint', 'endpointslice', 'ttl-after-finished', 'resourcequota', 'pvc-protection', 'pv-protection', 'validatingadmissionpolicy-status', 'tokencleaner', 'bootstrapsigner']);
  // The bootstrap-token controllers run only when named, as upstream.
  assert.equal(controllerEnabled('tokencleaner', ['*']), false);
  assert.equal(controllerEnabled('bootstrapsigner', ['*']), false);
  assert.equal(controllerEnabled('bootstrapsigner', ['*', 'bootstrapsigner']), true);
  assert.equal(badControllerEntry('-serviceaccount-token'), undefined);
  assert.equal(badControllerEntry('*'), undefined);
  assert.match(badControllerEntry('bogus')!, /"bogus" is not in the list of known controllers/);
});
