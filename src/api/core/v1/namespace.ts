import { define, p, t } from '../../schema.js';
import { allVerbs, defineKind, KubeObject, statusSubresource } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { isDns1123Label, isQualifiedName, checkName, fieldPath } from '../../../machinery/validation.js';
import { upstreamCompat, vocabulary } from '../../../machinery/vocabulary.js';
import { Time } from '../../meta/v1.js';
import { core, kindSchema, nameColumn, ageColumn } from './common.js';

const NamespaceCondition = define(core('NamespaceCondition'), t.object({
  type: p(1, t.string('Type of the condition, e.g. NamespaceContentRemaining.')),
  status: p(2, t.string('True, False or Unknown.')),
  lastTransitionTime: p(4, t.ref(Time, 'When the status last changed.'), 'always'),
  reason: p(5, t.string('Machine-readable reason of the last change.')),
  message: p(6, t.string('Human-readable details.')),
}, 'The state of a namespace at one point.', { required: ['type', 'status'] }));

const NamespaceSpec = define(core('NamespaceSpec'), t.object({
  finalizers: p(1, t.array(t.string(), 'Values that must be removed before the namespace is removed from the store.', { listType: 'atomic' })),
}, 'Desired state of a namespace.'));

const NamespaceStatus = define(core('NamespaceStatus'), t.object({
  phase: p(1, t.string('Active or Terminating.', { enum: ['Active', 'Terminating'] })),
  conditions: p(2, t.array(t.ref(NamespaceCondition), 'Latest observations of the namespace.', {
    patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type'],
  })),
}, 'Observed state of a namespace.'));

const schema = kindSchema('A scope for names; namespaced objects disappear with their namespace.', {
  spec: p(2, t.ref(NamespaceSpec, 'Desired state.'), 'always'),
  status: p(3, t.ref(NamespaceStatus, 'Observed state; read-only for clients.'), 'always'),
});

function validateFinalizers(ns: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  (ns.spec?.finalizers ?? []).forEach((f: string, i: number) => {
    const field = fieldPath('spec.finalizers', i);
    errs.push(...checkName(isQualifiedName, field, f));
    if (!f.includes('/') && f !== vocabulary.namespaceFinalizer) {
      errs.push(fieldErrors.invalid(field, f, 'name is neither a standard finalizer name nor is it fully qualified'));
    }
  });
  return errs;
}

/**
 * Every namespace carries a label with its own name, so selectors can pick
 * namespaces by name: ours, and upstream's for selectors written for it.
 */
function labelWithName(ns: KubeObject): void {
  if (!ns.metadata?.name) return;
  ns.metadata.labels ??= {};
  ns.metadata.labels[vocabulary.namespaceNameLabel] = ns.metadata.name;
  ns.metadata.labels[upstreamCompat.namespaceNameLabel] = ns.metadata.name;
}

export const namespaces = defineKind({
  group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', shortNames: ['ns'],
  protobuf: true,
  scope: 'Cluster',
  schema: define(core('Namespace'), schema),
  nameCheck: isDns1123Label,
  subresources: {
    status: statusSubresource,
    // finalize changes spec.finalizers and nothing else; no other write changes them.
    finalize: { owns: ['spec.finalizers'], verbs: ['update'] },
  },
  deleteReturnsObject: true,
  // As upstream: namespaces are deleted one at a time, never as a collection.
  verbs: allVerbs.filter((v) => v !== 'deletecollection'),
  strategy: {
    defaults(ns) {
      ns.status ??= {};
      ns.status.phase ||= 'Active';
      labelWithName(ns);
    },
    prepareForCreate(ns) {
      ns.status = { phase: 'Active' };
      ns.spec ??= {};
      const finalizers: string[] = ns.spec.finalizers ?? [];
      if (!finalizers.includes(vocabulary.namespaceFinalizer)) finalizers.push(vocabulary.namespaceFinalizer);
      ns.spec.finalizers = finalizers;
    },
    holdsDeletion: (ns) => (ns.spec?.finalizers ?? []).length > 0,
    markDeleting(ns) {
      ns.status = { ...(ns.status ?? {}), phase: 'Terminating' };
    },
    validate: validateFinalizers,
    validateUpdate: (ns) => validateFinalizers(ns),
  },
  fieldSelectors: { 'status.phase': (ns) => ns.status?.phase ?? '' },
  printerColumns: [
    nameColumn,
    { name: 'Status', type: 'string', description: 'The phase of the namespace.', value: (ns) => ns.status?.phase },
    ageColumn,
  ],
});
