import { define, p, t } from '../../schema.js';
import { defineKind, KubeObject } from '../../kind.js';
import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { definitionPrefix, vocabulary } from '../../../machinery/vocabulary.js';
import { MicroTime } from '../../meta/v1.js';
import { kindSchema, nameColumn, ageColumn } from '../../core/v1/common.js';

const coordination = (name: string) => `${definitionPrefix}.api.coordination.v1.${name}`;

const LeaseSpec = define(coordination('LeaseSpec'), t.object({
  // Every field is a pointer upstream: written only when set.
  holderIdentity: p(1, t.string('Identity of the current holder of the lease.'), 'whenSet'),
  leaseDurationSeconds: p(2, t.int32('How long candidates wait after the last renewal before they may take the lease.')),
  acquireTime: p(3, t.ref(MicroTime, 'When the current holder acquired the lease.')),
  renewTime: p(4, t.ref(MicroTime, 'When the current holder last renewed the lease.')),
  leaseTransitions: p(5, t.int32('How many times the lease changed holders.')),
}, 'The specification of a Lease.'));

const schema = kindSchema('A lease: a time-bound claim by one holder, used for leader election and heartbeats.', {
  spec: p(2, t.ref(LeaseSpec, 'The specification of the Lease.'), 'always'),
});

function validateLease(lease: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = lease.spec ?? {};
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds !== null && spec.leaseDurationSeconds <= 0) {
    errs.push(fieldErrors.invalid('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions !== null && spec.leaseTransitions < 0) {
    errs.push(fieldErrors.invalid('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  }
  return errs;
}

export const leases = defineKind({
  group: vocabulary.coordinationGroup, version: 'v1', kind: 'Lease', plural: 'leases',
  protobuf: true,
  scope: 'Namespaced',
  schema: define(coordination('Lease'), schema),
  strategy: { validate: validateLease, validateUpdate: (lease) => validateLease(lease) },
  printerColumns: [
    nameColumn,
    { name: 'Holder', type: 'string', description: 'Identity of the current holder.', value: (lease) => lease.spec?.holderIdentity ?? '' },
    ageColumn,
  ],
});
