// Public surface of the PKI module.

export { ensureKeyMaterial, keyMaterialPaths, servingDnsNames, KeyMaterialError } from './key-material.js';
export type { KeyMaterial, KeyMaterialOptions } from './key-material.js';
export { writeAdminKubeconfig, renderKubeconfig } from './kubeconfig.js';
export type { AdminKubeconfigParams } from './kubeconfig.js';
export { issueCertificate } from './issuer-thread.js';
export { loadRequestSigner, requestSigner } from './request-signer.js';
export type { RequestSigner } from './request-signer.js';
export type { IssueCertificateParams } from './issue.js';
export { certificateUsages, isCertificateUsage, splitUsages } from '../machinery/usages.js';
export type { CertificateUsage, KeyUsageName, ExtendedKeyUsageName } from '../machinery/usages.js';
export { parseCertificateIdentity } from './identity.js';
export type { CertificateIdentity } from './identity.js';
export { DerError } from '../machinery/der.js';
export {
  generateEcKeyPair,
  generateRsaKeyPair,
  normalizePrivateKeyPem,
  publicKeyPemOf,
  publicKeyPemsFrom,
  importSigningKey,
} from './keys.js';
export type { KeyPairPem, SigningKey } from './keys.js';
export { splitPem, toPem, certificatePems, joinPem } from '../machinery/pem.js';
export type { PemBlock } from '../machinery/pem.js';
export { createTokenSigner, tokenAlgorithmOf, tokenKeyId } from './tokens.js';
