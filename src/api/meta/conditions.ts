// Upstream's ValidateConditions for the shared metav1.Condition shape
// (service and disruption budget status, among others): unique types that
// are label names, a known status, a reason in CamelCase-ish form, a
// transition time, and bounded texts.

import { FieldError, fieldErrors } from '../../machinery/errors.js';
import { checkName, fieldPath, isQualifiedName } from '../../machinery/validation.js';

type Obj = Record<string, any>;

const statuses = ['False', 'True', 'Unknown'];
const reasonPattern = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;
const reasonMessage = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";
const maxReasonLength = 1024;
const maxMessageLength = 32 * 1024;

/** The errors of a list of conditions at `base` (`status.conditions`). */
export function validateConditions(conditions: unknown, base: string): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (Array.isArray(conditions) ? (conditions as Obj[]) : []).forEach((c, i) => {
    const at = fieldPath(base, i);
    const type = String(c.type ?? '');
    if (seen.has(type)) errs.push(fieldErrors.duplicate(`${at}.type`, type));
    seen.add(type);
    errs.push(...checkName(isQualifiedName, `${at}.type`, type));
    if (!statuses.includes(c.status)) errs.push(fieldErrors.notSupported(`${at}.status`, c.status ?? '', statuses));
    if (typeof c.observedGeneration === 'number' && c.observedGeneration < 0) {
      errs.push(fieldErrors.invalid(`${at}.observedGeneration`, c.observedGeneration, 'must be greater than or equal to zero'));
    }
    if (!c.lastTransitionTime) errs.push(fieldErrors.required(`${at}.lastTransitionTime`, 'must be set'));
    const reason = String(c.reason ?? '');
    if (!reason) errs.push(fieldErrors.required(`${at}.reason`, 'must be set'));
    else {
      if (!reasonPattern.test(reason)) errs.push(fieldErrors.invalid(`${at}.reason`, reason, reasonMessage));
      if (reason.length > maxReasonLength) errs.push(fieldErrors.tooLong(`${at}.reason`, maxReasonLength));
    }
    if (String(c.message ?? '').length > maxMessageLength) errs.push(fieldErrors.tooLong(`${at}.message`, maxMessageLength));
  });
  return errs;
}
