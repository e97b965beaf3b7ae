// --feature-gates with the spec's stages: beta gates on and switchable, GA
// gates locked on, upstream names this server does not implement accepted
// with a warning, unknown names refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FeatureGateError, FeatureGates, knownFeatures } from '../../../src/machinery/featuregates.js';

const refusal = (pairs: [string, boolean][]) => assert.throws(() => FeatureGates.fromFlags(pairs), FeatureGateError);

test('without flags every known gate has upstream 1.32\'s default', () => {
  const gates = FeatureGates.defaults();
  for (const f of gates.list()) assert.equal(f.enabled, knownFeatures[f.name].default, f.name);
  assert.equal(gates.enabled('StorageVersionHash'), true);
  assert.equal(gates.enabled('AggregatedDiscoveryEndpoint'), true);
});

test('a beta gate can be turned off (and on again), with no warning', () => {
  const { gates, warnings } = FeatureGates.fromFlags([['StorageVersionHash', false], ['APIServerIdentity', false]]);
  assert.equal(gates.enabled('StorageVersionHash'), false);
  assert.equal(gates.enabled('APIServerIdentity'), false);
  assert.deepEqual(warnings, []);
  assert.equal(FeatureGates.fromFlags([['StorageVersionHash', true]]).gates.enabled('StorageVersionHash'), true);
});

test('AllBeta sets every beta gate that is not locked; a gate named on its own wins, whatever the order', () => {
  const { gates } = FeatureGates.fromFlags([['StorageVersionHash', true], ['AllBeta', false]]);
  assert.equal(gates.enabled('StorageVersionHash'), true);
  assert.equal(gates.enabled('APIServerIdentity'), false);
  assert.equal(gates.enabled('AggregatedDiscoveryEndpoint'), true);
});

test('turning off a GA gate locked to its default stops the start with one line; setting it to its default warns', () => {
  assert.throws(() => FeatureGates.fromFlags([['AggregatedDiscoveryEndpoint', false]]), {
    message: '--feature-gates: cannot set feature gate AggregatedDiscoveryEndpoint to false, feature is locked to true',
  });
  const { warnings } = FeatureGates.fromFlags([['WatchBookmark', true]]);
  assert.deepEqual(warnings, ['Setting GA feature gate WatchBookmark=true. It will be removed in a future release.']);
});

test('an unknown name, or a gate removed after its deprecation window, stops the start', () => {
  assert.throws(() => FeatureGates.fromFlags([['NoSuchGate', true]]), { message: '--feature-gates: unrecognized feature gate: NoSuchGate' });
  // Removed upstream in 1.27, after its GA window.
  refusal([['CSIStorageCapacity', true]]);
});

test('upstream 1.32 gates this server does not implement are accepted with one warning naming them; a deprecated one warns as such', () => {
  const { gates, warnings } = FeatureGates.fromFlags([['WatchList', false], ['SidecarContainers', true], ['KMSv1', true]]);
  assert.ok(gates.list().every((f) => !['WatchList', 'SidecarContainers', 'KMSv1'].includes(f.name)));
  assert.deepEqual(warnings, [
    'Setting deprecated feature gate KMSv1=true. It will be removed in a future release.',
    '--feature-gates: WatchList, SidecarContainers, KMSv1 are gates of upstream that this server does not implement; setting them has no effect',
  ]);
});
