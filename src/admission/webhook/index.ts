// Makes the two webhook plugins from their configuration and the server's parts.

import { vocabulary } from '../../machinery/vocabulary.js';
import type { AdmissionMetrics } from '../metrics.js';
import type { NamespaceGetter } from '../plugins/namespacelifecycle.js';
import type { AdmissionPlugin } from '../types.js';
import type { Authorize } from '../plugins/signerauthorization.js';
import { WebhookCaller } from './call.js';
import type { WebhookClient } from './client.js';
import { CredentialResolver } from './credentials.js';
import { WebhookMatcher, type ServesVersion } from './matcher.js';
import { MutatingAdmissionWebhook } from './mutating.js';
import { WebhookSource, type ConfigurationFeed } from './source.js';
import { ValidatingAdmissionWebhook } from './validating.js';

export type { ConfigurationFeed } from './source.js';
export { WebhookClient } from './client.js';

export interface WebhookDependencies {
  feed: ConfigurationFeed;
  getNamespace: NamespaceGetter;
  client: WebhookClient;
  metrics?: AdmissionMetrics;
  warn: (message: string, extra?: object) => void;
  /** Which versions the server serves (equivalent versions turned off are never offered). */
  serves?: ServesVersion;
  /** The server's authorizer, for the `authorizer` of match conditions (without it every check is an error). */
  authorize?: Authorize;
}

export async function webhookPlugin(mutating: boolean, config: Record<string, unknown> | undefined, deps: WebhookDependencies): Promise<AdmissionPlugin> {
  const name = mutating ? 'MutatingAdmissionWebhook' : 'ValidatingAdmissionWebhook';
  const credentials = await CredentialResolver.load(config, name);
  const parts = {
    source: new WebhookSource(deps.feed),
    matcher: new WebhookMatcher(deps.getNamespace, deps.serves, deps.authorize),
    caller: new WebhookCaller(deps.client, credentials),
    configurationGroup: vocabulary.admissionRegistrationGroup,
    metrics: deps.metrics,
    warn: deps.warn,
  };
  return mutating ? new MutatingAdmissionWebhook(parts) : new ValidatingAdmissionWebhook(parts);
}
