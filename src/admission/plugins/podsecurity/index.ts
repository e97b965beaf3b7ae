// PodSecurity as the admission chain makes it: its configuration read from
// the plugin's entry of the admission configuration file (a mistake stops the
// start-up), the listers it reads asked for now.

import { readConfiguration } from './configuration.js';
import { PodSecurity, podSecurityPlugin } from './plugin.js';

export { PodSecurity };

/** What the plugin needs of the chain's context (named here, so that the plugin does not import the chain that lists it). */
type Reads = { listers: Parameters<typeof podSecurityPlugin>[1]; getObject?: Parameters<typeof podSecurityPlugin>[2] };

export function makePodSecurity(context: Reads, config: Record<string, unknown> | undefined): PodSecurity {
  return podSecurityPlugin(readConfiguration(config), context.listers, context.getObject);
}
