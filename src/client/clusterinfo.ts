// What a joining client does with the public cluster-info ConfigMap: before
// trusting the server address and CA it holds, check the detached JWS the
// bootstrap signer wrote for the client's bootstrap token. Only HS256 is
// accepted, whatever the signature's header claims, so a forged header
// cannot pick a weaker algorithm (or none).

import { compactVerify, decodeProtectedHeader } from 'jose';
import { ownValue } from '../machinery/ownkeys.js';
import { attachPayload, clusterInfo, parseBootstrapToken, signatureKey } from '../machinery/bootstraptoken.js';
import type { ApiObject } from './types.js';

export const clusterInfoAlgorithm = 'HS256';

export class ClusterInfoSignatureError extends Error {
  override name = 'ClusterInfoSignatureError';
}

/** Checks `signature` (`header..signature`) of `kubeconfig` with the bootstrap token `token`; throws a ClusterInfoSignatureError naming what is wrong. */
export async function verifyClusterInfoSignature(kubeconfig: string, signature: string, token: string): Promise<void> {
  const parsed = parseBootstrapToken(token);
  if (!parsed) throw new ClusterInfoSignatureError('the token is not a bootstrap token (<6 characters>.<16 characters>)');
  const jws = attachPayload(signature, kubeconfig);
  if (jws === undefined) throw new ClusterInfoSignatureError('the signature is not a detached JWS (header..signature)');
  let header: { alg?: unknown; kid?: unknown };
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw new ClusterInfoSignatureError('the signature\'s header cannot be read');
  }
  if (header.alg !== clusterInfoAlgorithm) throw new ClusterInfoSignatureError(`the signature uses ${JSON.stringify(header.alg)}; only ${clusterInfoAlgorithm} is accepted`);
  if (header.kid !== undefined && header.kid !== parsed.id) throw new ClusterInfoSignatureError(`the signature is for token ${JSON.stringify(header.kid)}, not ${parsed.id}`);
  try {
    await compactVerify(jws, signatureKey(parsed.id, parsed.secret), { algorithms: [clusterInfoAlgorithm] });
  } catch {
    throw new ClusterInfoSignatureError('the signature does not verify with this token');
  }
}

/** The kubeconfig of a cluster-info ConfigMap once its signature for `token` verifies; throws a ClusterInfoSignatureError otherwise. */
export async function verifiedClusterInfo(configMap: ApiObject, token: string): Promise<string> {
  const data: Record<string, unknown> = configMap.data ?? {};
  const kubeconfig = ownValue(data, clusterInfo.kubeconfigKey);
  if (typeof kubeconfig !== 'string') throw new ClusterInfoSignatureError(`the ConfigMap has no ${clusterInfo.kubeconfigKey}`);
  const id = parseBootstrapToken(token)?.id ?? '';
  const signature = ownValue(data, `${clusterInfo.signaturePrefix}${id}`);
  if (typeof signature !== 'string') throw new ClusterInfoSignatureError(`the ConfigMap holds no signature for token ${id}`);
  await verifyClusterInfoSignature(kubeconfig, signature, token);
  return kubeconfig;
}
