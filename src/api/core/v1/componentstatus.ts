// ComponentStatus (core v1, cluster-scoped, read-only, deprecated in 1.19 as
// upstream): the health of the control plane's parts, made when asked
// (registry/componentstatuses.ts), never stored.

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { core, kindSchema, nameColumn } from './common.js';

const s = t.string;

export const componentStatuses = defineKind({
  group: '', version: 'v1', kind: 'ComponentStatus', plural: 'componentstatuses', shortNames: ['cs'],
  protobuf: true,
  scope: 'Cluster',
  verbs: ['get', 'list'],
  storedVersion: { deprecated: true, deprecatedRelease: '1.19' },
  schema: define(core('ComponentStatus'), kindSchema('Deprecated: the health of a part of the control plane.', {
    conditions: p(2, t.array(t.ref(define(core('ComponentCondition'), t.object({
      type: p(1, s('Type of the condition: Healthy.')),
      status: p(2, s('True, False or Unknown.')),
      message: p(3, s('Message of the condition.')),
      error: p(4, s('Error of the condition, when unhealthy.')),
    }, 'A condition of a component.', { required: ['type', 'status'] }))), 'Conditions of the component.', {
      patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type'],
    })),
  })),
  printerColumns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'Healthy or Unhealthy.', value: (cs) => ((cs.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Healthy' && c.status === 'True') ? 'Healthy' : 'Unhealthy') },
    { name: 'Message', type: 'string', description: 'Message of the health condition.', value: (cs) => cs.conditions?.[0]?.message ?? '' },
    { name: 'Error', type: 'string', description: 'Error of the health condition.', value: (cs) => cs.conditions?.[0]?.error ?? '' },
  ],
});
