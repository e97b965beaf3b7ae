// Binding (core v1): ties a pod to a node. Stores nothing of its own: a
// create (pods/{name}/binding, or the namespace's bindings) sets the pod's
// spec.nodeName, the only way it changes (registry/pods.ts).

import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { fieldErrors } from '../../../machinery/errors.js';
import { core, kindSchema, ObjectReference } from './common.js';

export const bindings = defineKind({
  group: '', version: 'v1', kind: 'Binding', plural: 'bindings',
  protobuf: true,
  scope: 'Namespaced',
  verbs: ['create'],
  schema: define(core('Binding'), kindSchema('Ties one object to another; a scheduler binds a pod to a node with it.', {
    target: p(2, t.ref(ObjectReference, 'The object to bind to: a Node.'), 'always'),
  }, ['target'])),
  strategy: {
    validate(b) {
      const kind = b.target?.kind ?? '';
      if (kind !== '' && kind !== 'Node') return [fieldErrors.notSupported('target.kind', kind, ['Node', '<empty>'])];
      if (!b.target?.name) return [fieldErrors.required('target.name')];
      return [];
    },
  },
});
