// PodSecurity over HTTPS, on by default: a namespace labelled enforce refuses
// a privileged pod in upstream's words, warn answers with a Warning header,
// audit writes the violations into the audit event, workload templates are
// warned about but stored, a stricter enforce label on a namespace with pods
// warns about them, and the configuration file's exemptions and a bad
// configuration file at start.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, tempDir, tokenFile, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { AdmissionConfigError } from '../../src/admission/index.js';
import { minimalPod } from '../support/podsecurity-fixtures.js';

let s: TestServer;
let logPath: string;
let dir: string;

const enforce = 'pod-security.plat.io/enforce';
const privilegedPod = (name: string, extra: Record<string, any> = {}) => ({
  metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx', securityContext: { privileged: true } }], ...extra },
});
const restrictedMessage = (name: string) => `pods "${name}" is forbidden: violates PodSecurity "restricted:latest": `
  + 'privileged (container "c" must not set securityContext.privileged=true), '
  + 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
  + 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
  + 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
  + 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

/** The texts of a response's Warning header. */
function warnings(r: { headers: Record<string, unknown> }): string[] {
  return [...String(r.headers.warning ?? '').matchAll(/299 - ("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string);
}

async function namespace(name: string, labels: Record<string, string>): Promise<void> {
  const r = await s.client.post('/api/v1/namespaces', { metadata: { name, labels } });
  assert.equal(r.status, 201, r.text);
}

before(async () => {
  dir = tempDir();
  writeFileSync(join(dir, 'podsecurity.yaml'), [
    'apiVersion: pod-security.admission.config.plat.io/v1',
    'kind: PodSecurityConfiguration',
    'exemptions:',
    '  usernames: [ci-bot]',
    '  namespaces: [exempt-ns]',
    '  runtimeClasses: [kata]',
  ].join('\n'));
  writeFileSync(join(dir, 'admission.yaml'), [
    `apiVersion: ${vocabulary.apiserverConfigGroup}/v1`,
    'kind: AdmissionConfiguration',
    'plugins:',
    '- name: PodSecurity',
    '  path: podsecurity.yaml',
  ].join('\n'));
  writeFileSync(join(dir, 'audit-policy.yaml'), `apiVersion: ${vocabulary.auditGroup}/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: "", resources: [pods]}]\n  omitStages: [RequestReceived]\n- level: None\n`);
  logPath = join(dir, 'audit.log');
  s = await startTestServer({
    admissionControlConfigFile: join(dir, 'admission.yaml'), auditPolicyFile: join(dir, 'audit-policy.yaml'), auditLogPath: logPath,
    tokenAuthFile: tokenFile('t-ci,ci-bot,uid-ci,system:masters\n'),
  });
});
after(async () => { await s.close(); });

test('enforce=restricted refuses a privileged pod with upstream\'s message and admits a compliant one', async () => {
  await namespace('locked', { [enforce]: 'restricted' });
  const refused = await s.client.post('/api/v1/namespaces/locked/pods', privilegedPod('p'));
  assertStatus(refused, 403, 'Forbidden');
  assert.equal(refused.json.message, restrictedMessage('p'));
  assert.deepEqual(refused.json.details, { name: 'p', kind: 'pods' });
  const compliant = minimalPod('restricted', 32);
  const admitted = await s.client.post('/api/v1/namespaces/locked/pods', { metadata: { name: 'ok' }, spec: compliant.spec });
  assert.equal(admitted.status, 201, admitted.text);
  assert.deepEqual(warnings(admitted), []);
  // An update that leaves the images alone is not judged again; one that changes an image is.
  const relabelled = await s.client.send('PATCH', '/api/v1/namespaces/locked/pods/ok', { body: { metadata: { labels: { a: 'b' } } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
  assert.equal(relabelled.status, 200, relabelled.text);
  // A privileged ephemeral container added through its sub-resource is refused too.
  const debugged = relabelled.json;
  debugged.spec.ephemeralContainers = [{ name: 'debug', image: 'busybox', securityContext: { privileged: true } }];
  const ephemeral = await s.client.put('/api/v1/namespaces/locked/pods/ok/ephemeralcontainers', debugged);
  assertStatus(ephemeral, 403, 'Forbidden');
  assert.match(ephemeral.json.message, /^pods "ok" is forbidden: violates PodSecurity "restricted:latest": privileged \(container "debug" must not set securityContext.privileged=true\), allowPrivilegeEscalation != false \(container "debug"/);
});

test('upstream\'s label names work too, and warn answers with upstream\'s warning', async () => {
  await namespace('warned', { 'pod-security.kubernetes.io/warn': 'baseline' });
  const r = await s.client.post('/api/v1/namespaces/warned/pods', privilegedPod('p'));
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(warnings(r), ['would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)']);
});

test('audit writes the violations and the enforced policy into the audit event', async () => {
  await namespace('audited', { 'pod-security.plat.io/audit': 'baseline' });
  const r = await s.client.post('/api/v1/namespaces/audited/pods', privilegedPod('p'));
  assert.equal(r.status, 201, r.text);
  const event = await eventually('the audit event of the pod', async () => {
    if (!existsSync(logPath)) return undefined;
    return readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
      .find((e) => e.auditID === r.headers['audit-id'] && e.stage === 'ResponseComplete');
  });
  assert.equal(event.annotations['pod-security.plat.io/audit-violations'], 'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)');
  assert.equal(event.annotations['pod-security.plat.io/enforce-policy'], 'privileged:latest');
});

test('workload templates are warned about and stored, never refused', async () => {
  await namespace('strict-apps', { [enforce]: 'restricted' });
  const template = { metadata: { labels: { app: 'a' } }, spec: privilegedPod('x').spec };
  const r = await s.client.post('/apis/apps/v1/namespaces/strict-apps/deployments', { metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'a' } }, template } });
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(warnings(r), [restrictedMessage('x').replace('pods "x" is forbidden: violates', 'would violate')]);
  const job = await s.client.post('/apis/batch/v1/namespaces/strict-apps/cronjobs', {
    metadata: { name: 'c' }, spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { ...template.spec, restartPolicy: 'Never' } } } } },
  });
  assert.equal(job.status, 201, job.text);
  assert.match(warnings(job)[0] ?? '', /^would violate PodSecurity "restricted:latest": privileged/);
});

test('a stricter enforce label on a namespace with violating pods warns per pod; a label value that cannot be parsed is refused', async () => {
  await namespace('busy', {});
  for (const name of ['b', 'a']) assert.equal((await s.client.post('/api/v1/namespaces/busy/pods', privilegedPod(name))).status, 201);
  const patch = (labels: Record<string, string>) => s.client.send('PATCH', '/api/v1/namespaces/busy', { body: { metadata: { labels } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
  const labelled = await patch({ [enforce]: 'baseline' });
  assert.equal(labelled.status, 200, labelled.text);
  assert.deepEqual(warnings(labelled), [
    'existing pods in namespace "busy" violate the new PodSecurity enforce level "baseline:latest"',
    'a (and 1 other pod): privileged',
  ]);
  assert.equal(labelled.json.metadata.labels[enforce], 'baseline');
  const bad = await patch({ [enforce]: 'strict' });
  assertStatus(bad, 422, 'Invalid');
  assert.equal(bad.json.message, 'Namespace "busy" is invalid: metadata.labels[pod-security.plat.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted');
});

test('the configuration file\'s exemptions: a namespace (told so when labelled), a user, a runtime class', async () => {
  const created = await s.client.post('/api/v1/namespaces', { metadata: { name: 'exempt-ns', labels: { [enforce]: 'restricted' } } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(warnings(created), ['namespace "exempt-ns" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored']);
  assert.equal((await s.client.post('/api/v1/namespaces/exempt-ns/pods', privilegedPod('p'))).status, 201);
  const byBot = await s.client.anonymous().post('/api/v1/namespaces/locked/pods', privilegedPod('bot'), { Authorization: 'Bearer t-ci' });
  assert.equal(byBot.status, 201, byBot.text);
  // The RuntimeClass plugin (on by default) refuses a pod naming a class that does not exist, as upstream.
  const runtimeClass = await s.client.post(`/apis/${vocabulary.nodeGroup}/v1/runtimeclasses`, { metadata: { name: 'kata' }, handler: 'kata' });
  assert.ok(runtimeClass.status === 201 || runtimeClass.status === 409, runtimeClass.text);
  const kata = await eventually('the RuntimeClass reaches the plugin\'s lister', async () => {
    const r = await s.client.post('/api/v1/namespaces/locked/pods', privilegedPod('kata', { runtimeClassName: 'kata' }));
    return r.status === 403 && /RuntimeClass "kata" not found/.test(r.text) ? undefined : r;
  });
  assert.equal(kata.status, 201, kata.text);
  assertStatus(await s.client.post('/api/v1/namespaces/locked/pods', privilegedPod('runc', { runtimeClassName: 'runc' })), 403, 'Forbidden');
});

test('a PodSecurity configuration with mistakes stops the start-up, saying what to fix', async () => {
  const bad = join(dir, 'bad-admission.yaml');
  writeFileSync(bad, [
    `apiVersion: ${vocabulary.apiserverConfigGroup}/v1`,
    'kind: AdmissionConfiguration',
    'plugins:',
    '- name: PodSecurity',
    '  configuration:',
    '    apiVersion: pod-security.admission.config.k8s.io/v1',
    '    kind: PodSecurityConfiguration',
    '    defaults: {enforce: strict}',
  ].join('\n'));
  const started = await startTestServer({ admissionControlConfigFile: bad }).then(async (server) => server.close(), (e: Error) => e);
  assert.ok(started instanceof AdmissionConfigError, 'the start-up was refused');
  assert.equal(started.message, 'PodSecurity invalid: defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted');
});
