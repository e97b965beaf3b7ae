// Writes the kubeconfig the operator (and the tests) use to reach the server
// as the admin, with every credential embedded so the file stands alone.

import { dirname } from 'node:path';
import { stringify } from 'yaml';
import { product } from '../machinery/vocabulary.js';
import { ensurePrivateDir, privateFileMode, writeFileAtomic } from './files.js';

export interface AdminKubeconfigParams {
  /** e.g. `https://127.0.0.1:6443`. */
  server: string;
  /** CA that verifies the server's serving certificate. */
  caPem: string;
  certPem: string;
  keyPem: string;
  /** Default `admin`. */
  user?: string;
  /** Default the product name. */
  clusterName?: string;
  /** Default `<user>@<clusterName>`. */
  contextName?: string;
}

/** The kubeconfig document as YAML text. */
export function renderKubeconfig(params: AdminKubeconfigParams): string {
  const user = params.user ?? 'admin';
  const cluster = params.clusterName ?? product.name;
  const context = params.contextName ?? `${user}@${cluster}`;
  const base64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: params.server, 'certificate-authority-data': base64(params.caPem) } }],
    users: [
      {
        name: user,
        user: { 'client-certificate-data': base64(params.certPem), 'client-key-data': base64(params.keyPem) },
      },
    ],
    contexts: [{ name: context, context: { cluster, user } }],
    'current-context': context,
    preferences: {},
  });
}

/** Writes the kubeconfig at `path` (mode 0600, atomically: temp file + rename). */
export async function writeAdminKubeconfig(path: string, params: AdminKubeconfigParams): Promise<void> {
  await ensurePrivateDir(dirname(path));
  await writeFileAtomic(path, renderKubeconfig(params), privateFileMode);
}
