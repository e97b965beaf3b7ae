// CertificateSigning: a write through `status` that changes
// status.certificate needs `sign` on the signer of the stored request, as upstream.

import { errors } from '../../machinery/errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { authorizedForSigner, requestsResource, writesRequests, type Authorize } from './signerauthorization.js';

export class CertificateSigning implements AdmissionPlugin {
  readonly name = 'CertificateSigning';
  constructor(private readonly authorize: Authorize | undefined) {}

  async validate(r: AdmissionRequest): Promise<void> {
    if (!writesRequests(r, 'status') || !r.oldObject || !r.object) return;
    if ((r.object.status?.certificate ?? '') === (r.oldObject.status?.certificate ?? '')) return;
    const signerName = String(r.oldObject.spec?.signerName ?? '');
    if (!(await authorizedForSigner(this.authorize, r.user, 'sign', signerName))) {
      throw errors.forbidden(requestsResource, r.name, `user not permitted to sign requests with signerName ${JSON.stringify(signerName)}`);
    }
  }
}
