// Gets with tokens from outside beside gets with the admin client
// certificate, on one server, in alternating rounds (certificate, OIDC ID
// token, webhook token, ...) so that load from elsewhere falls on all alike.
// The OpenID Connect provider and the token webhook run in this process over
// HTTPS. After its first request an ID token costs a hash and a cache lookup
// (no signature check, no call to the provider), and a webhook token the same
// on the webhook cache's hit path: each should be within 10 % of the
// certificate. All three users are in system:masters, so authorization costs
// them the same.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchServer } from './child.js';
import { bestOfAlternatingGets, rateCell } from './alternate.js';
import { LoadGenerator } from './load.js';
import { fmtInt } from './stats.js';
import { target, type Row } from './table.js';
import { startProvider } from '../test/support/oidc-provider.js';
import { answerReview, startTokenWebhook } from '../test/support/authn-webhook.js';

export interface ExternalAuthnBenchOptions {
  quick: boolean;
  concurrency: number;
  progress: (msg: string) => void;
}

const namespace = 'bench-authn';
const timeoutMs = 120_000;
const roundCount = 3;
const within = 0.1;
const clientId = 'bench-cluster';
const webhookToken = 'bench-webhook-token';


export async function benchExternalAuthn(o: ExternalAuthnBenchOptions): Promise<Row[]> {
  const population = o.quick ? 1_000 : 5_000;
  const count = o.quick ? 1_000 : 10_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-authn-'));
  const provider = await startProvider(dataDir, clientId);
  const hook = await startTokenWebhook(dataDir, (review, _req, res) => {
    if (review.spec?.token === webhookToken) answerReview(res, review, { authenticated: true, user: { username: 'bench-webhook', groups: ['system:masters'] } });
    else answerReview(res, review, { authenticated: false });
  });
  const server = await startBenchServer({
    dataDir,
    extraArgs: [
      '--oidc-issuer-url', provider.issuer, '--oidc-client-id', clientId, '--oidc-ca-file', provider.caPath, '--oidc-groups-claim', 'groups',
      '--authentication-token-webhook-config-file', hook.kubeconfigPath, '--authentication-token-webhook-cache-ttl', '1h',
      '--controllers', '*,-serviceaccount-token,-root-ca-cert-publisher',
    ],
  });
  const generators: LoadGenerator[] = [];
  const generator = (bearerToken?: string) => {
    const g = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency, bearerToken });
    generators.push(g);
    return g;
  };
  try {
    const cert = generator();
    await cert.run({ kind: 'namespaces', names: [namespace] }, timeoutMs);
    o.progress(`external tokens: ${fmtInt(population)} ServiceAccounts, gets with the certificate, an OIDC ID token and a webhook token, alternating…`);
    await cert.run({ kind: 'create', namespace, prefix: 'sa-', count: population, remember: false }, timeoutMs);
    const idToken = await provider.token({ sub: 'bench-oidc', groups: ['system:masters'], exp: Math.floor(Date.now() / 1000) + 3 * 3600 });
    const kinds = { cert, oidc: generator(idToken), webhook: generator(webhookToken) };
    // Untimed first: JIT, the ID token's one signature check, the webhook's one answer, sockets.
    let webhookCallsBefore = 0;
    const best = await bestOfAlternatingGets(kinds, {
      pid: server.pid, namespace, population, count, rounds: roundCount, timeoutMs,
      afterWarmUp: () => { webhookCallsBefore = hook.received.length; },
    });
    const webhookCalls = hook.received.length - webhookCallsBefore;
    const c = best.cert;
    const cell = rateCell;
    const compared = (k: 'oidc' | 'webhook', what: string, note: string): Row => {
      const r = best[k];
      const share = r.perSec / c.perSec;
      o.progress(`external tokens: ${k} ${cell(r)}; ${k}/certificate ${share.toFixed(2)}`);
      return {
        metric: `get ServiceAccount with ${what} (best of ${roundCount} × ${fmtInt(count)})`,
        result: `${cell(r)} · ${(share * 100).toFixed(0)} % of the certificate's rate${note}`,
        target: target('within 10 % of the certificate\'s rate', Math.abs(share - 1) <= within),
      };
    };
    o.progress(`external tokens: certificate ${cell(c)}`);
    return [
      { metric: `get ServiceAccount with the admin client certificate (best of ${roundCount} × ${fmtInt(count)}, alternating with the two rows below)`, result: cell(c), target: '—' },
      compared('oidc', 'an OpenID Connect ID token', ''),
      compared('webhook', 'a webhook token, cache hits', ` · ${webhookCalls} webhook calls meanwhile`),
    ];
  } finally {
    for (const g of generators) await g.close().catch(() => {});
    await server.stop(2000).catch(() => {});
    await hook.close();
    await provider.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
