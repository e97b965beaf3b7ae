// API approval of definitions in protected groups, as upstream's
// apihelpers and apiapproval controller: a group of the community's domains
// (`k8s.io`, `kubernetes.io` and their subdomains) or of the product's own
// needs the approval annotation, whose value is either the URL where the
// API was approved or a reason starting with "unapproved". The annotation is
// ours (`api-approved.<domain>`) with upstream's accepted, read in that
// order; messages name the one read, or ours when neither is there.

import { product, upstreamCompat, vocabulary } from '../../machinery/vocabulary.js';
import { FieldError, fieldErrors } from '../../machinery/errors.js';
import { ownValue } from '../../machinery/ownkeys.js';

export type ApprovalState = 'Approved' | 'Bypassed' | 'Missing' | 'Invalid';

export interface Approval {
  state: ApprovalState;
  /** The annotation read (ours when neither is set). */
  annotation: string;
  value: string;
  /** Upstream's wording of the state, for the 422 and the condition. */
  reason: string;
}

/** The condition type upstream's apiapproval controller maintains (kept: clients look for it by this name). */
export const approvalConditionType = 'KubernetesAPIApprovalPolicyConformant';

const enhancement = 'https://github.com/kubernetes/enhancements/pull/1111';

/** Upstream's IsProtectedCommunityGroup, with the product's domain protected as well. */
export function isProtectedGroup(group: unknown): boolean {
  if (typeof group !== 'string') return false;
  return [...upstreamCompat.protectedGroupDomains, product.domain].some((d) => group === d || group.endsWith(`.${d}`));
}

/** The approval a definition's annotations give (upstream's GetAPIApprovalState). */
export function approvalOf(annotations: unknown): Approval {
  const read = (key: string) => {
    const v = typeof annotations === 'object' && annotations !== null ? ownValue(annotations as Record<string, unknown>, key) : undefined;
    return typeof v === 'string' ? v : '';
  };
  const ours = vocabulary.apiApprovedAnnotation;
  const theirs = upstreamCompat.apiApprovedAnnotation;
  const annotation = read(ours) !== '' || read(theirs) === '' ? ours : theirs;
  const value = read(annotation);
  if (value === '') return { state: 'Missing', annotation, value, reason: `protected groups must have approval annotation ${JSON.stringify(annotation)}, see ${enhancement}` };
  if (value.startsWith('unapproved')) return { state: 'Bypassed', annotation, value, reason: `not approved: ${JSON.stringify(value)}` };
  if (isApprovalUrl(value)) return { state: 'Approved', annotation, value, reason: `approved in ${value}` };
  return {
    state: 'Invalid', annotation, value,
    reason: `protected groups must have approval annotation ${JSON.stringify(annotation)} with either a URL or a reason starting with "unapproved", see ${enhancement}`,
  };
}

/**
 * Upstream's validateAPIApproval: on create, a protected group needs an
 * approval or an "unapproved" reason; on update, only a change of the
 * approval's state is checked (a definition stored before keeps being
 * writable while its approval stays as it was).
 */
export function validateApproval(group: unknown, annotations: unknown, oldAnnotations?: unknown): FieldError[] {
  if (!isProtectedGroup(group)) return [];
  const now = approvalOf(annotations);
  if (oldAnnotations !== undefined && approvalOf(oldAnnotations).state === now.state) return [];
  const field = `metadata.annotations[${now.annotation}]`;
  switch (now.state) {
    case 'Missing': return [fieldErrors.required(field, now.reason)];
    case 'Invalid': return [fieldErrors.invalid(field, now.value, now.reason)];
    default: return [];
  }
}

/** The KubernetesAPIApprovalPolicyConformant condition (without times), or undefined outside protected groups. */
export function approvalCondition(group: unknown, annotations: unknown): { type: string; status: 'True' | 'False'; reason: string; message: string } | undefined {
  if (!isProtectedGroup(group)) return undefined;
  const approval = approvalOf(annotations);
  const reasons: Record<ApprovalState, string> = { Approved: 'ApprovedAnnotation', Bypassed: 'UnapprovedAnnotation', Missing: 'MissingAnnotation', Invalid: 'InvalidAnnotation' };
  return { type: approvalConditionType, status: approval.state === 'Approved' ? 'True' : 'False', reason: reasons[approval.state], message: approval.reason };
}

/**
 * Whether Go's url.ParseRequestURI accepts `raw` with a scheme and a host,
 * which is what upstream calls an approval URL: no control characters, a
 * scheme, `//` and an authority whose host has only the characters a host
 * may have (and valid escapes), an optional numeric port.
 */
export function isApprovalUrl(raw: string): boolean {
  if (/[\x00-\x1f\x7f]/.test(raw)) return false;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(raw);
  if (!scheme) return false;
  let rest = raw.slice(scheme[0].length);
  const query = rest.indexOf('?');
  if (query >= 0) rest = rest.slice(0, query);
  if (!rest.startsWith('//')) return false;
  rest = rest.slice(2);
  const slash = rest.indexOf('/');
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? '' : rest.slice(slash);
  const at = authority.lastIndexOf('@');
  if (at >= 0 && !/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(authority.slice(0, at))) return false;
  const host = authority.slice(at + 1);
  if (host === '' || !validHost(host) || !validEscapes(path)) return false;
  return true;
}

function validEscapes(s: string): boolean {
  return !/%(?![0-9A-Fa-f]{2})/.test(s);
}

function validHost(host: string): boolean {
  let name = host;
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) return false;
    const port = host.slice(end + 1);
    if (port !== '' && !/^:\d*$/.test(port)) return false;
    name = host.slice(1, end);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0) {
      if (!/^:\d*$/.test(host.slice(colon))) return false;
      name = host.slice(0, colon);
    }
  }
  // Non-ASCII is allowed; of ASCII, what Go's shouldEscape lets a host keep.
  return validEscapes(name) && /^(?:[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"%]|[^\x00-\x7f])*$/.test(name);
}
