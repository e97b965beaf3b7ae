// PodSecurity: pods are judged against the Pod Security Standards their
// namespace's labels name, as upstream's pod-security-admission judges them.
//
// - enforce: a pod that violates the level is refused, 403, with every
//   violation listed; audit: the violations go to the request's audit event
//   (the audit-violations annotation of the pod-security group); warn: they go back to the
//   client as a warning. A pod update is judged only when it changes what the
//   checks read that an update may change (images, ephemeral containers).
// - Workload templates (Deployments, Jobs, CronJobs, …) are audited and
//   warned about, never refused: their pods are refused when they are made.
// - Namespaces: labels that cannot be parsed are refused (422) when they are
//   set; making enforce stricter warns about the pods already there that the
//   new level would refuse.
// - Users, namespaces and runtime classes the configuration exempts are let
//   through, with the reason in the audit event.
//
// Namespaces and pods are read from informer-fed listers, the namespace of a
// request live when the lister does not hold it yet (created a moment ago).

import type { KubeObject } from '../../../api/kind.js';
import { ApiError, errors, type FieldError } from '../../../machinery/errors.js';
import { isDeepStrictEqual } from 'node:util';
import { resources } from '../../../client/resources.js';
import type { Lister } from '../../listers.js';
import { forbiddenRequest } from '../../errors.js';
import { addAuditAnnotation, addWarning, requestResource, type AdmissionPlugin, type AdmissionRequest } from '../../types.js';
import type { PodParts } from './checks.js';
import type { PodSecurityConfiguration } from './configuration.js';
import { Evaluator, violatesText, wouldViolateText, type Evaluation } from './evaluator.js';
import {
  annotationPrefix, compareLevels, fullyPrivileged, labelsSet, levelVersionText, policiesEquivalent, policyFromLabels,
  type LevelVersion, type Policy,
} from './levels.js';

type Obj = Record<string, any>;

/** What the plugin reads per request. */
export interface PodSecuritySources {
  namespaces: Lister;
  pods: Lister;
  /** One namespace read live, for a lister's miss. */
  getNamespace(name: string): Promise<KubeObject | undefined>;
}

/** How far the check of a namespace's pods goes (upstream's limits). */
export interface NamespaceCheckLimits {
  maxPods: number;
  budgetMs: number;
}

const defaultLimits: NamespaceCheckLimits = { maxPods: 3000, budgetMs: 1000 };

/** Pod sub-resources whose writes cannot change what the checks read. */
const ignoredPodSubresources = new Set(['exec', 'attach', 'binding', 'eviction', 'log', 'portforward', 'proxy', 'status']);

/** The pod template of each workload kind upstream checks, by `group/resource`. */
const templateOf: ReadonlyMap<string, (o: Obj) => unknown> = new Map<string, (o: Obj) => unknown>([
  ['/replicationcontrollers', (o) => o.spec?.template],
  ['/podtemplates', (o) => o.template],
  ['apps/replicasets', (o) => o.spec?.template],
  ['apps/deployments', (o) => o.spec?.template],
  ['apps/statefulsets', (o) => o.spec?.template],
  ['apps/daemonsets', (o) => o.spec?.template],
  ['batch/jobs', (o) => o.spec?.template],
  ['batch/cronjobs', (o) => o.spec?.jobTemplate?.spec?.template],
]);

function asObject(v: unknown): Obj | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Obj : undefined;
}

function podParts(metadata: unknown, spec: unknown): PodParts {
  return { metadata: asObject(metadata) ?? {}, spec: asObject(spec) ?? {} };
}

/** Field errors as upstream's aggregate prints them: one alone, several in brackets. */
function aggregate(list: readonly FieldError[]): string {
  const texts = list.map((e) => e.describe());
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
}

function containerImages(list: unknown): unknown[] {
  return Array.isArray(list) ? list.map((c) => asObject(c)?.image) : [];
}

/**
 * Whether an update changes what the checks read and an update may change:
 * the number of containers, an image, or an ephemeral container added or
 * changed (upstream's isSignificantPodUpdate).
 */
export function significantPodUpdate(pod: Obj, old: Obj): boolean {
  const spec = asObject(pod.spec) ?? {};
  const oldSpec = asObject(old.spec) ?? {};
  for (const field of ['containers', 'initContainers']) {
    const images = containerImages(spec[field]);
    const oldImages = containerImages(oldSpec[field]);
    if (images.length !== oldImages.length || images.some((image, i) => image !== oldImages[i])) return true;
  }
  const oldEphemeral = Array.isArray(oldSpec.ephemeralContainers) ? oldSpec.ephemeralContainers.map(asObject) : [];
  for (const raw of Array.isArray(spec.ephemeralContainers) ? spec.ephemeralContainers : []) {
    const container = asObject(raw);
    const before = oldEphemeral.find((c) => c?.name === container?.name);
    if (!before || before.image !== container?.image) return true;
  }
  return false;
}

export class PodSecurity implements AdmissionPlugin {
  readonly name = 'PodSecurity';
  private readonly evaluator = new Evaluator();

  constructor(private readonly config: PodSecurityConfiguration, private readonly sources: PodSecuritySources,
    private readonly limits: NamespaceCheckLimits = defaultLimits) {}

  validate(r: AdmissionRequest): void | Promise<void> {
    if (r.operation !== 'CREATE' && r.operation !== 'UPDATE') return;
    const { group, resource } = requestResource(r);
    if (group === '' && resource === 'namespaces') return this.validateNamespace(r);
    if (group === '' && resource === 'pods') return this.validatePod(r);
    const template = templateOf.get(`${group}/${resource}`);
    if (template) return this.validateWorkload(r, template);
  }

  /** A namespace's policy, read once per version of it (the lister hands a new object on each change). */
  private readonly policies = new WeakMap<KubeObject, { policy: Policy; errors: FieldError[] }>();

  private policyOf(namespace: KubeObject): { policy: Policy; errors: FieldError[] } {
    let found = this.policies.get(namespace);
    if (!found) this.policies.set(namespace, found = policyFromLabels(asObject(namespace.metadata?.labels), this.config.defaults));
    return found;
  }

  private exempt(r: AdmissionRequest): boolean {
    const namespace = r.namespace ?? '';
    let reason: string | undefined;
    if (namespace !== '' && this.config.exemptions.namespaces.has(namespace)) reason = 'namespace';
    else if (r.user?.username && this.config.exemptions.usernames.has(r.user.username)) reason = 'user';
    if (reason) addAuditAnnotation(r, `${annotationPrefix}exempt`, reason);
    return reason !== undefined;
  }

  /** The request's namespace from the lister, else read live; a failure is the reason. */
  private namespaceOf(r: AdmissionRequest): KubeObject | Promise<KubeObject> {
    const name = r.namespace ?? '';
    const cached = this.sources.namespaces.get(undefined, name);
    if (cached) return cached;
    return this.sources.getNamespace(name).then((live) => {
      if (!live) throw new Error(`namespaces "${name}" not found`);
      return live;
    });
  }

  private validatePod(r: AdmissionRequest): void | Promise<void> {
    if (r.subresource && ignoredPodSubresources.has(r.subresource)) return;
    if (this.exempt(r)) return;
    let namespace: KubeObject | Promise<KubeObject>;
    try {
      namespace = this.namespaceOf(r);
    } catch (e) {
      return this.namespaceLookupFailed(r, e);
    }
    if (namespace instanceof Promise) return namespace.then((ns) => this.judgePod(r, ns), (e: unknown) => this.namespaceLookupFailed(r, e));
    return this.judgePod(r, namespace);
  }

  private namespaceLookupFailed(r: AdmissionRequest, e: unknown): never {
    const message = `failed to lookup namespace "${r.namespace ?? ''}"`;
    const cause = e instanceof ApiError || e instanceof Error ? e.message : String(e);
    addAuditAnnotation(r, `${annotationPrefix}error`, `Internal error occurred: ${message}: ${cause}`);
    throw errors.internal(message);
  }

  private judgePod(r: AdmissionRequest, namespace: KubeObject): void {
    const { policy, errors: labelErrors } = this.policyOf(namespace);
    if (!labelErrors.length && fullyPrivileged(policy)) {
      addAuditAnnotation(r, `${annotationPrefix}enforce-policy`, 'privileged:latest');
      return;
    }
    const pod = r.object;
    if (!pod) return;
    if (r.operation === 'UPDATE' && r.oldObject && !significantPodUpdate(pod, r.oldObject)) return;
    this.evaluate(r, policy, labelErrors, podParts(pod.metadata, pod.spec), true);
  }

  private validateWorkload(r: AdmissionRequest, templateOfObject: (o: Obj) => unknown): void | Promise<void> {
    if (r.subresource) return;
    if (this.exempt(r)) return;
    let namespace: KubeObject | Promise<KubeObject>;
    const failed = (e: unknown) => {
      addAuditAnnotation(r, `${annotationPrefix}error`, `failed to lookup namespace "${r.namespace ?? ''}": ${e instanceof Error ? e.message : String(e)}`);
    };
    try {
      namespace = this.namespaceOf(r);
    } catch (e) {
      return failed(e);
    }
    const judge = (ns: KubeObject) => {
      const { policy, errors: labelErrors } = this.policyOf(ns);
      if (!labelErrors.length && policy.warn.level === 'privileged' && policy.audit.level === 'privileged') return;
      const template = asObject(r.object ? templateOfObject(r.object) : undefined);
      if (!template) return;
      this.evaluate(r, policy, labelErrors, podParts(template.metadata, template.spec), false);
    };
    if (namespace instanceof Promise) return namespace.then(judge, failed);
    return judge(namespace);
  }

  /** Judges the pod (or template) for each mode; only pods are enforced. */
  private evaluate(r: AdmissionRequest, policy: Policy, labelErrors: readonly FieldError[], pod: PodParts, enforce: boolean): void {
    if (this.runtimeClassExempt(pod.spec)) {
      addAuditAnnotation(r, `${annotationPrefix}exempt`, 'runtimeClass');
      return;
    }
    if (labelErrors.length) addAuditAnnotation(r, `${annotationPrefix}error`, `Failed to parse policy: ${aggregate(labelErrors)}`);
    const results = new Map<string, Evaluation>();
    const judged = (lv: LevelVersion) => {
      const key = levelVersionText(lv);
      let result = results.get(key);
      if (!result) results.set(key, result = this.evaluator.evaluate(lv, pod));
      return result;
    };
    let refusal: ApiError | undefined;
    if (enforce) {
      addAuditAnnotation(r, `${annotationPrefix}enforce-policy`, levelVersionText(policy.enforce));
      const result = judged(policy.enforce);
      if (!result.allowed) refusal = forbiddenRequest(r, violatesText(policy.enforce, result));
    }
    const audited = judged(policy.audit);
    if (!audited.allowed) addAuditAnnotation(r, `${annotationPrefix}audit-violations`, wouldViolateText(policy.audit, audited));
    if (refusal) throw refusal;
    // No warning on a request that is refused anyway.
    const warned = judged(policy.warn);
    if (!warned.allowed) addWarning(r, wouldViolateText(policy.warn, warned));
  }

  private runtimeClassExempt(spec: Obj): boolean {
    const name = spec.runtimeClassName;
    return typeof name === 'string' && name !== '' && this.config.exemptions.runtimeClasses.has(name);
  }

  private validateNamespace(r: AdmissionRequest): void {
    if (r.subresource) return;
    const namespace = r.object;
    if (!namespace) return;
    const name = r.name;
    const { policy, errors: labelErrors } = this.policyOf(namespace);
    const invalid = () => errors.invalid('', 'Namespace', name, labelErrors);
    if (r.operation === 'CREATE') {
      if (labelErrors.length) throw invalid();
      if (this.config.exemptions.namespaces.has(name)) this.warnExemptNamespace(r, name, policy, namespace);
      return;
    }
    const old = r.oldObject;
    if (!old) return;
    const { policy: oldPolicy, errors: oldErrors } = this.policyOf(old);
    // Labels that were already unparseable may stay so; new mistakes are refused.
    if (labelErrors.length && (!oldErrors.length || !isDeepStrictEqual(labelErrors.map((e) => e.describe()), oldErrors.map((e) => e.describe())))) throw invalid();
    const next = policy.enforce;
    const before = oldPolicy.enforce;
    if (next.level === before.level && next.version === before.version) return;
    if (next.level === 'privileged') return;
    if (next.version === before.version && compareLevels(next.level, before.level) < 1) return;
    if (this.config.exemptions.namespaces.has(name)) {
      this.warnExemptNamespace(r, name, policy, namespace);
      return;
    }
    for (const warning of this.checkPodsInNamespace(name, next)) addWarning(r, warning);
  }

  /** Upstream's warning that the policy labels of an exempt namespace have no effect. */
  private warnExemptNamespace(r: AdmissionRequest, name: string, policy: Policy, namespace: KubeObject): void {
    if (fullyPrivileged(policy) || policiesEquivalent(policy, this.config.defaults)) return;
    const labels = asObject(namespace.metadata?.labels);
    const parts = (['enforce', 'audit', 'warn'] as const)
      .filter((mode) => policy[mode].level !== 'privileged' && labelsSet(labels, mode))
      .map((mode) => `${mode}=${levelVersionText(policy[mode])}`);
    addWarning(r, `namespace "${name}" is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`);
  }

  /**
   * The warnings for a stricter enforce level on a namespace: one line per
   * distinct set of reasons, naming the first pod (by name) that has it and
   * how many others do. Pods of one controller are checked once before their
   * siblings, and no more than the limits allow.
   */
  checkPodsInNamespace(namespace: string, enforce: LevelVersion): string[] {
    const deadline = performance.now() + this.limits.budgetMs;
    const pods = this.prioritized(this.sources.pods.inNamespace(namespace));
    const total = pods.length;
    const toCheck = pods.slice(0, this.limits.maxPods);
    const byReasons = new Map<string, { first: string; count: number }>();
    let checked = toCheck.length;
    for (const [i, pod] of toCheck.entries()) {
      const result = this.evaluator.evaluate(enforce, podParts(pod.metadata, pod.spec));
      if (!result.allowed) {
        const reasons = result.reasons();
        const name = String(pod.metadata?.name ?? '');
        const seen = byReasons.get(reasons);
        if (!seen) byReasons.set(reasons, { first: name, count: 1 });
        else {
          seen.count++;
          if (name < seen.first) seen.first = name;
        }
      }
      if (performance.now() > deadline) {
        checked = i + 1;
        break;
      }
    }
    const warnings: string[] = [];
    if (checked < total) warnings.push(`new PodSecurity enforce level only checked against the first ${checked} of ${total} existing pods`);
    if (byReasons.size) warnings.push(`existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${levelVersionText(enforce)}"`);
    const lines = [...byReasons].map(([reasons, { first, count }]) => {
      if (count === 1) return `${first}: ${reasons}`;
      if (count === 2) return `${first} (and 1 other pod): ${reasons}`;
      return `${first} (and ${count - 1} other pods): ${reasons}`;
    });
    lines.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return [...warnings, ...lines];
  }

  /** Pods not of an exempt runtime class: one per controller first, then the rest of each controller's. */
  private prioritized(pods: readonly KubeObject[]): KubeObject[] {
    const first: KubeObject[] = [];
    const siblings: KubeObject[] = [];
    const controllers = new Set<string>();
    for (const pod of pods) {
      if (this.runtimeClassExempt(asObject(pod.spec) ?? {})) continue;
      const owners = Array.isArray(pod.metadata?.ownerReferences) ? pod.metadata.ownerReferences as Obj[] : [];
      const controller = owners.find((o) => o?.controller === true);
      if (!controller) first.push(pod);
      else if (controllers.has(String(controller.uid))) siblings.push(pod);
      else {
        controllers.add(String(controller.uid));
        first.push(pod);
      }
    }
    return [...first, ...siblings];
  }
}

/** Made from the admission context: the listers it reads asked for now, filled when the server starts them. */
export function podSecurityPlugin(config: PodSecurityConfiguration, listers: { lister(handle: typeof resources.namespaces | typeof resources.pods): Lister },
  getObject: ((group: string, version: string, resource: string, namespace: string | undefined, name: string) => Promise<KubeObject | undefined>) | undefined): PodSecurity {
  return new PodSecurity(config, {
    namespaces: listers.lister(resources.namespaces),
    pods: listers.lister(resources.pods),
    getNamespace: async (name) => (getObject ? getObject('', 'v1', 'namespaces', undefined, name) : undefined),
  });
}
