// CertificateSigningRequest: a PKCS#10 request for a certificate from a named
// signer. The requester's identity is recorded on create and never changes;
// `approval` writes the Approved/Denied conditions, `status` the certificate
// (and other conditions), each checked by its own admission plugin.

import { define, p, t } from '../../schema.js';
import { defineKind, statusSubresource, type KubeObject, type PartSubresource } from '../../kind.js';
import { definitionPrefix, vocabulary } from '../../../machinery/vocabulary.js';
import { isPathSegmentName } from '../../../machinery/validation.js';
import { humanDuration, rfc3339Now } from '../../../machinery/time.js';
import { ownValue, setOwn } from '../../../machinery/ownkeys.js';
import type { UserInfo } from '../../../machinery/user.js';
import { Time } from '../../meta/v1.js';
import { ageColumn, kindSchema, nameColumn } from '../../core/v1/common.js';
import { conditionTypes, validateApprovalUpdate, validateCreate, validateStatusUpdate, validateUpdate } from './validation.js';

const certificates = (name: string) => `${definitionPrefix}.api.certificates.v1.${name}`;

const extraValues = { ...t.array(t.string()), protoMessage: 'stringList' as const };

const CertificateSigningRequestSpec = define(certificates('CertificateSigningRequestSpec'), t.object({
  request: p(1, t.bytes('PEM-encoded PKCS#10 certificate request (base64 in JSON and YAML).'), 'whenSet'),
  signerName: p(7, t.string('The signer the request is for, `<domain>/<path>`.')),
  expirationSeconds: p(8, t.int32('Requested lifetime of the certificate; at least 600. Signers may issue a shorter one.')),
  usages: p(5, t.array(t.string(), 'Key usages and extended key usages the certificate is for.', { listType: 'atomic' })),
  username: p(2, t.string('Name of the user who created the request; set by the server.')),
  uid: p(3, t.string('UID of the user who created the request; set by the server.')),
  groups: p(4, t.array(t.string(), 'Groups of the user who created the request; set by the server.', { listType: 'atomic' })),
  extra: p(6, t.map(extraValues, 'Extra attributes of the user who created the request; set by the server.')),
}, 'What a certificate signing request asks for, and who asked.', { required: ['request', 'signerName'] }));

const CertificateSigningRequestCondition = define(certificates('CertificateSigningRequestCondition'), t.object({
  type: p(1, t.string('Type of the condition: Approved, Denied, Failed or another.')),
  status: p(6, t.string('True, False or Unknown; Approved, Denied and Failed may only be True.')),
  reason: p(2, t.string('A brief reason for the condition, CamelCase.')),
  message: p(3, t.string('Details about the condition, for people.')),
  lastUpdateTime: p(4, t.ref(Time, 'When the condition was last updated.'), 'always'),
  lastTransitionTime: p(5, t.ref(Time, 'When the condition last changed status.'), 'always'),
}, 'One condition of a certificate signing request.', { required: ['type', 'status'] }));

const CertificateSigningRequestStatus = define(certificates('CertificateSigningRequestStatus'), t.object({
  conditions: p(1, t.array(t.ref(CertificateSigningRequestCondition), 'Approved, Denied, Failed and other conditions.', { listType: 'map', listMapKeys: ['type'] })),
  certificate: p(2, t.bytes('The issued certificate: PEM CERTIFICATE blocks (base64 in JSON and YAML).'), 'whenSet'),
}, 'The state of a certificate signing request.'));

const schema = kindSchema('A request for a certificate from a named signer; it is approved or denied, then signed.', {
  spec: p(2, t.ref(CertificateSigningRequestSpec, 'The request and who made it.'), 'always'),
  status: p(3, t.ref(CertificateSigningRequestStatus, 'Approval conditions and the issued certificate.'), 'always'),
}, ['spec']);

/** Records who asks; nothing the client sent in these fields survives. */
function recordRequester(csr: KubeObject, user: UserInfo | undefined): void {
  const spec = (csr.spec ??= {});
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  if (!user) return;
  if (user.username) spec.username = user.username;
  if (user.uid) spec.uid = user.uid;
  if (user.groups.length) spec.groups = [...user.groups];
  const extra = user.extra ?? {};
  const keys = Object.keys(extra);
  if (keys.length) {
    spec.extra = {};
    for (const key of keys) setOwn(spec.extra, key, [...(ownValue(extra, key) ?? [])]);
  }
}

type Condition = Record<string, unknown>;

/**
 * Conditions written without times get them: lastUpdateTime now,
 * lastTransitionTime kept from a stored condition of the same type and status.
 */
function stampConditions(csr: KubeObject, old: KubeObject): void {
  const conditions: Condition[] = Array.isArray(csr.status?.conditions) ? csr.status.conditions : [];
  const previous: Condition[] = Array.isArray(old.status?.conditions) ? old.status.conditions : [];
  const now = rfc3339Now();
  for (const c of conditions) {
    if (typeof c !== 'object' || c === null) continue;
    if (!c.lastUpdateTime) c.lastUpdateTime = now;
    if (!c.lastTransitionTime) {
      const same = previous.find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime);
      c.lastTransitionTime = same ? same.lastTransitionTime : now;
    }
  }
}

const isApprovalType = (c: Condition) => c.type === conditionTypes.approved || c.type === conditionTypes.denied;

/** Writes the Approved and Denied conditions (and only the conditions). */
const approvalSubresource: PartSubresource = {
  owns: ['status.conditions'],
  verbs: ['get', 'update', 'patch'],
  prepareForUpdate: stampConditions,
  validateUpdate: validateApprovalUpdate,
};

/** Writes status (the certificate, Failed and other conditions); Approved and Denied stay as stored. */
const statusWithApprovalKept: PartSubresource = {
  ...statusSubresource,
  prepareForUpdate(csr, old) {
    const sent: Condition[] = Array.isArray(csr.status?.conditions) ? csr.status.conditions : [];
    const stored: Condition[] = Array.isArray(old.status?.conditions) ? old.status.conditions : [];
    const conditions = [...sent.filter((c) => !isApprovalType(c)), ...structuredClone(stored.filter(isApprovalType))];
    csr.status ??= {};
    if (conditions.length) csr.status.conditions = conditions;
    else delete csr.status.conditions;
    stampConditions(csr, old);
  },
  validateUpdate: validateStatusUpdate,
};

/** Types of the conditions that hold (status True, or unset in old data). */
function heldConditions(csr: KubeObject): string[] {
  const conditions: Condition[] = Array.isArray(csr.status?.conditions) ? csr.status.conditions : [];
  return conditions.filter((c) => c.status === undefined || c.status === '' || c.status === 'True').map((c) => String(c.type));
}

/** The CONDITION column, as upstream prints it: Approved/Denied/Pending, then Failed and Issued. */
export function conditionSummary(csr: KubeObject): string {
  const held = heldConditions(csr);
  let summary = held.includes(conditionTypes.denied) ? 'Denied' : held.includes(conditionTypes.approved) ? 'Approved' : 'Pending';
  if (held.includes(conditionTypes.failed)) summary += ',Failed';
  if (csr.status?.certificate) summary += ',Issued';
  return summary;
}

export const certificateSigningRequests = defineKind({
  group: vocabulary.certificatesGroup, version: 'v1', kind: 'CertificateSigningRequest', plural: 'certificatesigningrequests',
  shortNames: ['csr'],
  protobuf: true,
  scope: 'Cluster',
  // Any name that is one path segment, as upstream ("we don't care what you call your certificate requests").
  nameCheck: isPathSegmentName,
  schema: define(certificates('CertificateSigningRequest'), schema),
  subresources: { approval: approvalSubresource, status: statusWithApprovalKept },
  strategy: {
    prepareForCreate: recordRequester,
    // The spec never changes after create; status changes only through its sub-resources.
    prepareForUpdate(csr, old) {
      csr.spec = structuredClone(old.spec);
    },
    validate: validateCreate,
    validateUpdate,
  },
  fieldSelectors: { 'spec.signerName': (csr) => String(csr.spec?.signerName ?? '') },
  printerColumns: [
    nameColumn,
    ageColumn,
    { name: 'SignerName', type: 'string', description: 'The signer the request is for.', value: (csr) => csr.spec?.signerName ?? '' },
    { name: 'Requestor', type: 'string', description: 'The user who made the request.', value: (csr) => csr.spec?.username ?? '' },
    {
      name: 'RequestedDuration', type: 'string', description: 'The lifetime the request asks for.',
      value: (csr) => (typeof csr.spec?.expirationSeconds === 'number' ? humanDuration(csr.spec.expirationSeconds * 1000) : '<none>'),
    },
    { name: 'Condition', type: 'string', description: 'Approved, Denied or Pending; Failed and Issued as they happen.', value: conditionSummary },
  ],
});
