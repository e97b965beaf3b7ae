// The plugin's configuration (a PodSecurityConfiguration in the admission
// configuration file): the policy of namespaces without labels (`defaults`,
// privileged:latest for every mode unless said) and who and what is exempt
// (`exemptions`: usernames, namespaces, runtime class names). Every mistake
// stops the start-up, listed together with upstream's field paths.

import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { ownValue } from '../../../machinery/ownkeys.js';
import { isDns1123Label, isDns1123Subdomain, type NameCheck } from '../../../machinery/validation.js';
import { productGroup } from '../../../machinery/vocabulary.js';
import { expectKind } from '../../config.js';
import { AdmissionConfigError } from '../../plugin-names.js';
import { latest, levelError, parseLevel, parseVersion, versionError, type Policy } from './levels.js';

export interface PodSecurityConfiguration {
  defaults: Policy;
  exemptions: {
    usernames: ReadonlySet<string>;
    namespaces: ReadonlySet<string>;
    runtimeClasses: ReadonlySet<string>;
  };
}

/** Our group and upstream's, at each version upstream has served the kind in. */
const acceptedKinds = [productGroup('pod-security.admission.config'), 'pod-security.admission.config.k8s.io']
  .flatMap((group) => ['v1', 'v1beta1', 'v1alpha1'].map((version) => ({ apiVersion: `${group}/${version}`, kind: 'PodSecurityConfiguration' })));

export const defaultConfiguration: PodSecurityConfiguration = {
  defaults: {
    enforce: { level: 'privileged', version: latest },
    audit: { level: 'privileged', version: latest },
    warn: { level: 'privileged', version: latest },
  },
  exemptions: { usernames: new Set(), namespaces: new Set(), runtimeClasses: new Set() },
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A namespace name as upstream's ValidateNamespaceName checks it. */
const namespaceName: NameCheck = isDns1123Label;

function exemptionList(section: Record<string, unknown>, field: 'usernames' | 'namespaces' | 'runtimeClasses', check: NameCheck | undefined, errors: FieldError[]): Set<string> {
  const values = ownValue(section, field) ?? [];
  const path = `exemptions.${field}`;
  const kept = new Set<string>();
  if (!Array.isArray(values)) {
    errors.push(fieldErrors.typeInvalid(path, values, 'must be a list of strings'));
    return kept;
  }
  values.forEach((value, i) => {
    const at = `${path}[${i}]`;
    if (typeof value !== 'string') {
      errors.push(fieldErrors.typeInvalid(at, value, 'must be a string'));
      return;
    }
    const problems = check ? check(value) : value === '' ? ['username must not be empty'] : [];
    if (problems.length) errors.push(fieldErrors.invalid(at, value, problems.join(', ')));
    else if (kept.has(value)) errors.push(fieldErrors.duplicate(at, value));
    else kept.add(value);
  });
  return kept;
}

/** The configuration, from the plugin's entry of the admission configuration file (none: the defaults). */
export function readConfiguration(doc: Record<string, unknown> | undefined): PodSecurityConfiguration {
  if (!doc) return defaultConfiguration;
  const what = 'the configuration of admission plugin PodSecurity';
  expectKind(doc, acceptedKinds, what);
  const errors: FieldError[] = [];
  const defaultsSection = ownValue(doc, 'defaults') ?? {};
  const exemptionsSection = ownValue(doc, 'exemptions') ?? {};
  if (!isObject(defaultsSection)) errors.push(fieldErrors.typeInvalid('defaults', defaultsSection, 'must be an object'));
  if (!isObject(exemptionsSection)) errors.push(fieldErrors.typeInvalid('exemptions', exemptionsSection, 'must be an object'));
  const defaults = structuredClone(defaultConfiguration.defaults);
  if (isObject(defaultsSection)) {
    // Upstream's order of validation: enforce, warn, audit.
    for (const mode of ['enforce', 'warn', 'audit'] as const) {
      const level = ownValue(defaultsSection, mode);
      if (level !== undefined && level !== '') {
        const parsed = typeof level === 'string' ? parseLevel(level) : undefined;
        if (parsed) defaults[mode].level = parsed;
        else errors.push(fieldErrors.invalid(`defaults.${mode}`, level, levelError));
      }
      const version = ownValue(defaultsSection, `${mode}-version`);
      if (version !== undefined && version !== '') {
        const parsed = typeof version === 'string' ? parseVersion(version) : undefined;
        if (parsed !== undefined) defaults[mode].version = parsed;
        else errors.push(fieldErrors.invalid(`defaults.${mode}-version`, version, versionError));
      }
    }
  }
  const exemptions = isObject(exemptionsSection)
    ? {
      namespaces: exemptionList(exemptionsSection, 'namespaces', namespaceName, errors),
      runtimeClasses: exemptionList(exemptionsSection, 'runtimeClasses', isDns1123Subdomain, errors),
      usernames: exemptionList(exemptionsSection, 'usernames', undefined, errors),
    }
    : defaultConfiguration.exemptions;
  if (errors.length) {
    const listed = errors.map((e) => e.describe());
    throw new AdmissionConfigError(`PodSecurity invalid: ${listed.length === 1 ? listed[0] : `[${listed.join(', ')}]`}`);
  }
  return { defaults, exemptions };
}
