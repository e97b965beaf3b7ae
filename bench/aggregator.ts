// A GET through the aggregator against the same GET sent straight to the
// aggregated server (test/support/aggregated.ts, in this process), rounds
// alternating: what the aggregator adds (authentication, authorization, the
// proxy hop over TLS) at the median, against the backend's own latency. The
// target: it adds at most 1.5× the backend's own median.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'node:https';
import { startBenchServer } from './child.js';
import { bestOfAlternatingGets, rateCell } from './alternate.js';
import { createAll } from './rbac.js';
import { sendJson } from './http.js';
import { LoadGenerator } from './load.js';
import { fmtInt, fmtMs } from './stats.js';
import { target, type Row } from './table.js';
import { startAggregatedServer, wardle } from '../test/support/aggregated.js';
import { keyMaterialPaths } from '../src/pki/index.js';
import { vocabulary } from '../src/machinery/vocabulary.js';

export interface AggregatorBenchOptions {
  quick: boolean;
  concurrency: number;
  progress: (msg: string) => void;
  keep?: boolean;
}

const timeoutMs = 120_000;
const roundCount = 3;
const addedAtMost = 1.5;

export async function benchAggregator(o: AggregatorBenchOptions): Promise<Row[]> {
  const count = o.quick ? 1_000 : 10_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-aggregator-'));
  const server = await startBenchServer({ dataDir, extraArgs: ['--controllers', '*,-serviceaccount-token,-root-ca-cert-publisher'] });
  const agent = new Agent({ keepAlive: true, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
  const generators: LoadGenerator[] = [];
  let backend: Awaited<ReturnType<typeof startAggregatedServer>> | undefined;
  try {
    o.progress('aggregator: an aggregated server registered through an ExternalName Service; GETs through the aggregator and straight to it, alternating…');
    let trust = { requestHeaderCaPem: '', allowedNames: [] as string[] };
    for (let tries = 0; !trust.requestHeaderCaPem; tries++) {
      const r = await sendJson(agent, server.port, 'GET', `/api/v1/namespaces/${vocabulary.systemNamespace}/configmaps/${vocabulary.extensionApiserverAuthentication}`, undefined, 10_000);
      if (r.status === 200) {
        const data = JSON.parse(r.body.toString('utf8')).data;
        trust = { requestHeaderCaPem: data['requestheader-client-ca-file'], allowedNames: JSON.parse(data['requestheader-allowed-names']) };
      } else if (tries > 100) throw new Error(`no extension-apiserver-authentication ConfigMap: HTTP ${r.status}`);
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    backend = await startAggregatedServer('api', 'wardle', () => trust);
    await createAll(server, '/api/v1/namespaces', [{ metadata: { name: 'wardle' } }]);
    await createAll(server, '/api/v1/namespaces/wardle/services', [{ metadata: { name: 'api' }, spec: { type: 'ExternalName', externalName: 'localhost' } }]);
    await createAll(server, `/apis/${vocabulary.apiregistrationGroup}/v1/apiservices`, [{
      metadata: { name: `${wardle.version}.${wardle.group}` },
      spec: { group: wardle.group, version: wardle.version, service: { namespace: 'wardle', name: 'api', port: backend.port }, caBundle: backend.caBundle, groupPriorityMinimum: 1000, versionPriority: 15 },
    }]);
    const collectionPath = `/apis/${wardle.group}/${wardle.version}/namespaces/wardle/flunders`;
    const pki = keyMaterialPaths(dataDir);
    // Straight to the backend, as the aggregator itself would call it (its client certificate), with no user headers.
    const direct = new LoadGenerator({
      url: `https://127.0.0.1:${backend.port}`, concurrency: o.concurrency,
      creds: { ca: backend.ca.cert, cert: readFileSync(pki.frontProxyClientCert, 'utf8'), key: readFileSync(pki.frontProxyClientKey, 'utf8') },
    });
    const proxied = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency });
    generators.push(direct, proxied);
    // The APIService is available a moment after it is created: until then the proxied gets fail.
    for (let tries = 0; ; tries++) {
      try {
        await proxied.run({ kind: 'get', namespace: 'wardle', prefix: 'sa-', population: 100, count: 20, seed: tries, collectionPath }, timeoutMs);
        break;
      } catch (e) {
        if (tries >= 100) throw e;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    const { direct: d, proxied: p } = await bestOfAlternatingGets({ direct, proxied }, { pid: server.pid, namespace: 'wardle', population: 100, count, rounds: roundCount, timeoutMs, collectionPath });
    const added = p.p50ms - d.p50ms;
    const share = added / d.p50ms;
    o.progress(`aggregator: direct p50 ${fmtMs(d.p50ms)}; proxied p50 ${fmtMs(p.p50ms)}; added ${share.toFixed(2)}× the backend's median`);
    return [
      { metric: `GET of an aggregated object straight from its server (best of ${roundCount} × ${fmtInt(count)}, alternating with the row below)`, result: `${fmtInt(d.perSec)} req/s · p50 ${fmtMs(d.p50ms)} · p99 ${fmtMs(d.p99ms)}`, target: '—' },
      {
        metric: `GET of the same object through the aggregator (authentication, authorization, TLS hop; best of ${roundCount} × ${fmtInt(count)})`,
        result: `${rateCell(p)} · adds ${fmtMs(added)} at the median, ${share.toFixed(2)}× the backend's`,
        target: target(`adds at most ${addedAtMost}× the backend's median`, share <= addedAtMost),
      },
    ];
  } finally {
    for (const g of generators) await g.close().catch(() => {});
    agent.destroy();
    await backend?.close();
    await server.stop(2000).catch(() => {});
    if (!o.keep) rmSync(dataDir, { recursive: true, force: true });
  }
}
