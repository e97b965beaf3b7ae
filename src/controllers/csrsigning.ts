// The signing controller (upstream `csrsigning`): approved requests for the
// four built-in signers get a certificate from the cluster signing CA, or,
// when the signer's rules refuse them, a Failed condition saying why.
// Requests for other signers are left to their own signers.

import type { CertificateRequestInfo } from '../machinery/pkcs10.js';
import { CertificateRequestError, parseCertificateRequest } from '../machinery/pkcs10.js';
import type { CertificateUsage } from '../machinery/usages.js';
import { rfc3339Now } from '../machinery/time.js';
import { ApiCallError, type ApiClient, type ApiObject } from '../client/types.js';
import type { KitArgument } from './controller.js';
import { conditionsOf, CsrController, hasTrueCondition, isApproved } from './csrcontroller.js';
import { builtinSigners, lifetimeMs, signerProblem } from './csrsigners.js';

/** Issues certificates from the cluster signing CA (pki's RequestSigner). */
export interface CertificateIssuer {
  sign(request: CertificateRequestInfo, usages: readonly CertificateUsage[], lifetimeMs: number): Promise<string>;
}

export interface CsrSigningOptions {
  issuer: CertificateIssuer;
  /** `--cluster-signing-duration`: the longest certificate the built-in signers issue, in ms. */
  durationMs: number;
}

export class CsrSigningController extends CsrController {
  readonly name = 'csrsigning';

  constructor(client: ApiClient, log: (msg: string, extra?: object) => void, kit: KitArgument, private readonly options: CsrSigningOptions) {
    super(client, log, kit, 'signing a certificate request failed', 'csrsigning');
  }

  /** Approved, not failed, not yet issued, for a built-in signer. */
  protected wants(csr: ApiObject): boolean {
    return builtinSigners.includes(csr.spec?.signerName) && isApproved(csr) && !hasTrueCondition(csr, 'Failed') && !csr.status?.certificate;
  }

  protected async sync(name: string): Promise<void> {
    const csr = this.requests.get(undefined, name);
    if (!csr || !this.wants(csr)) return;
    const usages: string[] = Array.isArray(csr.spec.usages) ? csr.spec.usages : [];
    let request: CertificateRequestInfo;
    try {
      request = parseCertificateRequest(Buffer.from(String(csr.spec.request ?? ''), 'base64'));
    } catch (e) {
      if (!(e instanceof CertificateRequestError)) throw e;
      await this.fail(csr, `unable to parse csr "${name}": ${e.message}`);
      return;
    }
    const problem = signerProblem(csr.spec.signerName, request, usages);
    if (problem !== undefined) {
      await this.fail(csr, problem);
      return;
    }
    const certificate = await this.options.issuer.sign(request, usages as CertificateUsage[], lifetimeMs(csr.spec.expirationSeconds, this.options.durationMs));
    await this.writeStatus(csr, { ...csr.status, certificate: Buffer.from(certificate).toString('base64') });
  }

  /** The signer refuses: a Failed condition tells the requester why, and nothing is signed. */
  private async fail(csr: ApiObject, message: string): Promise<void> {
    const now = rfc3339Now();
    const conditions = [...conditionsOf(csr), { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message, lastUpdateTime: now, lastTransitionTime: now }];
    await this.writeStatus(csr, { ...csr.status, conditions });
  }

  private async writeStatus(csr: ApiObject, status: Record<string, unknown>): Promise<void> {
    try {
      await this.client.update(this.type, undefined, { ...csr, status }, 'status');
    } catch (e) {
      // Changed meanwhile: the informer brings the new version back; gone: nothing to sign.
      if (e instanceof ApiCallError && (e.code === 409 || e.code === 404)) return;
      throw e;
    }
  }
}
