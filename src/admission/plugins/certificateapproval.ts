// CertificateApproval: a write through `approval` needs `approve` on the
// signer of the stored request (the stored one: the spec cannot change, and
// a changed signerName in the body must not help), as upstream.

import { errors } from '../../machinery/errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { authorizedForSigner, requestsResource, writesRequests, type Authorize } from './signerauthorization.js';

export class CertificateApproval implements AdmissionPlugin {
  readonly name = 'CertificateApproval';
  constructor(private readonly authorize: Authorize | undefined) {}

  async validate(r: AdmissionRequest): Promise<void> {
    if (!writesRequests(r, 'approval') || !r.oldObject) return;
    const signerName = String(r.oldObject.spec?.signerName ?? '');
    if (!(await authorizedForSigner(this.authorize, r.user, 'approve', signerName))) {
      throw errors.forbidden(requestsResource, r.name, `user not permitted to approve requests with signerName ${JSON.stringify(signerName)}`);
    }
  }
}
