// resourceVersion and resourceVersionMatch on reads: which version of the
// store a get or list is served from, per the spec's tables.

import { errors, fieldErrors } from '../machinery/errors.js';
import { decodeContinue } from './continue.js';
import { parseResourceVersion } from './objects.js';

export type ReadPlan =
  /** A consistent read of the latest state. */
  | { kind: 'latest' }
  /** Any version, possibly older than one seen before (the watch cache may serve it). */
  | { kind: 'any' }
  /** At least as new as `revision`. */
  | { kind: 'notOlderThan'; revision: number }
  /** Exactly `revision` (410 when compacted). */
  | { kind: 'exact'; revision: number }
  /** The snapshot and position of a continue token. */
  | { kind: 'continue'; revision: number; startKey: string };

/** Parses a resourceVersion query value: undefined when absent, else a revision; 400 when not a number. */
export function parseVersionParam(value: string | null | undefined): number | undefined {
  const rv = parseResourceVersion(value);
  if (Number.isNaN(rv)) throw errors.badRequest(`invalid resource version: ${JSON.stringify(value)}`);
  return rv;
}

export function planGet(resourceVersion: string | null | undefined): ReadPlan {
  const rv = parseVersionParam(resourceVersion);
  if (rv === undefined) return { kind: 'latest' };
  if (rv === 0) return { kind: 'any' };
  return { kind: 'notOlderThan', revision: rv };
}

export interface ListVersionParams {
  resourceVersion?: string | null;
  resourceVersionMatch?: string | null;
  limit?: number;
  continue?: string | null;
}

export function planList(p: ListVersionParams, prefix: string): ReadPlan {
  const rv = parseVersionParam(p.resourceVersion);
  const match = p.resourceVersionMatch ?? '';
  if (match !== '' && match !== 'Exact' && match !== 'NotOlderThan') {
    throw errors.invalidOptions('ListOptions', [fieldErrors.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan'])]);
  }
  if (p.continue) {
    if (match) throw errors.invalidOptions('ListOptions', [fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided')]);
    if (rv !== undefined && rv !== 0) throw errors.badRequest('specifying resource version is not allowed when using continue');
    const { revision, startKey } = decodeContinue(p.continue, prefix);
    return { kind: 'continue', revision, startKey };
  }
  if (match && rv === undefined) {
    throw errors.invalidOptions('ListOptions', [fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided')]);
  }
  if (match === 'Exact') {
    if (rv === 0) throw errors.invalidOptions('ListOptions', [fieldErrors.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')]);
    return { kind: 'exact', revision: rv! };
  }
  if (match === 'NotOlderThan') return rv === 0 ? { kind: 'any' } : { kind: 'notOlderThan', revision: rv! };
  if (rv === undefined) return { kind: 'latest' };
  if (rv === 0) return { kind: 'any' };
  return p.limit ? { kind: 'exact', revision: rv } : { kind: 'notOlderThan', revision: rv };
}
