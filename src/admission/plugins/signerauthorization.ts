// Whether a user may act (approve, sign) for a signer, as upstream asks it:
// `<verb>` on `signers` named by the signer name, else by its domain
// wildcard `<domain>/*`. Shared by the Certificate* admission plugins.

import type { Attributes, Decision } from '../../machinery/authorization.js';
import type { UserInfo } from '../../machinery/user.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { AdmissionRequest } from '../types.js';

/** Asks the server's authorizer. */
export type Authorize = (attributes: Attributes) => Promise<Decision> | Decision;

function signerAttributes(user: UserInfo, verb: string, name: string): Attributes {
  return {
    user, verb, name, isResourceRequest: true, path: '',
    apiGroup: vocabulary.certificatesGroup, apiVersion: '*', resource: 'signers',
  };
}

export async function authorizedForSigner(authorize: Authorize | undefined, user: UserInfo | undefined, verb: 'approve' | 'sign', signerName: string): Promise<boolean> {
  // Without an authorizer or a user nothing is allowed: the check fails closed.
  if (!authorize || !user) return false;
  if ((await authorize(signerAttributes(user, verb, signerName))).decision === 'allow') return true;
  const domain = signerName.split('/')[0];
  return (await authorize(signerAttributes(user, verb, `${domain}/*`))).decision === 'allow';
}

/** The request writes CertificateSigningRequests (through `subresource`, '' for the object itself). */
export function writesRequests(r: AdmissionRequest, subresource: string): boolean {
  return r.kind.group === vocabulary.certificatesGroup && r.kind.plural === 'certificatesigningrequests' && (r.subresource ?? '') === subresource;
}

export const requestsResource = { group: vocabulary.certificatesGroup, resource: 'certificatesigningrequests' };
