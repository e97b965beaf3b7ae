// Requests the server cannot finish until the test says so: a mutating
// webhook on ConfigMaps labelled `hold: "yes"` in one namespace that hangs
// while held. Used to fill in-flight pools, pass request timeouts and keep a
// request in flight across a shutdown, without any timing assumption.

import assert from 'node:assert/strict';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import type { TestClient } from './client.js';
import { eventually, startWebhookServer, type TestWebhookServer } from './webhook.js';

const group = vocabulary.admissionRegistrationGroup;

export interface Holder {
  hooks: TestWebhookServer;
  /** Calls the webhook has had so far. */
  calls(): number;
  /** From now on the webhook hangs. */
  hold(): void;
  /** Ends the webhook server: hanging calls fail (so do their requests, as failurePolicy Fail says). */
  close(): Promise<void>;
}

/** Configures the webhook with `admin` for namespace `ns` (created here) and waits until the server calls it. */
export async function startHolder(admin: TestClient, ns: string): Promise<Holder> {
  const hooks = await startWebhookServer();
  assert.equal((await admin.post('/api/v1/namespaces', { metadata: { name: ns, labels: { holder: ns } } })).status, 201);
  const created = await admin.post(`/apis/${group}/v1/mutatingwebhookconfigurations`, {
    apiVersion: `${group}/v1`, kind: 'MutatingWebhookConfiguration', metadata: { name: `hold-${ns}` },
    webhooks: [{
      name: 'hold.example.com', clientConfig: { url: hooks.url('/hold'), caBundle: hooks.caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { holder: ns } }, objectSelector: { matchLabels: { hold: 'yes' } },
      sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 30, failurePolicy: 'Fail',
    }],
  });
  assert.equal(created.status, 201, created.text);
  await eventually('the hold webhook is called', async () => {
    await admin.post(`/api/v1/namespaces/${ns}/configmaps?dryRun=All`, { metadata: { generateName: 'probe-', labels: { hold: 'yes' } } });
    return hooks.callsTo('/hold').length > 0;
  });
  return {
    hooks,
    calls: () => hooks.callsTo('/hold').length,
    hold: () => hooks.on('/hold', () => ({ hang: true })),
    close: () => hooks.close(),
  };
}

/** A ConfigMap the holder holds. */
export function heldConfigMap(): Record<string, unknown> {
  return { metadata: { generateName: 'held-', labels: { hold: 'yes' } }, data: { a: 'b' } };
}
