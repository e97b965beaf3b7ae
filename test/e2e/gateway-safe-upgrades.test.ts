// Gateway API's own ValidatingAdmissionPolicy, as its standard install ships
// it (test/fixtures/operators/gateway-api/standard, release v1.6.1, with its
// licence): once the standard channel is installed with it, applying the
// experimental channel's CRDs over the standard ones is refused with the
// policy's message, in upstream's words, as kubectl prints it; CRDs of other
// groups and the policy's own update go through.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

const fixtures = fileURLToPath(new URL('../../../test/fixtures/operators/gateway-api/', import.meta.url));
// The channels' smallest CRDs (the policy judges every one alike; the largest take seconds each to install), the policy among them.
const picked = ['_gatewayclasses.yaml', '_referencegrants.yaml', '_vap_safeupgrades.yaml', '_xbackends.yaml'];
const channel = (name: string) => readdirSync(join(fixtures, name)).filter((f) => picked.some((end) => f.endsWith(end))).sort().map((f) => join(fixtures, name, f));

let s: TestServer;

/** A server-side apply of the CRD in `file`, as a dry run. */
function dryRunApply(file: string) {
  const crd = parse(readFileSync(file, 'utf8'));
  return s.client.send('PATCH', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}?dryRun=All&fieldManager=kubectl&force=true`, {
    body: crd, headers: { 'Content-Type': 'application/apply-patch+yaml' },
  });
}
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const policyName = 'safe-upgrades.gateway.networking.k8s.io';
const refusal = `customresourcedefinitions.apiextensions.k8s.io "gatewayclasses.gateway.networking.k8s.io" is forbidden: ValidatingAdmissionPolicy '${policyName}' `
  + `with binding '${policyName}' denied request: Installing experimental CRDs on top of standard channel CRDs is prohibited by default. `
  + `Uninstall ValidatingAdmissionPolicy ${policyName} to install experimental CRDs on top of standard channel CRDs.`;

test('the experimental channel over the standard one is refused by the standard install\'s safe-upgrades policy', async () => {
  const standard = channel('standard');
  assert.ok(standard.some((f) => f.includes('_vap_')), 'the standard channel ships the policy');
  const installed = await s.kubectl(['apply', '--server-side', ...standard.flatMap((f) => ['-f', f])]);
  assert.equal(installed.code, 0, installed.stderr);
  const experimental = channel('experimental');
  const gatewayClasses = experimental.find((f) => f.endsWith('_gatewayclasses.yaml'))!;
  // The policy reaches admission through its informer: a dry run shows when it holds.
  await eventually('the policy refuses', async () => (await dryRunApply(gatewayClasses)).status === 422);
  const over = await s.kubectl(['apply', '--server-side', ...experimental.filter((f) => !f.includes('_vap_')).flatMap((f) => ['-f', f])]);
  assert.notEqual(over.code, 0);
  assert.ok(over.stderr.includes(`Error from server (Invalid): ${refusal}`), over.stderr);
  // The experimental-only group is not the policy's concern.
  assert.equal((await s.client.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/xbackends.gateway.networking.x-k8s.io')).status, 200);
  const classes = await s.client.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gatewayclasses.gateway.networking.k8s.io');
  assert.equal(classes.json.metadata.annotations['gateway.networking.k8s.io/channel'], 'standard');
  // Without the policy (as its message says), the experimental channel installs.
  assert.equal((await s.client.delete(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${policyName}`)).status, 200);
  await eventually('the experimental channel installs', async () => (await dryRunApply(gatewayClasses)).status === 200);
});
