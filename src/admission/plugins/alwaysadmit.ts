// AlwaysAdmit (deprecated): admits every request. It has no effect beside
// the other plugins and is kept for configurations that still name it.

import type { AdmissionPlugin } from '../types.js';

export class AlwaysAdmit implements AdmissionPlugin {
  readonly name = 'AlwaysAdmit';

  constructor(warn: (message: string) => void) {
    warn('AlwaysAdmit admission controller is deprecated. Please remove this controller from your configuration files and scripts.');
  }

  mutate(): void {}
  validate(): void {}
}
