// What admission webhooks cost, on a server of their own (built CLI child,
// fresh sqlite data dir): ServiceAccount creates with no webhook
// configuration, with ten validating configurations that do not match them,
// and with one that matches and calls an HTTPS webhook in this process
// answering at once. Plain and non-matching phases run in the order
// plain, non-matching, non-matching, plain and each figure is the mean of its
// two runs, so that a server still warming up or a neighbour's burst on the
// shared CPUs favours neither; the target compares server CPU per request,
// steadier than req/s.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateEcKeyPair, issueCertificate } from '../src/pki/index.js';
import { vocabulary } from '../src/machinery/vocabulary.js';
import { sendJson } from './http.js';
import { BenchServer, cpuMs, startBenchServer } from './child.js';
import { LoadGenerator, PhaseResult } from './load.js';
import { fmtInt, fmtCpu, fmtMs } from './stats.js';
import { Row, target } from './table.js';

export interface AdmissionBenchOptions {
  quick: boolean;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 120_000;
const NON_MATCHING = 10;
const goalOverheadPct = 5;
const group = vocabulary.admissionRegistrationGroup;
const configurations = `/apis/${group}/v1/validatingwebhookconfigurations`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Measured extends PhaseResult {
  serverCpuMs: number;
}

/** An HTTPS webhook that allows everything at once, with a CA of its own; counts its calls. */
async function startWebhook(): Promise<{ server: Server; port: number; caBundle: string; calls: () => number }> {
  const caKeys = await generateEcKeyPair();
  const caCert = await issueCertificate({ commonName: 'bench webhook CA', usages: ['digital signature', 'cert sign'], isCA: true, publicKey: caKeys.publicKeyPem, issuerKeyPem: caKeys.privateKeyPem });
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName: 'bench webhook', ipAddresses: ['127.0.0.1'], usages: ['digital signature', 'key encipherment', 'server auth'],
    publicKey: keys.publicKeyPem, issuerKeyPem: caKeys.privateKeyPem, issuerCertPem: caCert,
  });
  let calls = 0;
  const server = createServer({ key: keys.privateKeyPem, cert, keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls++;
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const body = JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, caBundle: Buffer.from(caCert).toString('base64'), calls: () => calls };
}

function configuration(name: string, resources: string[], url: string, caBundle: string) {
  return {
    apiVersion: `${group}/v1`, kind: 'ValidatingWebhookConfiguration', metadata: { name },
    webhooks: [{
      name: `${name}.bench.example.com`, clientConfig: { url, caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources }],
      sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Fail', timeoutSeconds: 5,
    }],
  };
}

export async function benchAdmission(opts: AdmissionBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 500 : 5_000;
  const WARMUP = quick ? 1_000 : 5_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-admission-'));
  let server: BenchServer | undefined;
  let load: LoadGenerator | undefined;
  let agent: Agent | undefined;
  const webhook = await startWebhook();
  try {
    server = await startBenchServer({ dataDir });
    const s = server;
    agent = new Agent({ keepAlive: true, maxSockets: 1, ca: s.creds.ca, cert: s.creds.cert, key: s.creds.key });
    const a = agent;
    const send = async (method: string, path: string, body?: unknown, expect = [200, 201]) => {
      const r = await sendJson(a, s.port, method, path, body, 10_000);
      if (!expect.includes(r.status)) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    };
    load = new LoadGenerator({ url: s.url, creds: s.creds, concurrency: CONCURRENCY });
    const gen = load;
    const names = ['adm-warm', 'adm-plain-1', 'adm-plain-2', 'adm-nomatch-1', 'adm-nomatch-2', 'adm-match'];
    await gen.run({ kind: 'namespaces', names }, PHASE_TIMEOUT_MS);
    const creates = async (namespace: string, count = COUNT): Promise<Measured> => {
      const cpu0 = cpuMs(s.pid);
      const r = await gen.run({ kind: 'create', namespace, prefix: 'sa-', count, remember: false }, PHASE_TIMEOUT_MS);
      return { ...r, serverCpuMs: (cpuMs(s.pid) - cpu0) / r.requests };
    };
    await creates('adm-warm', WARMUP);

    const url = `https://127.0.0.1:${webhook.port}/validate`;
    const mean = (x: Measured, y: Measured): Measured => ({
      ...x, requests: x.requests + y.requests, perSec: (x.perSec + y.perSec) / 2, p50ms: (x.p50ms + y.p50ms) / 2,
      p99ms: (x.p99ms + y.p99ms) / 2, serverCpuMs: (x.serverCpuMs + y.serverCpuMs) / 2,
    });
    progress(`admission: ${fmtInt(COUNT)} creates with no webhook configuration…`);
    const plain1 = await creates('adm-plain-1');
    progress(`admission: 2 × ${fmtInt(COUNT)} creates with ${NON_MATCHING} validating configurations that do not match…`);
    for (let i = 0; i < NON_MATCHING; i++) await send('POST', configurations, configuration(`other-${i}`, ['configmaps'], url, webhook.caBundle));
    await sleep(1_000); // configurations take effect within a second; these never call, so nothing to watch for
    const nomatch = mean(await creates('adm-nomatch-1'), await creates('adm-nomatch-2'));
    for (let i = 0; i < NON_MATCHING; i++) await send('DELETE', `${configurations}/other-${i}`);
    await sleep(1_000);
    progress(`admission: ${fmtInt(COUNT)} creates with no webhook configuration again…`);
    const plain = mean(plain1, await creates('adm-plain-2'));
    progress(`admission: plain ${fmtMs(plain.serverCpuMs)}/req, non-matching ${fmtMs(nomatch.serverCpuMs)}/req server CPU`);

    progress('admission: the same with one matching validating webhook over HTTPS…');
    await send('POST', configurations, configuration('matching', ['serviceaccounts'], url, webhook.caBundle));
    const deadline = Date.now() + 10_000;
    while (webhook.calls() === 0) {
      if (Date.now() > deadline) throw new Error('the matching webhook was never called');
      await send('POST', '/api/v1/namespaces/adm-warm/serviceaccounts?dryRun=All', { metadata: { generateName: 'probe-' } });
      await sleep(20);
    }
    const before = webhook.calls();
    const matching = await creates('adm-match');
    if (webhook.calls() - before !== matching.requests) throw new Error(`the webhook saw ${webhook.calls() - before} of ${matching.requests} creates`);

    const cell = (m: Measured, base?: Measured) => {
      const over = base ? ` (${overhead(m, base)} server CPU vs. no configuration)` : '';
      return `${fmtInt(m.perSec)} req/s · p50 ${fmtMs(m.p50ms)} · p99 ${fmtMs(m.p99ms)} · server CPU ${fmtCpu(m.serverCpuMs)}/req${over}`;
    };
    const overheadPct = ((nomatch.serverCpuMs - plain.serverCpuMs) / plain.serverCpuMs) * 100;
    return [
      { metric: `admission: create ServiceAccount, no webhook configuration (2 × ${fmtInt(COUNT)} POSTs, ${CONCURRENCY} clients, mean)`, result: cell(plain), target: '—' },
      {
        metric: `admission: create ServiceAccount, ${NON_MATCHING} non-matching validating webhook configurations (2 × ${fmtInt(COUNT)} POSTs, mean)`,
        result: cell(nomatch, plain),
        target: target(`< ${goalOverheadPct} % server CPU over no configuration`, overheadPct < goalOverheadPct),
      },
      { metric: `admission: create ServiceAccount, 1 matching validating webhook (HTTPS, answers at once; ${fmtInt(COUNT)} POSTs)`, result: cell(matching, plain), target: '—' },
    ];
  } finally {
    agent?.destroy();
    await load?.close().catch(() => {});
    await server?.stop(2000).catch(() => {});
    webhook.server.closeAllConnections();
    await new Promise<void>((resolve) => webhook.server.close(() => resolve()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function overhead(m: Measured, base: Measured): string {
  const pct = ((m.serverCpuMs - base.serverCpuMs) / base.serverCpuMs) * 100;
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %`;
}
