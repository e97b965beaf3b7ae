// What a start reads and checks before it opens anything, so that a refused
// --feature-gates or --runtime-config, or an identity or authorization file
// that does not read, stops it with nothing left behind.

import type { Logger } from 'pino';
import { FeatureGates } from '../machinery/featuregates.js';
import type { ApiEnablement } from '../api/versioning.js';
import { enabledPluginNames } from '../admission/plugin-names.js';
import type { ServerOptions } from '../server/options.js';
import { servedApiVersions } from './apiversions.js';
import { readIdentityFiles, type IdentityFiles } from './identity.js';
import { readAuthorizationFiles, type AuthorizationFiles } from './authorization.js';

export interface StartConfig {
  features: FeatureGates;
  enablement: ApiEnablement;
  identityFiles: IdentityFiles;
  authorizationFiles: AuthorizationFiles;
}

export async function readStartConfig(options: ServerOptions, log: Logger): Promise<StartConfig> {
  const { gates: features, warnings } = FeatureGates.fromFlags(options.featureGates);
  for (const warning of warnings) log.warn(warning);
  const plugins = enabledPluginNames(options.enableAdmissionPlugins, options.disableAdmissionPlugins);
  const enablement = servedApiVersions(options.runtimeConfig, plugins, (message) => log.warn(message));
  return { features, enablement, identityFiles: await readIdentityFiles(options, log), authorizationFiles: await readAuthorizationFiles(options) };
}
