// Identity from outside with the real kubectl: `kubectl --token` with an
// OpenID Connect ID token, a bootstrap token and a webhook token, named by
// `kubectl auth whoami`; an expired ID token is refused; and an anonymous
// client reads the cluster-info ConfigMap, whose signature verifies with the
// bootstrap token.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { kubectlWhoami, startTestServer, writeBareKubeconfig, tempDir, testControllers, type TestServer } from '../support/server.js';
import { startProvider, type TestProvider } from '../support/oidc-provider.js';
import { answerReview, startTokenWebhook, type TestTokenWebhook } from '../support/authn-webhook.js';
import { createTokenSecret } from '../support/bootstrap.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { verifiedClusterInfo } from '../../src/client/clusterinfo.js';

let s: TestServer;
let provider: TestProvider;
let hook: TestTokenWebhook;
/** A kubeconfig with the cluster only: the credential comes from --token, or there is none. */
let bareConfig: string;
const bootstrapToken = 'kubect.0123456789abcdef';

before(async () => {
  const dir = tempDir();
  provider = await startProvider(dir, 'kubectl-cluster');
  hook = await startTokenWebhook(dir, (review, _req, res) => {
    if (review.spec.token === 'webhook-token') answerReview(res, review, { authenticated: true, user: { username: 'from-webhook', groups: ['hooked'] } });
    else answerReview(res, review, { authenticated: false });
  });
  s = await startTestServer({
    storageBackend: 'sqlite', anonymousAuth: true, authorizationMode: ['RBAC'],
    controllers: [...testControllers, 'bootstrapsigner', 'tokencleaner'], enableBootstrapTokenAuth: true,
    oidcIssuerUrl: provider.issuer, oidcClientId: 'kubectl-cluster', oidcCaFile: provider.caPath, oidcUsernameClaim: 'email', oidcGroupsClaim: 'groups',
    authenticationTokenWebhookConfigFile: hook.kubeconfigPath,
  });
  bareConfig = writeBareKubeconfig(s);
});

after(async () => {
  await s.close();
  await hook.close();
  await provider.close();
});


test('kubectl --token with an ID token, a bootstrap token and a webhook token', async () => {
  const idToken = await provider.token({ email: 'jane@example.com', email_verified: true, groups: ['dev'] });
  assert.deepEqual(await kubectlWhoami(bareConfig, idToken), { username: 'jane@example.com', groups: ['dev', 'system:authenticated'] });
  await createTokenSecret(s, bootstrapToken, { usageSigning: true });
  assert.deepEqual(await kubectlWhoami(bareConfig, bootstrapToken), { username: 'system:bootstrap:kubect', groups: ['system:bootstrappers', 'system:authenticated'] });
  assert.deepEqual(await kubectlWhoami(bareConfig, 'webhook-token'), { username: 'from-webhook', groups: ['hooked', 'system:authenticated'] });
  const expired = await provider.token({ email: 'jane@example.com', exp: Math.floor(Date.now() / 1000) - 60 });
  assert.equal(await kubectlWhoami(bareConfig, expired), undefined);
});

test('an anonymous client reads cluster-info, signed for the bootstrap token, and nothing else of the namespace', async () => {
  // Plain HTTPS: kubectl with no credential at all asks for a password on its terminal.
  const anonymous = s.client.anonymous();
  try {
    await createTokenSecret(s, 'kubec2.0123456789abcdef', { usageSigning: true });
    const cm = await eventually('cluster-info is signed for the token', async () => {
      const r = await anonymous.get(`/api/v1/namespaces/${vocabulary.publicNamespace}/configmaps/cluster-info`);
      assert.equal(r.status, 200, r.text);
      return r.json.data['jws-kubeconfig-kubec2'] ? r.json : undefined;
    });
    const kubeconfig = YAML.parse(await verifiedClusterInfo(cm, 'kubec2.0123456789abcdef'));
    assert.equal(kubeconfig.clusters[0].cluster.server, s.url);
    assert.equal((await anonymous.get(`/api/v1/namespaces/${vocabulary.publicNamespace}/configmaps`)).status, 403);
  } finally {
    anonymous.close();
  }
});
