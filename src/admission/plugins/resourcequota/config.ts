// The ResourceQuota plugin's configuration (upstream's
// ResourceQuotaConfiguration, product-named): `limitedResources`, the
// resources whose consumption needs a covering quota. An entry names a
// group and resource and either substrings of quota names (`matchContains`:
// a pod asking for `requests.cpu` needs a quota capping it) or scopes
// (`matchScopes`: a pod of priority class `high` needs a quota scoped to it).

import { AdmissionConfigError } from '../../plugin-names.js';
import { expectKind } from '../../config.js';
import { productGroup, vocabulary } from '../../../machinery/vocabulary.js';
import type { ScopeRequirement } from '../../../api/quota/evaluators.js';

export interface LimitedResource {
  apiGroup: string;
  resource: string;
  matchContains: string[];
  matchScopes: ScopeRequirement[];
}

const kinds = [
  { apiVersion: `${vocabulary.apiserverConfigGroup}/v1`, kind: 'ResourceQuotaConfiguration' },
  { apiVersion: `${productGroup('resourcequota.admission')}/v1beta1`, kind: 'Configuration' },
  { apiVersion: `${productGroup('resourcequota.admission')}/v1alpha1`, kind: 'Configuration' },
];

const strings = (v: unknown, at: string): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new AdmissionConfigError(`${at} must be a list of strings`);
  return v as string[];
};

/** The limited resources of a configuration (none without one); throws AdmissionConfigError naming what is wrong. */
export function limitedResourcesOf(config: Record<string, unknown> | undefined): LimitedResource[] {
  if (!config) return [];
  const what = 'the configuration of admission plugin ResourceQuota';
  const doc = expectKind(config, kinds, what);
  const list = doc.limitedResources ?? [];
  if (!Array.isArray(list)) throw new AdmissionConfigError(`${what}: limitedResources must be a list`);
  return list.map((entry: any, i) => {
    const at = `${what}: limitedResources[${i}]`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new AdmissionConfigError(`${at} must be an object`);
    if (typeof entry.resource !== 'string' || entry.resource === '') throw new AdmissionConfigError(`${at}.resource: Required value`);
    const scopes = entry.matchScopes ?? [];
    if (!Array.isArray(scopes)) throw new AdmissionConfigError(`${at}.matchScopes must be a list`);
    return {
      apiGroup: typeof entry.apiGroup === 'string' ? entry.apiGroup : '',
      resource: entry.resource,
      matchContains: strings(entry.matchContains, `${at}.matchContains`),
      matchScopes: scopes.map((s: any, j: number) => {
        if (typeof s !== 'object' || s === null || typeof s.scopeName !== 'string' || typeof s.operator !== 'string') {
          throw new AdmissionConfigError(`${at}.matchScopes[${j}] must have a scopeName and an operator`);
        }
        return { scopeName: s.scopeName, operator: s.operator, values: strings(s.values, `${at}.matchScopes[${j}].values`) };
      }),
    };
  });
}
