// Gets with a service-account bearer token beside gets with the admin client
// certificate, on one server, alternating (certificate, token, ...) so that load from elsewhere falls on both alike. After its first
// request a token costs a hash, a cache lookup and the account's existence
// check from the watch cache: the two should be within 10 % of each other.

import { Agent } from 'node:https';
import { startBenchServer, type BenchServer } from './child.js';
import { bestOfAlternatingGets, pairedMedianGets, rateCell } from './alternate.js';
import { sendJson } from './http.js';
import { LoadGenerator } from './load.js';
import { fmtInt } from './stats.js';
import { target, type Row } from './table.js';

export interface TokenBenchOptions {
  quick: boolean;
  concurrency: number;
  progress: (msg: string) => void;
  /** More server flags (another store); `label` then starts the rows' names. */
  extraArgs?: string[];
  label?: string;
  /**
   * This many pairs of rounds, compared by the median of each pair's ratio
   * (pairedMedianGets), instead of the best of three: for a store whose
   * round trips make the rates swing with the machine's load (etcd).
   */
  pairedRounds?: number;
  /** Another build's CLI to run the server with (startBenchServer's entry). */
  entry?: string;
}

const namespace = 'bench-token';
const timeoutMs = 120_000;
/** Alternating rounds of each; the best of each counts (the least disturbed by other processes). */
const roundCount = 3;
/** The row's target: the two rates within this share of each other. */
const within = 0.1;

/** A bound token for `account`, requested with the admin certificate. */
async function tokenFor(server: BenchServer, account: string): Promise<string> {
  const agent = new Agent({ ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
  try {
    const path = `/api/v1/namespaces/${namespace}/serviceaccounts/${account}/token`;
    const r = await sendJson(agent, server.port, 'POST', path, { spec: {} }, 10_000);
    if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
    return JSON.parse(r.body.toString('utf8')).status.token;
  } finally {
    agent.destroy();
  }
}

export async function benchBearerTokens(dataDir: string, o: TokenBenchOptions): Promise<Row[]> {
  const population = o.quick ? 1_000 : 5_000;
  const count = o.quick ? 1_000 : 10_000;
  // The identity controllers would sign a token secret per account meanwhile; this row measures requests only.
  // Both users authorized alike (AlwaysAllow): the row weighs authentication; the cost of RBAC has rows of its own (bench/rbac.ts).
  const server = await startBenchServer({ dataDir, extraArgs: ['--controllers', '*,-serviceaccount-token,-root-ca-cert-publisher', '--authorization-mode', 'AlwaysAllow', ...(o.extraArgs ?? [])], entry: o.entry });
  const label = o.label ? `${o.label}: ` : '';
  const generators: LoadGenerator[] = [];
  try {
    const cert = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency });
    generators.push(cert);
    await cert.run({ kind: 'namespaces', names: [namespace] }, timeoutMs);
    o.progress(`tokens: ${fmtInt(population)} ServiceAccounts, gets with the certificate and with a bearer token, alternating…`);
    await cert.run({ kind: 'create', namespace, prefix: 'sa-', count: population, remember: false }, timeoutMs);
    const token = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency, bearerToken: await tokenFor(server, 'sa-00000') });
    generators.push(token);
    // Untimed first: JIT, the token's one signature check, sockets.
    const cell = rateCell;
    if (o.pairedRounds) {
      const rounds = o.pairedRounds;
      // Quick rounds of 1,000 (a fifth of a second) swung from 45 to 150 % on this shared machine: twice that here.
      const pairedCount = o.quick ? 2 * count : count;
      const paired = await pairedMedianGets(cert, token, { pid: server.pid, namespace, population, count: pairedCount, rounds, timeoutMs });
      const { first: c, second: t, ratio } = paired;
      o.progress(`tokens: certificate ${cell(c)}; bearer token ${cell(t)}; token/certificate per pair ${paired.ratios.map((r) => r.toFixed(2)).join(' ')}`);
      return [
        { metric: `${label}get ServiceAccount with the admin client certificate (median of ${rounds} rounds × ${fmtInt(pairedCount)}, paired with the row below)`, result: cell(c), target: '—' },
        {
          metric: `${label}get ServiceAccount with a service-account bearer token (median of ${rounds} rounds, each paired with a certificate round, the order swapped every other pair)`,
          result: `${cell(t)} · median of the pairs' token/certificate rates ${(ratio * 100).toFixed(0)} % (pairs: ${paired.ratios.map((r) => `${(r * 100).toFixed(0)} %`).join(', ')})`,
          target: target('≥ 0.9× the certificate\'s rate', ratio >= 0.9),
        },
      ];
    }
    const { cert: c, token: t } = await bestOfAlternatingGets({ cert, token }, { pid: server.pid, namespace, population, count, rounds: roundCount, timeoutMs });
    const share = t.perSec / c.perSec;
    o.progress(`tokens: certificate ${cell(c)}; bearer token ${cell(t)}; token/certificate ${share.toFixed(2)}`);
    return [
      { metric: `${label}get ServiceAccount with the admin client certificate (best of ${roundCount} × ${fmtInt(count)}, alternating with the row below)`, result: cell(c), target: '—' },
      {
        metric: `${label}get ServiceAccount with a service-account bearer token (best of ${roundCount} × ${fmtInt(count)})`,
        result: `${cell(t)} · ${(share * 100).toFixed(0)} % of the certificate's rate`,
        target: target(`within 10 % of the certificate's rate`, Math.abs(share - 1) <= within),
      },
    ];
  } finally {
    for (const g of generators) await g.close().catch(() => {});
    await server.stop(2000).catch(() => {});
  }
}
