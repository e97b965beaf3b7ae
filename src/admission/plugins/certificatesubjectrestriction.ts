// CertificateSubjectRestriction: a request to the API server client signer
// may not ask for the system:masters organization (that group bypasses
// authorization), as upstream; creates only.

import { errors } from '../../machinery/errors.js';
import { parseCertificateRequest } from '../../machinery/pkcs10.js';
import { systemGroups } from '../../machinery/user.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { AdmissionPlugin, AdmissionRequest } from '../types.js';
import { requestsResource, writesRequests } from './signerauthorization.js';

export class CertificateSubjectRestriction implements AdmissionPlugin {
  readonly name = 'CertificateSubjectRestriction';

  validate(r: AdmissionRequest): void {
    if (r.operation !== 'CREATE' || !writesRequests(r, '') || !r.object) return;
    const signerName = r.object.spec?.signerName;
    if (signerName !== vocabulary.apiserverClientSigner) return;
    let organizations: string[];
    try {
      organizations = parseCertificateRequest(Buffer.from(String(r.object.spec?.request ?? ''), 'base64')).organizations;
    } catch (e) {
      throw errors.forbidden(requestsResource, r.name, `failed to parse CSR: ${(e as Error).message}`);
    }
    if (organizations.includes(systemGroups.masters)) {
      throw errors.forbidden(requestsResource, r.name, `use of ${signerName} signer with ${systemGroups.masters} group is not allowed`);
    }
  }
}
