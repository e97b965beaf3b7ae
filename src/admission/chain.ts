import type { Admission, AdmissionPlugin, AdmissionRequest } from './types.js';

/** Runs the enabled plugins: every mutating one in order, then every validating one. */
export class AdmissionChain implements Admission {
  constructor(readonly plugins: readonly AdmissionPlugin[]) {}

  async mutate(request: AdmissionRequest): Promise<void> {
    for (const p of this.plugins) if (p.mutate) await p.mutate(request);
  }

  async validate(request: AdmissionRequest): Promise<void> {
    for (const p of this.plugins) if (p.validate) await p.validate(request);
  }
}

/** Admits everything: for stores used outside a server (tests, tools). */
export const admitAll: Admission = { mutate: async () => undefined, validate: async () => undefined };
