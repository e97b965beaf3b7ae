// AlwaysDeny (deprecated): rejects every write, in both phases, as upstream.

import { forbiddenRequest } from '../errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';

const why = 'admission control is denying all modifications';

export class AlwaysDeny implements AdmissionPlugin {
  readonly name = 'AlwaysDeny';

  constructor(warn: (message: string) => void) {
    warn('AlwaysDeny admission controller is deprecated. Please remove this controller from your configuration files and scripts.');
  }

  mutate(request: AdmissionRequest): void {
    throw forbiddenRequest(request, why);
  }

  validate(request: AdmissionRequest): void {
    throw forbiddenRequest(request, why);
  }
}
