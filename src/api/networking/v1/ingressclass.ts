// networking/v1 IngressClass: names the controller that implements the
// Ingresses of a class, with optional parameters; the controller is immutable.

import { vocabulary } from '../../../machinery/vocabulary.js';
import { define, p, t } from '../../schema.js';
import { defineKind, type KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { checkName, isDns1123Label, isDns1123Subdomain, isPathSegmentName } from '../../../machinery/validation.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';
import { definitionsOf, immutable } from '../../sharedrules.js';

type Obj = Record<string, any>;
const networking = definitionsOf('networking');
const s = t.string;

const schema = kindSchema('A class of Ingresses and the controller that implements them.', {
  spec: p(2, t.ref(define(networking('IngressClassSpec'), t.object({
    controller: p(1, s('The controller implementing the class, a domain-prefixed path (`example.com/ingress-controller`); immutable.')),
    parameters: p(2, t.ref(define(networking('IngressClassParametersReference'), t.object({
      apiGroup: p(1, s('Group of the referent; the core group when unset.'), 'whenSet'),
      kind: p(2, s('Kind of the referent.')),
      name: p(3, s('Name of the referent.')),
      scope: p(4, s('Cluster or Namespace; Cluster when unset.'), 'whenSet'),
      namespace: p(5, s('Namespace of the referent, when scope is Namespace.'), 'whenSet'),
    }, 'An object holding the class\'s configuration.', { required: ['kind', 'name'] })), 'Configuration of the class for its controller.')),
  }, 'Desired state of an IngressClass.')), 'Desired state.'), 'always'),
});

const maxControllerLength = 250;
const pathChars = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;
const scopes = ['Cluster', 'Namespace'];

/** Upstream's IsDomainPrefixedPath. */
function validateDomainPrefixedPath(value: string, field: string): FieldError[] {
  if (!value) return [fieldErrors.required(field, '')];
  const slash = value.indexOf('/');
  const host = slash < 0 ? value : value.slice(0, slash);
  const path = slash < 0 ? '' : value.slice(slash + 1);
  if (slash < 0 || !host || !path) return [fieldErrors.invalid(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDns1123Subdomain(host).map((m) => fieldErrors.invalid(field, host, m));
  if (!pathChars.test(path)) errs.push(fieldErrors.invalid(field, path, 'Invalid path (regex used for validation is \'[A-Za-z0-9/\\-._~%!$&\'()*+,;=:]+\')'));
  return errs;
}

function validateParameters(params: Obj | undefined): FieldError[] {
  if (!params) return [];
  const at = 'spec.parameters';
  const errs: FieldError[] = [];
  if (params.apiGroup) errs.push(...checkName(isDns1123Subdomain, `${at}.apiGroup`, params.apiGroup));
  if (!params.kind) errs.push(fieldErrors.required(`${at}.kind`, ''));
  else errs.push(...checkName(isPathSegmentName, `${at}.kind`, params.kind));
  if (!params.name) errs.push(fieldErrors.required(`${at}.name`, ''));
  else errs.push(...checkName(isPathSegmentName, `${at}.name`, params.name));
  if (params.scope === undefined || params.scope === null) return [...errs, fieldErrors.required(`${at}.scope`, '')];
  if (!scopes.includes(params.scope)) return [...errs, fieldErrors.notSupported(`${at}.scope`, params.scope, scopes)];
  if (params.scope === 'Namespace') {
    if (params.namespace === undefined || params.namespace === null) errs.push(fieldErrors.required(`${at}.namespace`, '`parameters.scope` is set to \'Namespace\''));
    else errs.push(...checkName(isDns1123Label, `${at}.namespace`, params.namespace));
  }
  if (params.scope === 'Cluster' && params.namespace !== undefined && params.namespace !== null) errs.push(fieldErrors.forbidden(`${at}.namespace`, '`parameters.scope` is set to \'Cluster\''));
  return errs;
}

function validateIngressClass(ic: KubeObject): FieldError[] {
  const controller: string = ic.spec?.controller ?? '';
  const errs: FieldError[] = [];
  if (controller.length > maxControllerLength) errs.push(fieldErrors.tooLong('spec.controller', maxControllerLength));
  errs.push(...validateDomainPrefixedPath(controller, 'spec.controller'));
  errs.push(...validateParameters(ic.spec?.parameters));
  return errs;
}

function formatParameters(ic: KubeObject): string {
  const params: Obj | undefined = ic.spec?.parameters;
  if (!params) return '<none>';
  return params.apiGroup ? `${params.kind}.${params.apiGroup}/${params.name}` : `${params.kind}/${params.name}`;
}

export const ingressClasses = defineKind({
  group: vocabulary.networkingGroup, version: 'v1', kind: 'IngressClass', plural: 'ingressclasses',
  protobuf: true,
  scope: 'Cluster',
  schema: define(networking('IngressClass'), schema),
  tracksGeneration: true,
  strategy: {
    defaults(ic) {
      if (ic.spec?.parameters && ic.spec.parameters.scope == null) ic.spec.parameters.scope = 'Cluster';
    },
    validate: validateIngressClass,
    validateUpdate: (ic, old) => [...validateIngressClass(ic), ...immutable(ic.spec?.controller, old.spec?.controller, 'spec.controller')],
  },
  printerColumns: [
    nameColumn,
    { name: 'Controller', type: 'string', description: 'The controller implementing the class.', value: (ic) => ic.spec?.controller ?? '' },
    { name: 'Parameters', type: 'string', description: 'The configuration of the class.', value: formatParameters },
    ageColumn,
  ],
});
