// The ServiceAccount plugin's mountable-secrets rule, with upstream's cases:
// an account annotated to enforce it (ours or upstream's name, read as Go's
// ParseBool) limits a new pod's secret volumes, env and envFrom of init and
// regular containers and pull secrets to what it lists, and the ephemeral
// containers added later to its secrets; messages in upstream's words.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceAccount } from '../../../src/admission/plugins/serviceaccount.js';
import type { Lister } from '../../../src/admission/listers.js';
import type { KubeObject } from '../../../src/api/kind.js';
import { pods } from '../../../src/api/core/v1/index.js';
import { upstreamCompat, vocabulary } from '../../../src/machinery/vocabulary.js';
import { admissionRequest, rejection } from '../../support/admission.js';

const account = (annotations: Record<string, string>): KubeObject => ({
  metadata: { name: 'builder', namespace: 'ns', annotations },
  secrets: [{ name: 'allowed' }], imagePullSecrets: [{ name: 'registry' }],
});

function plugin(sa: KubeObject): ServiceAccount {
  const lister: Lister = {
    list: () => [sa], inNamespace: () => [sa], get: (_ns, name) => (name === sa.metadata!.name ? sa : undefined), byIndex: () => [],
    onChange: () => undefined, hasSynced: () => true,
  };
  return new ServiceAccount(lister, async () => undefined);
}

const create = (spec: Record<string, unknown>) =>
  admissionRequest('CREATE', pods, 'p', { namespace: 'ns', object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { serviceAccountName: 'builder', containers: [{ name: 'c', image: 'i' }], ...spec } } });

async function refusal(p: ServiceAccount, request: ReturnType<typeof create>): Promise<string> {
  const e = await rejection(() => p.validate(request));
  assert.equal(e.code, 403);
  return e.message;
}

const enforcing = account({ [vocabulary.enforceMountableSecretsAnnotation]: 'true' });
const suffix = 'is not allowed because service account builder does not reference that secret';

describe('ServiceAccount mountable secrets', () => {
  it('refuses each kind of secret reference the account does not list', async () => {
    const p = plugin(enforcing);
    assert.match(await refusal(p, create({ volumes: [{ name: 'v', secret: { secretName: 'other' } }] })), new RegExp(`volume with secret.secretName="other" ${suffix}`));
    assert.match(await refusal(p, create({ initContainers: [{ name: 'init', image: 'i', env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'other', key: 'k' } } }] }] })),
      new RegExp(`init container init with envVar TOKEN referencing secret.secretName="other" ${suffix}`));
    assert.match(await refusal(p, create({ containers: [{ name: 'c', image: 'i', envFrom: [{ secretRef: { name: 'other' } }] }] })),
      new RegExp(`container c with envFrom referencing secret.secretName="other" ${suffix}`));
    assert.match(await refusal(p, create({ imagePullSecrets: [{ name: 'registry' }, { name: 'elsewhere' }] })),
      /imagePullSecrets\[1\]\.name="elsewhere" is not allowed because service account builder does not reference that imagePullSecret/);
  });

  it('admits a pod that uses only what the account lists', async () => {
    await plugin(enforcing).validate(create({
      volumes: [{ name: 'v', secret: { secretName: 'allowed' } }, { name: 'cm', configMap: { name: 'anything' } }],
      containers: [{ name: 'c', image: 'i', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'allowed', key: 'k' } } }], envFrom: [{ secretRef: { name: 'allowed' } }] }],
      imagePullSecrets: [{ name: 'registry' }],
    }));
  });

  it('reads upstream\'s annotation too, as Go\'s ParseBool; an account without it, or with false or nonsense, limits nothing', async () => {
    const outside = { volumes: [{ name: 'v', secret: { secretName: 'other' } }] };
    await refusal(plugin(account({ [upstreamCompat.enforceMountableSecretsAnnotation]: 'T' })), create(outside));
    for (const annotations of [{}, { [vocabulary.enforceMountableSecretsAnnotation]: 'false' }, { [vocabulary.enforceMountableSecretsAnnotation]: 'yes' }]) {
      await plugin(account(annotations)).validate(create(outside));
    }
  });

  it('limits the ephemeral containers added to a running pod to the account\'s secrets', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: {
      serviceAccountName: 'builder', containers: [{ name: 'c', image: 'i' }],
      ephemeralContainers: [{ name: 'debug', image: 'busybox', envFrom: [{ secretRef: { name: 'other' } }] }],
    } };
    const update = admissionRequest('UPDATE', pods, 'p', { namespace: 'ns', subresource: 'ephemeralcontainers', object: pod });
    assert.match(await refusal(plugin(enforcing), update), new RegExp(`ephemeral container debug with envFrom referencing secret.secretName="other" ${suffix}`));
    await plugin(account({})).validate(update);
    const withoutAccount = admissionRequest('UPDATE', pods, 'p', { namespace: 'ns', subresource: 'ephemeralcontainers', object: { ...pod, spec: { ...pod.spec, serviceAccountName: undefined } } });
    assert.match(await refusal(plugin(enforcing), withoutAccount), /no service account specified for pod ns\/p/);
  });
});
