// Every multi-version resource among the built-in kinds round-trips between
// each served version and the stored one, both ways, managedFields and all.
// A kind that gains a version fails here until it has a full sample below.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinKinds } from '../../../src/api/catalog.js';
import { apiVersionOf, type KubeObject } from '../../../src/api/kind.js';
import { codecsOf } from '../../../src/api/codec.js';

const managedFields = [
  { manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: '2026-11-25T10:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:message': {} } },
  { manager: 'recorder', operation: 'Update', apiVersion: 'events.plat.io/v1', time: '2026-11-25T10:00:01Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:note': {} } },
];

/** A stored object with every field of the kind set, by kind. */
const samples: Record<string, KubeObject> = {
  Event: {
    apiVersion: 'v1', kind: 'Event',
    metadata: { name: 'web.1', namespace: 'default', uid: 'u-1', resourceVersion: '7', creationTimestamp: '2026-11-25T10:00:00Z', labels: { a: 'b' }, managedFields },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web', uid: 'p-1', apiVersion: 'v1', resourceVersion: '5', fieldPath: 'spec.containers{web}' },
    reason: 'Pulled', message: 'pulled the image', source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: '2026-11-25T09:00:00Z', lastTimestamp: '2026-11-25T09:30:00Z', count: 3, type: 'Normal',
    eventTime: '2026-11-25T09:00:00.123456Z', series: { count: 3, lastObservedTime: '2026-11-25T09:30:00.000001Z' },
    action: 'Pull', related: { kind: 'Node', name: 'node-1', apiVersion: 'v1' }, reportingComponent: 'kubelet', reportingInstance: 'node-1',
  },
  // v1beta1 carries the same fields (served when --runtime-config turns it on).
  ValidatingAdmissionPolicy: {
    apiVersion: 'admissionregistration.plat.io/v1', kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'p', uid: 'u-3', resourceVersion: '9', generation: 2, creationTimestamp: '2026-11-25T10:00:00Z', managedFields },
    spec: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, failurePolicy: 'Fail',
      matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: '*' }] },
      matchConditions: [{ name: 'c', expression: 'true' }], variables: [{ name: 'v', expression: '1' }],
      validations: [{ expression: 'variables.v == 1', message: 'm', reason: 'Forbidden', messageExpression: "'m'" }],
      auditAnnotations: [{ key: 'k', valueExpression: "'v'" }],
    },
    status: { observedGeneration: 2, typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: 'w' }] } },
  },
  ValidatingAdmissionPolicyBinding: {
    apiVersion: 'admissionregistration.plat.io/v1', kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'b', uid: 'u-4', resourceVersion: '10', creationTimestamp: '2026-11-25T10:00:00Z', managedFields },
    spec: { policyName: 'p', paramRef: { name: 'x', namespace: 'default', parameterNotFoundAction: 'Deny' }, validationActions: ['Deny', 'Audit'] },
  },
  // Stored as autoscaling/v2; v1 keeps what it cannot say in annotations. The CPU utilization metric comes last, as v1 puts it back.
  HorizontalPodAutoscaler: {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'default', uid: 'u-2', resourceVersion: '8', creationTimestamp: '2026-11-25T10:00:00Z', annotations: { note: 'kept' }, managedFields },
    spec: {
      scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 2, maxReplicas: 10,
      metrics: [
        { type: 'Pods', pods: { metric: { name: 'qps', selector: { matchLabels: { a: 'b' } } }, target: { type: 'AverageValue', averageValue: '1k' } } },
        { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '30' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: 'Min', policies: [{ type: 'Pods', value: 1, periodSeconds: 30 }] } },
    },
    status: {
      observedGeneration: 3, lastScaleTime: '2026-11-25T10:05:00Z', currentReplicas: 3, desiredReplicas: 4,
      currentMetrics: [
        { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '900' } } },
        { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 75, averageValue: '150m' } } },
      ],
      conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-11-25T10:01:00Z', reason: 'ReadyForNewScale', message: 'ok' }],
    },
  },
};

test('every served version of every built-in kind round-trips with the stored version, both ways', () => {
  const multi = builtinKinds.filter((k) => codecsOf(k).length > 0);
  assert.ok(multi.length > 0, 'core Event at least is served in two groups');
  for (const kind of multi) {
    const stored = samples[kind.kind];
    assert.ok(stored, `a full sample of ${kind.kind} is needed here`);
    assert.equal(stored.apiVersion, apiVersionOf(kind));
    for (const codec of codecsOf(kind)) {
      const other = codec.fromStored(stored);
      assert.equal(other.apiVersion, codec.apiVersion);
      assert.deepEqual(codec.toStored(other), stored, `${kind.kind}: stored → ${codec.apiVersion} → stored`);
      assert.deepEqual(codec.fromStored(codec.toStored(other)), other, `${kind.kind}: ${codec.apiVersion} → stored → ${codec.apiVersion}`);
      // managedFields are the same entries in every version: never converted.
      assert.deepEqual(other.metadata?.managedFields, managedFields);
      // Every field of the sample has somewhere to go: the other version's schema names each one.
      const named = new Set(Object.keys(codec.served.schema.properties ?? {}));
      for (const field of Object.keys(other)) assert.ok(named.has(field), `${codec.apiVersion} ${kind.kind} has no field ${field}`);
    }
  }
});
