// CertificateApproval: a write through `approval` needs `approve` on the
// signer of the stored request (the stored one: the spec cannot change, and
// a changed signerName in the body must not help), as upstream.

import { errors } from '../../machinery/errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import type { KubeObject } from '../../api/kind.js';
import { authorizedForSigner, requestsResource, writesRequests, type Authorize } from './signerauthorization.js';

export class CertificateApproval implements AdmissionPlugin {
  readonly name = 'CertificateApproval';
  constructor(private readonly authorize: Authorize | undefined) {}

  /** Other writes go on at once (no promise): most of them are not approvals. */
  validate(r: AdmissionRequest): Promise<void> | undefined {
    return writesRequests(r, 'approval') && r.oldObject ? this.check(r, r.oldObject) : undefined;
  }

  private async check(r: AdmissionRequest, old: KubeObject): Promise<void> {
    const signerName = String(old.spec?.signerName ?? '');
    if (!(await authorizedForSigner(this.authorize, r.user, 'approve', signerName))) {
      throw errors.forbidden(requestsResource, r.name, `user not permitted to approve requests with signerName ${JSON.stringify(signerName)}`);
    }
  }
}
