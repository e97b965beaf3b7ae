// PodSecurity with the real kubectl, as a user meets it: labelling a
// namespace enforce=restricted warns about the pods already there, then a
// privileged pod is refused in upstream's words; warn=baseline prints
// upstream's warning; a label value that means nothing is refused.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite' }); });
after(async () => { await s.close(); });

const privilegedPod = (name: string) => JSON.stringify({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27', securityContext: { privileged: true } }] },
});

test('kubectl label ns … pod-security.plat.io/enforce=restricted warns about existing pods, then a privileged pod is refused', async () => {
  await s.kubectlOk(['create', 'namespace', 'psa-e2e']);
  await s.kubectlOk(['apply', '-n', 'psa-e2e', '-f', '-'], privilegedPod('before'));
  const labelled = await s.kubectl(['label', 'ns', 'psa-e2e', 'pod-security.plat.io/enforce=restricted']);
  assert.equal(labelled.code, 0, labelled.stderr);
  assert.match(labelled.stdout, /namespace\/psa-e2e labeled/);
  assert.ok(labelled.stderr.includes('Warning: existing pods in namespace "psa-e2e" violate the new PodSecurity enforce level "restricted:latest"\n'), labelled.stderr);
  assert.ok(labelled.stderr.includes('Warning: before: privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile\n'), labelled.stderr);

  const refused = await s.kubectl(['apply', '-n', 'psa-e2e', '-f', '-'], privilegedPod('after'));
  assert.notEqual(refused.code, 0);
  assert.equal(refused.stderr.trim(), 'Error from server (Forbidden): error when creating "STDIN": pods "after" is forbidden: violates PodSecurity "restricted:latest": '
    + 'privileged (container "app" must not set securityContext.privileged=true), '
    + 'allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), '
    + 'unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), '
    + 'runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), '
    + 'seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
});

test('warn=baseline (upstream\'s label name) makes kubectl print upstream\'s warning; the pod is created', async () => {
  await s.kubectlOk(['create', 'namespace', 'psa-warn']);
  await s.kubectlOk(['label', 'ns', 'psa-warn', 'pod-security.kubernetes.io/warn=baseline']);
  const r = await s.kubectl(['apply', '-n', 'psa-warn', '-f', '-'], privilegedPod('loud'));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /pod\/loud created/);
  assert.equal(r.stderr, 'Warning: would violate PodSecurity "baseline:latest": privileged (container "app" must not set securityContext.privileged=true)\n');
});

test('a label value PodSecurity cannot parse is refused', async () => {
  await s.kubectlOk(['create', 'namespace', 'psa-typo']);
  const r = await s.kubectl(['label', 'ns', 'psa-typo', 'pod-security.plat.io/enforce=restriced']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /The Namespace "psa-typo" is invalid: metadata.labels\[pod-security.plat.io\/enforce\]: Invalid value: "restriced": must be one of privileged, baseline, restricted/);
});
