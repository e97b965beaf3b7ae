// The PodSecurity plugin request by request: the policy a namespace's labels
// give (ours and upstream's names, upstream's fallbacks for values it cannot
// parse), its configuration file entry, what each mode does to pods and
// workload templates, updates, exemptions, and namespaces (their labels
// validated, the existing pods checked when enforce gets stricter).

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PodSecurity, significantPodUpdate, type PodSecuritySources } from '../../../src/admission/plugins/podsecurity/plugin.js';
import { defaultConfiguration, readConfiguration } from '../../../src/admission/plugins/podsecurity/configuration.js';
import { policyFromLabels } from '../../../src/admission/plugins/podsecurity/levels.js';
import type { Lister } from '../../../src/admission/listers.js';
import { AdmissionConfigError } from '../../../src/admission/plugin-names.js';
import { namespaces, pods, podTemplates } from '../../../src/api/core/v1/index.js';
import { deployments } from '../../../src/api/apps/v1/deployment.js';
import { cronJobs } from '../../../src/api/batch/v1/cronjob.js';
import type { KubeObject } from '../../../src/api/kind.js';
import { admissionRequest, rejection } from '../../support/admission.js';
import { minimalPod } from '../../support/podsecurity-fixtures.js';

function lister(objects: KubeObject[]): Lister {
  return {
    list: () => objects,
    inNamespace: (ns) => objects.filter((o) => o.metadata?.namespace === ns),
    get: (ns, name) => objects.find((o) => o.metadata?.name === name && (o.metadata?.namespace ?? undefined) === ns),
    byIndex: () => [],
    onChange: () => {},
    hasSynced: () => true,
  };
}

const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const podIn = (namespace: string, name: string, spec: Record<string, any>, extra: Record<string, any> = {}): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, ...extra }, spec });
const privilegedSpec = { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] };

function plugin(namespaceList: KubeObject[], podList: KubeObject[] = [], config = defaultConfiguration, live: KubeObject[] = []) {
  const sources: PodSecuritySources = {
    namespaces: lister(namespaceList),
    pods: lister(podList),
    getNamespace: async (name) => live.find((n) => n.metadata?.name === name),
  };
  return new PodSecurity(config, sources);
}

const createPod = (namespace: string, name: string, spec: Record<string, any>, username = 'alice') => {
  const r = admissionRequest('CREATE', pods, name, { namespace, object: podIn(namespace, name, spec) });
  r.user = { username, groups: [] };
  return r;
};

describe('namespace labels', () => {
  const defaults = defaultConfiguration.defaults;

  test('ours and upstream\'s names both count; ours wins when a namespace has both', () => {
    assert.deepEqual(policyFromLabels({ 'pod-security.plat.io/enforce': 'baseline', 'pod-security.plat.io/enforce-version': 'v1.25' }, defaults).policy.enforce, { level: 'baseline', version: 25 });
    assert.deepEqual(policyFromLabels({ 'pod-security.kubernetes.io/audit': 'restricted' }, defaults).policy.audit, { level: 'restricted', version: 'latest' });
    assert.deepEqual(policyFromLabels({ 'pod-security.kubernetes.io/warn': 'baseline', 'pod-security.plat.io/warn': 'restricted' }, defaults).policy.warn.level, 'restricted');
  });

  test('values that cannot be parsed: enforce falls back to restricted:latest, audit and warn to privileged, with upstream\'s errors', () => {
    const { policy, errors } = policyFromLabels({
      'pod-security.plat.io/enforce': 'strict', 'pod-security.plat.io/enforce-version': 'v2.0',
      'pod-security.plat.io/audit': 'nope', 'pod-security.kubernetes.io/warn-version': '1.25',
    }, defaults);
    assert.deepEqual(policy.enforce, { level: 'restricted', version: 'latest' });
    assert.equal(policy.audit.level, 'privileged');
    assert.equal(policy.warn.level, 'privileged');
    assert.deepEqual(errors.map((e) => e.describe()), [
      'metadata.labels[pod-security.plat.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.plat.io/enforce-version]: Invalid value: "v2.0": must be "latest" or "v1.x"',
      'metadata.labels[pod-security.plat.io/audit]: Invalid value: "nope": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.25": must be "latest" or "v1.x"',
    ]);
  });

  test('warn follows a stricter enforce level unless warn is set; an inherited key never counts', () => {
    assert.deepEqual(policyFromLabels({ 'pod-security.plat.io/enforce': 'baseline', 'pod-security.plat.io/enforce-version': 'v1.20' }, defaults).policy.warn, { level: 'baseline', version: 20 });
    assert.deepEqual(policyFromLabels({ 'pod-security.plat.io/enforce': 'baseline', 'pod-security.plat.io/warn': 'privileged' }, defaults).policy.warn.level, 'privileged');
    assert.deepEqual(policyFromLabels({ 'pod-security.plat.io/enforce': 'baseline', 'pod-security.plat.io/warn-version': 'v1.3' }, defaults).policy.warn, { level: 'baseline', version: 3 });
    const labels = Object.create({ 'pod-security.plat.io/enforce': 'restricted' });
    assert.equal(policyFromLabels(labels, defaults).policy.enforce.level, 'privileged');
  });
});

describe('configuration', () => {
  const apiVersion = 'pod-security.admission.config.plat.io/v1';

  test('no entry: privileged:latest for every mode, nothing exempt; upstream\'s apiVersion is accepted', () => {
    assert.equal(readConfiguration(undefined), defaultConfiguration);
    const config = readConfiguration({ apiVersion: 'pod-security.admission.config.k8s.io/v1beta1', kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'baseline', 'warn-version': 'v1.30' }, exemptions: { usernames: ['system:serviceaccount:kube-system:x'], namespaces: ['kube-system'], runtimeClasses: ['kata'] } });
    assert.deepEqual(config.defaults.enforce, { level: 'baseline', version: 'latest' });
    assert.deepEqual(config.defaults.warn, { level: 'privileged', version: 30 });
    assert.ok(config.exemptions.namespaces.has('kube-system'));
    assert.ok(config.exemptions.runtimeClasses.has('kata'));
  });

  test('every mistake is listed with upstream\'s field paths', () => {
    assert.throws(() => readConfiguration({ apiVersion, kind: 'PodSecurityConfiguration',
      defaults: { enforce: 'strict', 'audit-version': 'v1' }, exemptions: { namespaces: ['Bad_NS', 'ok', 'ok'], usernames: [''] } }), (e: Error) => {
      assert.ok(e instanceof AdmissionConfigError);
      assert.equal(e.message, 'PodSecurity invalid: [defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted, '
        + 'defaults.audit-version: Invalid value: "v1": must be "latest" or "v1.x", '
        + 'exemptions.namespaces[0]: Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\'), '
        + 'exemptions.namespaces[2]: Duplicate value: "ok", exemptions.usernames[0]: Invalid value: "": username must not be empty]');
      return true;
    });
    assert.throws(() => readConfiguration({ apiVersion: 'v1', kind: 'PodSecurityConfiguration' }), /must be a PodSecurityConfiguration/);
  });
});

describe('pods', () => {
  const restricted = ns('locked', { 'pod-security.plat.io/enforce': 'restricted' });

  test('enforce refuses with 403 and every violation; the audit event names the policy', async () => {
    const r = createPod('locked', 'p', privilegedSpec);
    const status = (await rejection(() => plugin([restricted]).validate(r))).toStatus();
    assert.equal(status.code, 403);
    assert.equal(status.reason, 'Forbidden');
    assert.match(status.message ?? '', /^pods "p" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext.privileged=true\), allowPrivilegeEscalation != false/);
    assert.deepEqual(status.details, { name: 'p', kind: 'pods' });
    assert.equal(r.auditAnnotations?.get('pod-security.plat.io/enforce-policy')?.value, 'restricted:latest');
    assert.equal(r.warnings, undefined, 'no warning on a refused pod');
  });

  test('audit annotates and warn warns, without refusing; a fully privileged namespace only names its policy', async () => {
    const watched = ns('watched', { 'pod-security.kubernetes.io/audit': 'baseline', 'pod-security.kubernetes.io/warn': 'restricted', 'pod-security.kubernetes.io/warn-version': 'v1.24' });
    const r = createPod('watched', 'p', privilegedSpec);
    await plugin([watched]).validate(r);
    assert.equal(r.auditAnnotations?.get('pod-security.plat.io/audit-violations')?.value,
      'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
    assert.equal(r.auditAnnotations?.get('pod-security.plat.io/enforce-policy')?.value, 'privileged:latest');
    assert.equal(r.warnings?.length, 1);
    assert.match(r.warnings![0]!, /^would violate PodSecurity "restricted:v1.24": privileged \(container "c" must not set securityContext.privileged=true\), allowPrivilegeEscalation != false/);
    const open = createPod('default', 'p', privilegedSpec);
    await plugin([ns('default')]).validate(open);
    assert.equal(open.auditAnnotations?.get('pod-security.plat.io/enforce-policy')?.value, 'privileged:latest');
    assert.equal(open.warnings, undefined);
  });

  test('labels that cannot be parsed enforce restricted:latest and say why in the audit event', async () => {
    const r = createPod('typo', 'p', privilegedSpec);
    await rejection(() => plugin([ns('typo', { 'pod-security.plat.io/enforce': 'restricteed' })]).validate(r));
    assert.equal(r.auditAnnotations?.get('pod-security.plat.io/error')?.value,
      'Failed to parse policy: metadata.labels[pod-security.plat.io/enforce]: Invalid value: "restricteed": must be one of privileged, baseline, restricted');
  });

  test('a namespace the lister does not hold yet is read live; one nowhere is an internal error', async () => {
    await rejection(() => plugin([], [], defaultConfiguration, [restricted]).validate(createPod('locked', 'p', privilegedSpec)));
    const status = (await rejection(() => plugin([]).validate(createPod('gone', 'p', privilegedSpec)))).toStatus();
    assert.equal(status.code, 500);
    assert.equal(status.message, 'Internal error occurred: failed to lookup namespace "gone"');
  });

  test('updates are judged only when an image, the number of containers or the ephemeral containers change', async () => {
    const old = podIn('locked', 'p', privilegedSpec);
    const relabelled = structuredClone(old);
    relabelled.metadata!.labels = { a: 'b' };
    assert.equal(significantPodUpdate(relabelled, old), false);
    const reimaged = structuredClone(old);
    reimaged.spec.containers[0].image = 'y';
    assert.equal(significantPodUpdate(reimaged, old), true);
    const debugged = structuredClone(old);
    debugged.spec.ephemeralContainers = [{ name: 'debug', image: 'busybox' }];
    assert.equal(significantPodUpdate(debugged, old), true);
    const p = plugin([restricted]);
    await p.validate(admissionRequest('UPDATE', pods, 'p', { namespace: 'locked', object: relabelled, oldObject: old }));
    await rejection(() => p.validate(admissionRequest('UPDATE', pods, 'p', { namespace: 'locked', subresource: 'ephemeralcontainers', object: debugged, oldObject: old })));
    // Status, binding and the like never change what the checks read.
    await p.validate(admissionRequest('UPDATE', pods, 'p', { namespace: 'locked', subresource: 'status', object: reimaged, oldObject: old }));
  });

  test('exempt users, namespaces and runtime classes pass, with the reason in the audit event', async () => {
    const config = readConfiguration({ apiVersion: 'pod-security.admission.config.plat.io/v1', kind: 'PodSecurityConfiguration',
      exemptions: { usernames: ['ci-bot'], namespaces: ['locked-exempt'], runtimeClasses: ['kata'] } });
    const p = plugin([restricted, ns('locked-exempt', { 'pod-security.plat.io/enforce': 'restricted' })], [], config);
    const byUser = createPod('locked', 'p', privilegedSpec, 'ci-bot');
    await p.validate(byUser);
    assert.equal(byUser.auditAnnotations?.get('pod-security.plat.io/exempt')?.value, 'user');
    const inNamespace = createPod('locked-exempt', 'p', privilegedSpec);
    await p.validate(inNamespace);
    assert.equal(inNamespace.auditAnnotations?.get('pod-security.plat.io/exempt')?.value, 'namespace');
    const kata = createPod('locked', 'p', { ...privilegedSpec, runtimeClassName: 'kata' });
    await p.validate(kata);
    assert.equal(kata.auditAnnotations?.get('pod-security.plat.io/exempt')?.value, 'runtimeClass');
    await rejection(() => p.validate(createPod('locked', 'p', { ...privilegedSpec, runtimeClassName: 'runc' })));
  });

  test('the configuration\'s defaults apply to namespaces without labels', async () => {
    const config = readConfiguration({ apiVersion: 'pod-security.admission.config.plat.io/v1', kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline' } });
    const status = (await rejection(() => plugin([ns('plain')], [], config).validate(createPod('plain', 'p', privilegedSpec)))).toStatus();
    assert.equal(status.message, 'pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
  });
});

describe('workload templates', () => {
  const strict = ns('strict', { 'pod-security.plat.io/enforce': 'restricted', 'pod-security.plat.io/audit': 'baseline' });
  const template = { metadata: { labels: { app: 'a' } }, spec: privilegedSpec };

  test('a Deployment, a CronJob and a PodTemplate are warned about and audited, never refused', async () => {
    const objects = [
      [deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'strict' }, spec: { template } }],
      [cronJobs, { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'd', namespace: 'strict' }, spec: { jobTemplate: { spec: { template } } } }],
      [podTemplates, { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'd', namespace: 'strict' }, template }],
    ] as const;
    for (const [kind, object] of objects) {
      const r = admissionRequest('CREATE', kind, 'd', { namespace: 'strict', object: structuredClone(object) as KubeObject });
      await plugin([strict]).validate(r);
      assert.match(r.warnings?.[0] ?? '', /^would violate PodSecurity "restricted:latest": privileged/, kind.kind);
      assert.match(r.auditAnnotations?.get('pod-security.plat.io/audit-violations')?.value ?? '', /^would violate PodSecurity "baseline:latest": privileged/);
      assert.equal(r.auditAnnotations?.has('pod-security.plat.io/enforce-policy'), false);
    }
  });

  test('their sub-resources (scale, status) are not judged', async () => {
    const object = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'strict' }, spec: { template } };
    const r = admissionRequest('UPDATE', deployments, 'd', { namespace: 'strict', subresource: 'status', object });
    await plugin([strict]).validate(r);
    assert.equal(r.warnings, undefined);
  });
});

describe('namespaces', () => {
  const update = (before: Record<string, string>, after: Record<string, string>, name = 'apps') =>
    admissionRequest('UPDATE', namespaces, name, { object: ns(name, after), oldObject: ns(name, before) });

  test('labels that cannot be parsed are refused when set (422), kept when they were already there', async () => {
    const created = admissionRequest('CREATE', namespaces, 'apps', { object: ns('apps', { 'pod-security.plat.io/enforce': 'bogus' }) });
    const status = (await rejection(() => plugin([]).validate(created))).toStatus();
    assert.equal(status.code, 422);
    assert.equal(status.reason, 'Invalid');
    assert.equal(status.message, 'Namespace "apps" is invalid: metadata.labels[pod-security.plat.io/enforce]: Invalid value: "bogus": must be one of privileged, baseline, restricted');
    await rejection(() => plugin([]).validate(update({}, { 'pod-security.kubernetes.io/warn-version': 'latest-ish' })));
    await plugin([]).validate(update({ 'pod-security.plat.io/enforce': 'bogus' }, { 'pod-security.plat.io/enforce': 'bogus', other: 'x' }));
  });

  test('a stricter enforce level warns about the pods it would refuse, grouped by reasons, first pod by name', async () => {
    const owner = (uid: string) => ({ ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid, controller: true }] });
    const good = minimalPod('restricted', 32);
    const existing = [
      podIn('apps', 'web-2', privilegedSpec, owner('u1')),
      podIn('apps', 'web-1', privilegedSpec, owner('u1')),
      podIn('apps', 'db', privilegedSpec),
      podIn('apps', 'root', { containers: [{ name: 'c', image: 'x' }] }),
      podIn('apps', 'fine', good.spec),
      podIn('other', 'elsewhere', privilegedSpec),
    ];
    const r = update({}, { 'pod-security.plat.io/enforce': 'restricted' });
    await plugin([], existing).validate(r);
    assert.deepEqual(r.warnings, [
      'existing pods in namespace "apps" violate the new PodSecurity enforce level "restricted:latest"',
      'db (and 2 other pods): privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
      'root: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile',
    ]);
  });

  test('no check when enforce does not get stricter, when it becomes privileged, or for an exempt namespace (which is told its labels do nothing)', async () => {
    const existing = [podIn('apps', 'p', privilegedSpec)];
    for (const [before, after] of [
      [{ 'pod-security.plat.io/enforce': 'restricted' }, { 'pod-security.plat.io/enforce': 'baseline' }],
      [{ 'pod-security.plat.io/enforce': 'baseline' }, { 'pod-security.plat.io/enforce': 'privileged' }],
      [{ 'pod-security.plat.io/enforce': 'baseline' }, { 'pod-security.plat.io/enforce': 'baseline', 'pod-security.plat.io/warn': 'restricted' }],
    ] as const) {
      const r = update(before, after);
      await plugin([], existing).validate(r);
      assert.equal(r.warnings, undefined, JSON.stringify(after));
    }
    // Same level, another version: checked.
    const versioned = update({ 'pod-security.plat.io/enforce': 'baseline', 'pod-security.plat.io/enforce-version': 'v1.0' }, { 'pod-security.plat.io/enforce': 'baseline' });
    await plugin([], existing).validate(versioned);
    assert.equal(versioned.warnings?.[1], 'p: privileged');
    const config = readConfiguration({ apiVersion: 'pod-security.admission.config.plat.io/v1', kind: 'PodSecurityConfiguration', exemptions: { namespaces: ['apps'] } });
    const exempt = update({}, { 'pod-security.plat.io/enforce': 'restricted', 'pod-security.plat.io/audit': 'baseline' });
    await plugin([], existing, config).validate(exempt);
    assert.deepEqual(exempt.warnings, ['namespace "apps" is exempt from Pod Security, and the policy (enforce=restricted:latest, audit=baseline:latest) will be ignored'], 'warn, set by enforce and not by a label, is not named');
  });

  test('only the first pods are checked past the limit, and the warning says so', async () => {
    const existing = Array.from({ length: 5 }, (_, i) => podIn('apps', `p${i}`, privilegedSpec));
    const p = new PodSecurity(defaultConfiguration, { namespaces: lister([]), pods: lister(existing), getNamespace: async () => undefined }, { maxPods: 3, budgetMs: 60_000 });
    assert.deepEqual(p.checkPodsInNamespace('apps', { level: 'baseline', version: 'latest' }), [
      'new PodSecurity enforce level only checked against the first 3 of 5 existing pods',
      'existing pods in namespace "apps" violate the new PodSecurity enforce level "baseline:latest"',
      'p0 (and 2 other pods): privileged',
    ]);
  });
});
