// Options of identity from outside that cannot work stop the start with one
// line naming the flag: halves of a pair, and CA files that are missing or
// hold no certificate.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { IdentityConfigError, readIdentityFiles } from '../../../src/apiserver/identity.js';
import { defaultServerOptions, type ServerOptions } from '../../../src/server/options.js';
import { tempDir } from '../../support/server.js';

const log = pino({ level: 'silent' });
const read = (o: Partial<ServerOptions>) => readIdentityFiles({ ...defaultServerOptions, ...o }, log);

test('halves of a pair are refused', async () => {
  await assert.rejects(read({ oidcIssuerUrl: 'https://id.example' }), (e) => e instanceof IdentityConfigError && /--oidc-issuer-url and --oidc-client-id/.test(e.message));
  await assert.rejects(read({ oidcClientId: 'x' }), IdentityConfigError);
  await assert.rejects(read({ oidcIssuerUrl: 'http://id.example', oidcClientId: 'x' }), /--oidc-issuer-url must be an https URL/);
  await assert.rejects(read({ requestheaderUsernameHeaders: ['X-Remote-User'] }), /--requestheader-client-ca-file and --requestheader-username-headers/);
});

test('CA files that are missing or hold no certificate are refused, naming the flag', async () => {
  const dir = tempDir();
  const empty = join(dir, 'empty.crt');
  writeFileSync(empty, 'not a certificate\n');
  await assert.rejects(read({ requestheaderClientCaFile: join(dir, 'missing.crt'), requestheaderUsernameHeaders: ['X-Remote-User'] }), /^IdentityConfigError: --requestheader-client-ca-file .*ENOENT/);
  await assert.rejects(read({ oidcIssuerUrl: 'https://id.example', oidcClientId: 'x', oidcCaFile: empty }), /--oidc-ca-file .*no certificate in the file/);
  await assert.rejects(read({ authenticationTokenWebhookConfigFile: empty }), /--authentication-token-webhook-config-file .*not a kubeconfig/);
});
