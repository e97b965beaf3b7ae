// The served API versions of this start: --runtime-config checked against
// the catalog, and the rule the spec ties to it: the webhook admission
// plugins read their configurations, so turning those resources off needs
// the plugins turned off too.

import { builtinAnsweredKinds, builtinKinds } from '../api/catalog.js';
import { ApiEnablement, RuntimeConfigError } from '../api/versioning.js';
import { resources } from '../client/resources.js';

const webhookPlugins = [
  { plugin: 'MutatingAdmissionWebhook', configurations: resources.mutatingWebhookConfigurations },
  { plugin: 'ValidatingAdmissionWebhook', configurations: resources.validatingWebhookConfigurations },
];

/** Throws RuntimeConfigError with the one line the CLI prints; `warn` hears of keys accepted without effect. */
export function servedApiVersions(runtimeConfig: readonly [string, string][], runningPlugins: readonly string[], warn: (message: string) => void): ApiEnablement {
  const { enablement, warnings } = ApiEnablement.fromRuntimeConfig(runtimeConfig, [...builtinKinds, ...builtinAnsweredKinds]);
  for (const warning of warnings) warn(warning);
  for (const { plugin, configurations: c } of webhookPlugins) {
    if (runningPlugins.includes(plugin) && !enablement.serves(c.group, { name: c.version }, c.resource)) {
      throw new RuntimeConfigError(`--runtime-config turns off ${c.group}/${c.version} ${c.resource}, which the ${plugin} admission plugin reads: turn the plugin off too (--disable-admission-plugins=${plugin})`);
    }
  }
  return enablement;
}
