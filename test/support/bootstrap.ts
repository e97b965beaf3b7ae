// Bootstrap token secrets for tests: the Secret a token `<id>.<secret>` is
// kept in, with the fields a test chooses.

import { vocabulary } from '../../src/machinery/vocabulary.js';
import type { TestServer } from './server.js';

export interface TokenFields {
  expiration?: string;
  usageAuthentication?: boolean;
  usageSigning?: boolean;
  extraGroups?: string;
  /** Overrides the token-secret kept (a secret that disagrees with the token). */
  keptSecret?: string;
}

export const secretsPath = `/api/v1/namespaces/${vocabulary.systemNamespace}/secrets`;

export function tokenSecret(token: string, fields: TokenFields = {}): Record<string, unknown> {
  const [id, secret] = token.split('.') as [string, string];
  const stringData: Record<string, string> = { 'token-id': id, 'token-secret': fields.keptSecret ?? secret, description: 'a test token' };
  if (fields.expiration !== undefined) stringData.expiration = fields.expiration;
  if (fields.usageAuthentication ?? true) stringData['usage-bootstrap-authentication'] = 'true';
  if (fields.usageSigning) stringData['usage-bootstrap-signing'] = 'true';
  if (fields.extraGroups !== undefined) stringData['auth-extra-groups'] = fields.extraGroups;
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(v).toString('base64');
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: `bootstrap-token-${id}` }, type: vocabulary.bootstrapTokenSecretType, data };
}

/** Creates the token's secret as the admin; fails the test when refused. */
export async function createTokenSecret(s: TestServer, token: string, fields: TokenFields = {}): Promise<any> {
  const r = await s.client.post(secretsPath, tokenSecret(token, fields));
  if (r.status !== 201) throw new Error(`creating the token secret: ${r.status} ${r.text}`);
  return r.json;
}
