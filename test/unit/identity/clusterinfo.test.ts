// The client-side check of a cluster-info signature insists on HS256 and on
// the token's own key, whatever the signature's header says.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompactSign, generateKeyPair } from 'jose';
import { signClusterInfo } from '../../../src/controllers/bootstrapsigner.js';
import { verifyClusterInfoSignature } from '../../../src/client/clusterinfo.js';
import { detachPayload, signatureKey } from '../../../src/machinery/bootstraptoken.js';

const token = 'abcdef.0123456789abcdef';
const content = 'apiVersion: v1\nkind: Config\n';
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

test('a signature from the signer verifies with the whole token as key', async () => {
  await verifyClusterInfoSignature(content, await signClusterInfo(content, 'abcdef', '0123456789abcdef'), token);
  // Keyed with the secret part alone (upstream's code) it does not.
  const secretOnly = detachPayload(await new CompactSign(new TextEncoder().encode(content))
    .setProtectedHeader({ alg: 'HS256', kid: 'abcdef' }).sign(new TextEncoder().encode('0123456789abcdef')));
  await assert.rejects(verifyClusterInfoSignature(content, secretOnly, token), /does not verify/);
});

test('other algorithms are refused, even with the right key: HS512, none, RS256', async () => {
  const hs512 = detachPayload(await new CompactSign(new TextEncoder().encode(content))
    .setProtectedHeader({ alg: 'HS512', kid: 'abcdef' }).sign(signatureKey('abcdef', '0123456789abcdef')));
  await assert.rejects(verifyClusterInfoSignature(content, hs512, token), /uses "HS512"; only HS256 is accepted/);
  await assert.rejects(verifyClusterInfoSignature(content, `${b64({ alg: 'none', kid: 'abcdef' })}..`, token), /only HS256/);
  const { privateKey } = await generateKeyPair('RS256');
  const rs = detachPayload(await new CompactSign(new TextEncoder().encode(content)).setProtectedHeader({ alg: 'RS256' }).sign(privateKey));
  await assert.rejects(verifyClusterInfoSignature(content, rs, token), /only HS256/);
});

test('malformed signatures and tokens are refused with a reason', async () => {
  const good = await signClusterInfo(content, 'abcdef', '0123456789abcdef');
  await assert.rejects(verifyClusterInfoSignature(content, good, 'not-a-token'), /not a bootstrap token/);
  await assert.rejects(verifyClusterInfoSignature(content, good.replace('..', '.eA.'), token), /not a detached JWS/);
  await assert.rejects(verifyClusterInfoSignature(content, 'garbage..x', token), /header cannot be read/);
  await assert.rejects(verifyClusterInfoSignature(content, await signClusterInfo(content, 'zzzzzz', '0123456789abcdef'), token), /for token "zzzzzz", not abcdef/);
});
