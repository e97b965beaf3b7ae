// PodSecurity as the admission chain makes it: its configuration read from
// the plugin's entry of the admission configuration file (a mistake stops the
// start-up), the listers it reads asked for now.

import type { AdmissionContext } from '../../index.js';
import { readConfiguration } from './configuration.js';
import { PodSecurity, podSecurityPlugin } from './plugin.js';

export { PodSecurity };

export function makePodSecurity(context: Pick<AdmissionContext, 'listers' | 'getObject'>, config: Record<string, unknown> | undefined): PodSecurity {
  return podSecurityPlugin(readConfiguration(config), context.listers, context.getObject);
}
