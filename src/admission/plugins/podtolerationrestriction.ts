// PodTolerationRestriction: a namespace gives its new pods default
// tolerations and bounds what any of its pods may tolerate. A created pod
// gets the namespace's default tolerations (annotation, else the cluster
// default of the configuration) merged into its own, a pod that is not
// BestEffort also tolerates memory pressure, and every toleration must be
// covered by the namespace's whitelist (annotation, else the configuration's).
// Creates and updates of pods, both phases, as upstream; the whitelist
// refusal is upstream's plain error (500 with its text).
//
// Configuration: kind Configuration of the podtolerationrestriction
// admission group, v1alpha1 (ours, productGroup, or upstream's), fields
// `default` and `whitelist`, each a list of tolerations.

import { errors, fieldErrors, type FieldError } from '../../machinery/errors.js';
import { ownValue } from '../../machinery/ownkeys.js';
import { productGroup } from '../../machinery/vocabulary.js';
import { parseQuantity } from '../../machinery/quantity.js';
import { isLabelValue, isQualifiedName } from '../../machinery/validation.js';
import type { KubeObject } from '../../api/kind.js';
import type { NamespaceGetter } from './namespacelifecycle.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { AdmissionConfigError } from '../plugin-names.js';
import { configSource, expectKind } from '../config.js';
import { mergeTolerations, plainError, podWritten, tolerationsWhitelisted, type Toleration } from './pods.js';

/** Namespace annotations, ours first, then upstream's. */
export const defaultTolerationsAnnotations = [`${productGroup('scheduler.alpha')}/defaultTolerations`, 'scheduler.alpha.kubernetes.io/defaultTolerations'];
export const tolerationsWhitelistAnnotations = [`${productGroup('scheduler.alpha')}/tolerationsWhitelist`, 'scheduler.alpha.kubernetes.io/tolerationsWhitelist'];

const memoryPressureTaint = `${productGroup('node')}/memory-pressure`;

/** Upstream's ValidateTolerations, for the tolerations of the configuration. */
function validateTolerations(list: readonly Toleration[], base: string): FieldError[] {
  const errs: FieldError[] = [];
  list.forEach((t, i) => {
    const at = `${base}[${i}]`;
    const key = typeof t.key === 'string' ? t.key : '';
    const operator = t.operator ?? '';
    if (key !== '') for (const m of isQualifiedName(key)) errs.push(fieldErrors.invalid(`${at}.key`, key, m));
    if (key === '' && operator !== 'Exists') {
      errs.push(fieldErrors.invalid(`${at}.operator`, operator, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null && t.effect !== 'NoExecute') {
      errs.push(fieldErrors.invalid(`${at}.effect`, t.effect ?? '', "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (operator === '' || operator === 'Equal') {
      for (const m of isLabelValue(String(t.value ?? ''))) errs.push(fieldErrors.invalid(`${at}.operator`, t.value, m));
    } else if (operator === 'Exists') {
      if ((t.value ?? '') !== '') errs.push(fieldErrors.invalid(`${at}.operator`, t.value, "value must be empty when `operator` is 'Exists'"));
    } else {
      errs.push(fieldErrors.notSupported(`${at}.operator`, operator, ['Equal', 'Exists']));
    }
    if ((t.effect ?? '') !== '' && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(t.effect)) {
      errs.push(fieldErrors.notSupported(`${at}.effect`, t.effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']));
    }
  });
  return errs;
}

export interface TolerationRestrictionConfig {
  default?: Toleration[];
  whitelist?: Toleration[];
}

/** The configuration, checked: each list a list of valid tolerations. */
export function tolerationRestrictionConfig(config: Record<string, unknown> | undefined): TolerationRestrictionConfig {
  if (!config) return {};
  const what = configSource(config, 'PodTolerationRestriction');
  expectKind(config, ['podtolerationrestriction.admission', 'podtolerationrestriction.admission.k8s.io'].map((g, i) => ({
    apiVersion: `${i === 0 ? productGroup(g) : g}/v1alpha1`, kind: 'Configuration',
  })), what);
  const out: TolerationRestrictionConfig = {};
  const problems: FieldError[] = [];
  for (const field of ['default', 'whitelist'] as const) {
    const list = ownValue(config, field);
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list) || !list.every((t) => t && typeof t === 'object' && !Array.isArray(t))) {
      throw new AdmissionConfigError(`${what}: ${field} must be a list of tolerations`);
    }
    problems.push(...validateTolerations(list as Toleration[], field));
    out[field] = list as Toleration[];
  }
  if (problems.length) throw new AdmissionConfigError(`${what}: ${problems.map((p) => p.describe()).join(', ')}`);
  return out;
}

/** Upstream's BestEffort class: no container (init ones included) requests or limits any CPU or memory. */
function bestEffort(pod: KubeObject): boolean {
  for (const list of ['initContainers', 'containers']) {
    const containers: unknown = pod.spec?.[list];
    if (!Array.isArray(containers)) continue;
    for (const c of containers) {
      for (const part of ['requests', 'limits']) {
        const amounts = c?.resources?.[part];
        if (!amounts || typeof amounts !== 'object') continue;
        for (const name of ['cpu', 'memory']) {
          const value = ownValue(amounts as Record<string, unknown>, name);
          if (value === undefined) continue;
          try {
            if (parseQuantity(String(value)).nanos > 0n) return false;
          } catch {
            return false; // validation refuses it; it is not nothing
          }
        }
      }
    }
  }
  return true;
}

export class PodTolerationRestriction implements AdmissionPlugin {
  readonly name = 'PodTolerationRestriction';

  constructor(private readonly getNamespace: NamespaceGetter, private readonly config: TolerationRestrictionConfig) {}

  async mutate(r: AdmissionRequest): Promise<void> {
    const pod = podWritten(r);
    if (!pod) return;
    const extra: Toleration[] = [];
    if (r.operation === 'CREATE') {
      extra.push(...(await this.namespaceTolerations(r.namespace ?? '', defaultTolerationsAnnotations) ?? this.config.default ?? []));
    }
    if (!bestEffort(pod)) extra.push({ key: memoryPressureTaint, operator: 'Exists', effect: 'NoSchedule' });
    if (extra.length) {
      pod.spec ??= {};
      pod.spec.tolerations = mergeTolerations(Array.isArray(pod.spec.tolerations) ? pod.spec.tolerations : [], extra);
    }
    await this.validate(r);
  }

  async validate(r: AdmissionRequest): Promise<void> {
    const pod = podWritten(r);
    const tolerations: unknown = pod?.spec?.tolerations;
    if (!Array.isArray(tolerations) || tolerations.length === 0) return;
    const fromNamespace = await this.namespaceTolerations(r.namespace ?? '', tolerationsWhitelistAnnotations);
    const whitelist = fromNamespace ?? this.config.whitelist ?? [];
    if (!tolerationsWhitelisted(tolerations, whitelist)) {
      throw plainError(`pod tolerations (possibly merged with namespace default tolerations) conflict with its ${fromNamespace ? 'namespace' : 'cluster'} whitelist`);
    }
  }

  /** The tolerations an annotation of the namespace lists; undefined when it has none (an empty value is an empty list). */
  private async namespaceTolerations(name: string, keys: readonly string[]): Promise<Toleration[] | undefined> {
    const ns = await this.getNamespace(name, false);
    if (!ns) throw errors.notFound({ group: '', resource: 'namespaces' }, name);
    const annotations = ns.metadata?.annotations;
    if (!annotations || typeof annotations !== 'object') return undefined;
    for (const key of keys) {
      const text = ownValue(annotations as Record<string, unknown>, key);
      if (typeof text !== 'string') continue;
      if (text === '') return [];
      let list: unknown;
      try {
        list = JSON.parse(text);
      } catch (e) {
        throw plainError(`namespace ${name} annotation ${key}: ${(e as Error).message}`);
      }
      if (list === null) return undefined;
      if (!Array.isArray(list) || !list.every((t) => t && typeof t === 'object' && !Array.isArray(t))) {
        throw plainError(`json: cannot unmarshal the ${key} annotation of namespace ${name} into a list of tolerations`);
      }
      return list as Toleration[];
    }
    return undefined;
  }
}
