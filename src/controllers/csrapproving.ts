// The auto-approver (upstream `csrapproving`): a pending request for the node
// agent client signer that the node agent rules accept is approved when its
// requester may create `certificatesigningrequests/selfnodeclient` (renewing
// its own certificate: the user is the requested common name) or
// `certificatesigningrequests/nodeclient` (any node's), as the authorizer says.

import type { Attributes, Decision } from '../machinery/authorization.js';
import { CertificateRequestError, parseCertificateRequest, type CertificateRequestInfo } from '../machinery/pkcs10.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { ApiCallError, type ApiClient, type ApiObject } from '../client/types.js';
import type { KitArgument } from './controller.js';
import { conditionsOf, CsrController, hasTrueCondition } from './csrcontroller.js';
import { nodeClientProblem } from './csrsigners.js';

export type Authorize = (attributes: Attributes) => Promise<Decision> | Decision;

interface Recognizer {
  recognize(csr: ApiObject, request: CertificateRequestInfo): boolean;
  subresource: string;
  message: string;
}

const isNodeClient = (csr: ApiObject, request: CertificateRequestInfo) =>
  csr.spec?.signerName === vocabulary.apiserverClientNodeagentSigner && nodeClientProblem(request, Array.isArray(csr.spec?.usages) ? csr.spec.usages : []) === undefined;

/** In upstream's order: renewing one's own certificate first. */
const recognizers: Recognizer[] = [
  {
    recognize: (csr, request) => csr.spec?.username === request.commonName && isNodeClient(csr, request),
    subresource: 'selfnodeclient',
    message: 'Auto approving self node agent client certificate after SubjectAccessReview.',
  },
  {
    recognize: isNodeClient,
    subresource: 'nodeclient',
    message: 'Auto approving node agent client certificate after SubjectAccessReview.',
  },
];

export class CsrApprovingController extends CsrController {
  readonly name = 'csrapproving';

  constructor(client: ApiClient, log: (msg: string, extra?: object) => void, kit: KitArgument, private readonly authorize: Authorize) {
    super(client, log, kit, 'auto-approving a certificate request failed', 'csrapproving');
  }

  protected wants(csr: ApiObject): boolean {
    return csr.spec?.signerName === vocabulary.apiserverClientNodeagentSigner && !csr.status?.certificate
      && !hasTrueCondition(csr, 'Approved') && !hasTrueCondition(csr, 'Denied');
  }

  protected async sync(name: string): Promise<void> {
    const csr = this.requests.get(undefined, name);
    if (!csr || !this.wants(csr)) return;
    let request: CertificateRequestInfo;
    try {
      request = parseCertificateRequest(Buffer.from(String(csr.spec.request ?? ''), 'base64'));
    } catch (e) {
      if (e instanceof CertificateRequestError) return; // the signer reports it
      throw e;
    }
    for (const r of recognizers) {
      if (!r.recognize(csr, request) || !(await this.requesterMay(csr, r.subresource))) continue;
      const conditions = [...conditionsOf(csr), { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message }];
      try {
        await this.client.update(this.type, undefined, { ...csr, status: { ...csr.status, conditions } }, 'approval');
      } catch (e) {
        if (e instanceof ApiCallError && (e.code === 409 || e.code === 404)) return; // the informer brings a newer version, if any
        throw e;
      }
      return;
    }
  }

  /** Whether the requester, as the request records it, may create the sub-resource (a subject access review). */
  private async requesterMay(csr: ApiObject, subresource: string): Promise<boolean> {
    const spec = csr.spec ?? {};
    const decision = await this.authorize({
      user: { username: String(spec.username ?? ''), uid: spec.uid, groups: Array.isArray(spec.groups) ? spec.groups : [], extra: spec.extra ?? {} },
      verb: 'create', isResourceRequest: true, path: '',
      apiGroup: vocabulary.certificatesGroup, apiVersion: '*', resource: 'certificatesigningrequests', subresource,
    });
    return decision.decision === 'allow';
  }
}
