// Validation of CertificateSigningRequests, as upstream's: what a create may
// hold, and what each way of updating (the object, `status`, `approval`) may
// change. Problems already present in the stored object are tolerated on
// update, so old data stays writable.

import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { deepEqual } from '../../../machinery/equal.js';
import { isDns1123Label, isDns1123Subdomain } from '../../../machinery/validation.js';
import { certificateBundleProblem, CertificateRequestError, parseCertificateRequest } from '../../../machinery/pkcs10.js';
import { certificateUsages } from '../../../machinery/usages.js';
import { vocabulary } from '../../../machinery/vocabulary.js';
import type { KubeObject } from '../../kind.js';

export const conditionTypes = { approved: 'Approved', denied: 'Denied', failed: 'Failed' } as const;

/** Condition types whose status may only be True. */
const trueOnlyTypes: readonly string[] = Object.values(conditionTypes);
const allStatuses = ['False', 'True', 'Unknown'];

interface Options {
  /** The approval sub-resource: Approved/Denied conditions may change. */
  settingApproval?: boolean;
  /** The status sub-resource: status.certificate may be set once. */
  settingCertificate?: boolean;
  // What an update tolerates because the stored object has it already.
  bothApprovedAndDenied?: boolean;
  legacySigner?: boolean;
  duplicateConditionTypes?: boolean;
  emptyConditionType?: boolean;
  arbitraryCertificate?: boolean;
  unknownUsages?: boolean;
  duplicateUsages?: boolean;
}

type Condition = { type?: unknown; status?: unknown };

const conditionsOf = (csr: KubeObject): Condition[] => (Array.isArray(csr.status?.conditions) ? csr.status.conditions : []);
const usagesOf = (csr: KubeObject): unknown[] => (Array.isArray(csr.spec?.usages) ? csr.spec.usages : []);
/** The bytes of a base64 field (request, certificate); empty when unset. */
export const bytesOf = (value: unknown): Buffer => (typeof value === 'string' ? Buffer.from(value, 'base64') : Buffer.alloc(0));

function hasDuplicates(values: unknown[]): boolean {
  return new Set(values).size !== values.length;
}

function toleratedBy(old: KubeObject | undefined, next: KubeObject): Options {
  if (!old) return {};
  const types = conditionsOf(old).map((c) => c.type);
  const sameCertificate = bytesOf(next.status?.certificate).equals(bytesOf(old.status?.certificate));
  return {
    bothApprovedAndDenied: types.includes(conditionTypes.approved) && types.includes(conditionTypes.denied),
    legacySigner: old.spec?.signerName === vocabulary.legacyUnknownSigner,
    duplicateConditionTypes: hasDuplicates(types),
    emptyConditionType: types.some((t) => !t),
    arbitraryCertificate: sameCertificate || certificateBundleProblem(bytesOf(old.status?.certificate)) !== undefined,
    unknownUsages: usagesOf(old).some((u) => !(certificateUsages as readonly unknown[]).includes(u)),
    duplicateUsages: hasDuplicates(usagesOf(old)),
  };
}

/** Upstream's rule for signer names: `<DNS subdomain with a dot>/<dot-separated DNS subdomains>`. */
export function validateSignerName(field: string, name: unknown): FieldError[] {
  if (typeof name !== 'string' || name === '') return [fieldErrors.required(field)];
  const segments = name.split('/');
  if (segments.length !== 2) return [fieldErrors.invalid(field, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, path] = segments as [string, string];
  const errs: FieldError[] = [];
  if (domain.length > 253) errs.push(fieldErrors.tooLong(field, 253));
  const labels = domain.split('.');
  for (const label of labels) {
    const problems = isDns1123Label(label);
    if (problems.length) {
      errs.push(...problems.map((m) => fieldErrors.invalid(field, domain, `validating label "${label}": ${m}`)));
      break;
    }
  }
  if (labels.length < 2) errs.push(fieldErrors.invalid(field, domain, 'should be a domain with at least two segments separated by dots'));
  for (const component of path.split('.')) {
    const problems = isDns1123Subdomain(component);
    if (problems.length) {
      errs.push(...problems.map((m) => fieldErrors.invalid(field, path, `validating component "${component}": ${m}`)));
      break;
    }
  }
  // A signer name must fit in a label value after its domain: 253 + 1 + 317.
  const maxLength = 253 + 1 + (253 + 63 + 1);
  if (name.length > maxLength) errs.push(fieldErrors.tooLong(field, maxLength));
  return errs;
}

function validateConditions(csr: KubeObject, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<unknown>();
  let approved = false;
  let denied = false;
  conditionsOf(csr).forEach((c, i) => {
    const at = `status.conditions[${i}]`;
    if (!opts.emptyConditionType && !c.type) errs.push(fieldErrors.required(`${at}.type`));
    const allowed = trueOnlyTypes.includes(String(c.type)) ? ['True'] : allStatuses;
    if (c.status === undefined || c.status === null || c.status === '') errs.push(fieldErrors.required(`${at}.status`));
    else if (!allowed.includes(String(c.status))) errs.push(fieldErrors.notSupported(`${at}.status`, c.status, allowed));
    if (!opts.bothApprovedAndDenied) {
      if (c.type === conditionTypes.approved) approved = true;
      if (c.type === conditionTypes.denied) denied = true;
      if ((c.type === conditionTypes.approved && denied) || (c.type === conditionTypes.denied && approved)) {
        errs.push(fieldErrors.invalid(`${at}.type`, c.type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!opts.duplicateConditionTypes) {
      if (seen.has(c.type)) errs.push(fieldErrors.duplicate(`${at}.type`, c.type));
      seen.add(c.type);
    }
  });
  return errs;
}

function validateObject(csr: KubeObject, opts: Options): FieldError[] {
  const errs: FieldError[] = [];
  const spec = csr.spec ?? {};
  try {
    parseCertificateRequest(bytesOf(spec.request));
  } catch (e) {
    if (!(e instanceof CertificateRequestError)) throw e;
    errs.push(fieldErrors.invalid('spec.request', spec.request ?? null, e.message));
  }
  const usages = usagesOf(csr);
  if (usages.length === 0) errs.push(fieldErrors.required('spec.usages'));
  if (!opts.unknownUsages) {
    usages.forEach((u, i) => {
      if (!(certificateUsages as readonly unknown[]).includes(u)) errs.push(fieldErrors.notSupported(`spec.usages[${i}]`, u, [...certificateUsages].sort()));
    });
  }
  if (!opts.duplicateUsages) {
    const seen = new Set<unknown>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(fieldErrors.duplicate(`spec.usages[${i}]`, u));
      seen.add(u);
    });
  }
  if (!opts.legacySigner && spec.signerName === vocabulary.legacyUnknownSigner) {
    errs.push(fieldErrors.invalid('spec.signerName', spec.signerName, 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName('spec.signerName', spec.signerName));
  }
  if (typeof spec.expirationSeconds === 'number' && spec.expirationSeconds < 600) {
    errs.push(fieldErrors.invalid('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  errs.push(...validateConditions(csr, opts));
  if (!opts.arbitraryCertificate) {
    const problem = certificateBundleProblem(bytesOf(csr.status?.certificate));
    if (problem) errs.push(fieldErrors.invalid('status.certificate', '<certificate data>', problem));
  }
  return errs;
}

export function validateCreate(csr: KubeObject): FieldError[] {
  return validateObject(csr, {});
}

const ofType = (csr: KubeObject, type: string) => conditionsOf(csr).filter((c) => c.type === type);

function validateUpdateWith(csr: KubeObject, old: KubeObject, granted: Options): FieldError[] {
  const errs = validateObject(csr, { ...toleratedBy(old, csr), ...granted });
  for (const type of [conditionTypes.approved, conditionTypes.denied, conditionTypes.failed]) {
    if (ofType(csr, type).length < ofType(old, type).length) errs.push(fieldErrors.forbidden('status.conditions', `updates may not remove a condition of type "${type}"`));
  }
  if (!granted.settingApproval) {
    for (const type of [conditionTypes.approved, conditionTypes.denied]) {
      const before = ofType(old, type);
      const after = ofType(csr, type);
      if (after.length > before.length) errs.push(fieldErrors.forbidden('status.conditions', `updates may not add a condition of type "${type}"`));
      else if (after.length === before.length && !deepEqual(before, after)) errs.push(fieldErrors.forbidden('status.conditions', `updates may not modify a condition of type "${type}"`));
    }
  }
  const certificate = bytesOf(csr.status?.certificate);
  const oldCertificate = bytesOf(old.status?.certificate);
  if (!certificate.equals(oldCertificate)) {
    if (!granted.settingCertificate) errs.push(fieldErrors.forbidden('status.certificate', 'updates may not set certificate content'));
    else if (oldCertificate.length > 0) errs.push(fieldErrors.forbidden('status.certificate', 'updates may not modify existing certificate content'));
  }
  return errs;
}

export const validateUpdate = (csr: KubeObject, old: KubeObject) => validateUpdateWith(csr, old, {});
export const validateStatusUpdate = (csr: KubeObject, old: KubeObject) => validateUpdateWith(csr, old, { settingCertificate: true });
export const validateApprovalUpdate = (csr: KubeObject, old: KubeObject) => validateUpdateWith(csr, old, { settingApproval: true });
