// CertificateSigning: a write through `status` that changes
// status.certificate needs `sign` on the signer of the stored request, as upstream.

import { errors } from '../../machinery/errors.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import type { KubeObject } from '../../api/kind.js';
import { authorizedForSigner, requestsResource, writesRequests, type Authorize } from './signerauthorization.js';

export class CertificateSigning implements AdmissionPlugin {
  readonly name = 'CertificateSigning';
  constructor(private readonly authorize: Authorize | undefined) {}

  /** Other writes go on at once (no promise): most of them do not sign a request. */
  validate(r: AdmissionRequest): Promise<void> | undefined {
    if (!writesRequests(r, 'status') || !r.oldObject || !r.object) return undefined;
    if ((r.object.status?.certificate ?? '') === (r.oldObject.status?.certificate ?? '')) return undefined;
    return this.check(r, r.oldObject);
  }

  private async check(r: AdmissionRequest, old: KubeObject): Promise<void> {
    const signerName = String(old.spec?.signerName ?? '');
    if (!(await authorizedForSigner(this.authorize, r.user, 'sign', signerName))) {
      throw errors.forbidden(requestsResource, r.name, `user not permitted to sign requests with signerName ${JSON.stringify(signerName)}`);
    }
  }
}
