// apiregistration/v1 APIService: which server answers a group version. A
// local one (no service) is served by this server (every built-in and custom
// resource group version has one, kept by the autoregistration controller);
// a remote one names the Service in front of an aggregated server, which the
// aggregator proxies the group version's requests to. The availability
// controller writes the `Available` condition.

import { definitionPrefix, vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, statusSubresource, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, isDns1035Label, isDns1123Subdomain, isPathSegmentName } from '../../../machinery/validation.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { Time } from '../../meta/v1.js';

const apiregistration = (name: string) => `${definitionPrefix}.kube-aggregator.apiregistration.v1.${name}`;

const ServiceReference = define(apiregistration('ServiceReference'), t.object({
  namespace: p(1, t.string('Namespace of the Service.')),
  name: p(2, t.string('Name of the Service.')),
  port: p(3, t.int32('Port of the Service the aggregated server listens behind; 443 when unset.')),
}, 'The Service in front of an aggregated server.'));

const APIServiceSpec = define(apiregistration('APIServiceSpec'), t.object({
  service: p(1, t.ref(ServiceReference, 'The Service of the aggregated server; none for a group version this server answers itself.')),
  group: p(2, t.string('The API group this APIService serves.')),
  version: p(3, t.string('The API version this APIService serves.')),
  insecureSkipTLSVerify: p(4, t.bool('Do not verify the aggregated server\'s certificate (strongly discouraged: use caBundle).')),
  caBundle: p(5, t.bytes('PEM CA bundle that verifies the aggregated server\'s serving certificate.'), 'whenSet'),
  groupPriorityMinimum: p(7, t.int32('Priority of the group among groups (higher first); the highest of its APIServices counts.'), 'always'),
  versionPriority: p(8, t.int32('Priority of this version within its group (higher first).'), 'always'),
}, 'Which server answers a group version, and how it is reached.', { required: ['groupPriorityMinimum', 'versionPriority'] }));

const APIServiceCondition = define(apiregistration('APIServiceCondition'), t.object({
  type: p(1, t.string('Type of the condition: Available.')),
  status: p(2, t.string('True, False or Unknown.')),
  lastTransitionTime: p(3, t.ref(Time, 'When the condition last changed status.')),
  reason: p(4, t.string('Why the condition last changed, in CamelCase.')),
  message: p(5, t.string('Details of the last change.')),
}, 'One aspect of an APIService\'s state.', { required: ['type', 'status'] }));

const APIServiceStatus = define(apiregistration('APIServiceStatus'), t.object({
  conditions: p(1, t.array(t.ref(APIServiceCondition), 'The current state: Available.', { patchMergeKey: 'type', patchStrategy: 'merge', listType: 'map', listMapKeys: ['type'] })),
}, 'The observed state of an APIService.'));

const schema = kindSchema('Which server answers an API group version: this one, or an aggregated server behind a Service.', {
  spec: p(2, t.ref(APIServiceSpec, 'Which group version, and the server that answers it.'), 'always'),
  status: p(3, t.ref(APIServiceStatus, 'Whether the group version is available.'), 'always'),
});

/** Upstream's rules (kube-aggregator's ValidateAPIService), with its messages. */
function validateAPIService(service: KubeObject): FieldError[] {
  const spec = service.spec ?? {};
  const group = typeof spec.group === 'string' ? spec.group : '';
  const version = typeof spec.version === 'string' ? spec.version : '';
  const errs: FieldError[] = [];
  const required = `${version}.${group}`;
  const name = String(service.metadata?.name ?? '');
  if (isPathSegmentName(name).length === 0 && name !== required) {
    errs.push(fieldErrors.invalid('metadata.name', name, `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`));
  }
  if (!group && version !== 'v1') errs.push(fieldErrors.required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group) errs.push(...checkName(isDns1123Subdomain, 'spec.group', group));
  errs.push(...checkName(isDns1035Label, 'spec.version', version));
  const groupPriority = Number(spec.groupPriorityMinimum ?? 0);
  if (!(groupPriority > 0 && groupPriority <= 20000)) errs.push(fieldErrors.invalid('spec.groupPriorityMinimum', groupPriority, 'must be positive and less than 20000'));
  const versionPriority = Number(spec.versionPriority ?? 0);
  if (!(versionPriority > 0 && versionPriority <= 1000)) errs.push(fieldErrors.invalid('spec.versionPriority', versionPriority, 'must be positive and less than 1000'));
  const caBytes = typeof spec.caBundle === 'string' ? Buffer.from(spec.caBundle, 'base64').length : 0;
  if (!spec.service) {
    if (caBytes) errs.push(fieldErrors.invalid('spec.caBundle', `${caBytes} bytes`, 'local APIServices may not have a caBundle'));
    if (spec.insecureSkipTLSVerify) errs.push(fieldErrors.invalid('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return errs;
  }
  if (!spec.service.namespace) errs.push(fieldErrors.required('spec.service.namespace', ''));
  if (!spec.service.name) errs.push(fieldErrors.required('spec.service.name', ''));
  const port = spec.service.port;
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535)) errs.push(fieldErrors.invalid('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (spec.insecureSkipTLSVerify && caBytes) errs.push(fieldErrors.invalid('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return errs;
}

/** The `Available` condition of an APIService, if it has one. */
export function availableCondition(service: KubeObject): KubeObject | undefined {
  const conditions: KubeObject[] = Array.isArray(service.status?.conditions) ? service.status.conditions : [];
  return conditions.find((c) => c?.type === 'Available');
}

export const apiServices = defineKind({
  group: vocabulary.apiregistrationGroup, version: 'v1', kind: 'APIService', plural: 'apiservices',
  protobuf: true,
  scope: 'Cluster',
  nameCheck: isPathSegmentName,
  schema: define(apiregistration('APIService'), schema),
  subresources: { status: statusSubresource },
  strategy: {
    defaults(service) {
      if (service.spec?.service && typeof service.spec.service === 'object') service.spec.service.port ??= 443;
      service.status ??= {};
    },
    validate: validateAPIService,
    validateUpdate: (service) => validateAPIService(service),
  },
  printerColumns: [
    nameColumn,
    {
      name: 'Service', type: 'string', description: 'The Service of the aggregated server, or Local.',
      value: (s) => (s.spec?.service ? `${s.spec.service.namespace}/${s.spec.service.name}` : 'Local'),
    },
    {
      name: 'Available', type: 'string', description: 'Whether the group version is available, and why not.',
      value: (s) => {
        const c = availableCondition(s);
        if (!c) return 'Unknown';
        return c.status === 'True' ? 'True' : `${c.status} (${c.reason ?? ''})`;
      },
    },
    ageColumn,
  ],
});

export const apiregistrationV1Kinds = [apiServices];
