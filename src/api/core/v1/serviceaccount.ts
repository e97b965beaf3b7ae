import { define, p, t } from '../../schema.js';
import { defineKind } from '../../kind.js';
import { isDns1123Subdomain } from '../../../machinery/validation.js';
import { core, kindSchema, ObjectReference, LocalObjectReference, nameColumn, ageColumn } from './common.js';

const schema = kindSchema('Binds a name, a principal that can be authenticated and authorized, and a set of secrets.', {
  automountServiceAccountToken: p(4, t.bool('Whether pods running as this account get an API token mounted automatically; a pod can override it.')),
  imagePullSecrets: p(3, t.array(t.ref(LocalObjectReference), 'Secrets in the same namespace for pulling the images of pods that use this account. Readable by the node agent only; never mounted.', { listType: 'atomic' })),
  secrets: p(2, t.array(t.ref(ObjectReference), 'Secrets that pods running as this account may use.', {
    patchMergeKey: 'name', patchStrategy: 'merge', listType: 'map', listMapKeys: ['name'],
  })),
});

export const serviceAccounts = defineKind({
  group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', shortNames: ['sa'],
  protobuf: true,
  scope: 'Namespaced',
  schema: define(core('ServiceAccount'), schema),
  nameCheck: isDns1123Subdomain,
  deleteReturnsObject: true,
  printerColumns: [
    nameColumn,
    { name: 'Secrets', type: 'string', description: 'Number of secrets listed.', value: (o) => (o.secrets ?? []).length },
    ageColumn,
  ],
});
