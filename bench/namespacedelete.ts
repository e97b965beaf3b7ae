// How long deleting a namespace takes when it holds 10,000 objects
// (ConfigMaps, Secrets and ServiceAccounts in turn; each ServiceAccount gets a
// token Secret of its own from the token controller, so there is more to
// delete than was created), on a server of its own (built CLI child, fresh
// SQLite data dir). The clock runs from the DELETE to the namespace's GET
// answering 404; /readyz is polled every 100 ms meanwhile and every failure
// is counted. Runs standalone too: npm run bench -- namespacedelete [--quick] [--cpu-prof]

import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'node:https';
import { vocabulary } from '../src/machinery/vocabulary.js';
import { sendJson } from './http.js';
import { BenchServer, cpuMs, startBenchServer } from './child.js';
import { formatProfile } from './profile.js';
import { fmtInt, fmtMs } from './stats.js';
import { Row, target } from './table.js';

export interface NamespaceDeleteBenchOptions {
  quick: boolean;
  progress: (msg: string) => void;
  /** Profile the server's CPU and print its hot spots to stderr. */
  cpuProf?: boolean;
}

const CONCURRENCY = 16;
/** The duration before the shared controller kit (issue 32), on the reference machine. */
const beforeMs = 40_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kinds = [
  { resource: 'configmaps', body: (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { key: 'value' } }) },
  { resource: 'secrets', body: (name: string) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', data: { key: 'dmFsdWU=' } }) },
  { resource: 'serviceaccounts', body: (name: string) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }) },
];

export async function benchNamespaceDelete(opts: NamespaceDeleteBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const OBJECTS = quick ? 1_000 : 10_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-nsdelete-'));
  let server: BenchServer | undefined;
  const agents: Agent[] = [];
  try {
    const profDir = join(dataDir, 'profiles');
    server = await startBenchServer({ dataDir, nodeArgs: opts.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [] });
    const s = server;
    const agent = () => {
      const a = new Agent({ keepAlive: true, maxSockets: 1, ca: s.creds.ca, cert: s.creds.cert, key: s.creds.key });
      agents.push(a);
      return a;
    };
    const send = async (a: Agent, method: string, path: string, body?: unknown, expect = [200, 201, 202]) => {
      const r = await sendJson(a, s.port, method, path, body, 30_000);
      if (!expect.includes(r.status)) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
      return r.status;
    };
    const ns = 'bench-nsdelete';
    const main = agent();
    await send(main, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    progress(`namespace deletion: creating ${fmtInt(OBJECTS)} ConfigMaps, Secrets and ServiceAccounts…`);
    let next = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      const a = agent();
      for (let i = next++; i < OBJECTS; i = next++) {
        const kind = kinds[i % kinds.length]!;
        await send(a, 'POST', `/api/v1/namespaces/${ns}/${kind.resource}`, kind.body(`obj-${String(i).padStart(5, '0')}`));
      }
    }));
    // Let the token controller catch up, so that the deletion starts from a settled namespace.
    // Counted from a whole list: with a selector the server gives no remainingItemCount (as upstream), so a page of one cannot say.
    const tokenSecrets = async () => {
      const r = await sendJson(main, s.port, 'GET', `/api/v1/namespaces/${ns}/secrets?fieldSelector=type%3D${encodeURIComponent(vocabulary.serviceAccountTokenSecretType)}`, undefined, 30_000);
      return (JSON.parse(r.body.toString('utf8')).items as unknown[] | undefined)?.length ?? 0;
    };
    // The i-th object is of kinds[i % 3]; and `default`.
    const accountIndex = kinds.findIndex((k) => k.resource === 'serviceaccounts');
    const accounts = Math.floor((OBJECTS - accountIndex - 1) / kinds.length) + 1 + 1;
    for (let waited = 0; (await tokenSecrets()) < accounts && waited < 60_000; waited += 500) await sleep(500);

    progress('namespace deletion: deleting the namespace…');
    const probe = agent();
    let polls = 0;
    let failures = 0;
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const started = performance.now();
        polls++;
        try {
          if ((await sendJson(probe, s.port, 'GET', '/readyz', undefined, 5_000)).status !== 200) failures++;
        } catch {
          failures++;
        }
        await sleep(Math.max(0, 100 - (performance.now() - started)));
      }
    })();
    const cpu0 = cpuMs(s.pid);
    const t0 = performance.now();
    await send(main, 'DELETE', `/api/v1/namespaces/${ns}`);
    while ((await sendJson(main, s.port, 'GET', `/api/v1/namespaces/${ns}`, undefined, 30_000)).status !== 404) {
      if (performance.now() - t0 > 600_000) throw new Error('the namespace was not gone after 10 minutes');
      await sleep(100);
    }
    const elapsed = performance.now() - t0;
    const cpu = cpuMs(s.pid) - cpu0;
    probing = false;
    await prober;
    progress(`namespace deletion: ${fmtMs(elapsed)}, server CPU ${fmtMs(cpu)}, /readyz ${failures} failures in ${polls} polls`);
    const goalMs = beforeMs / 2;
    return [{
      metric: `namespace deletion: a namespace of ${fmtInt(OBJECTS)} ConfigMaps, Secrets and ServiceAccounts (plus their token Secrets), DELETE to 404`,
      result: `${fmtMs(elapsed)} · server CPU ${fmtMs(cpu)} · /readyz failed ${failures} of ${polls} polls (every 100 ms)`,
      target: quick ? '—' : target(`≤ ${fmtMs(goalMs)} (half of ${fmtMs(beforeMs)} before the controller kit), /readyz never failing`, elapsed <= goalMs && failures === 0),
    }];
  } finally {
    for (const a of agents) a.destroy();
    await server?.stop();
    if (opts.cpuProf && existsSync(join(dataDir, 'profiles'))) {
      for (const f of readdirSync(join(dataDir, 'profiles'))) progress(formatProfile(join(dataDir, 'profiles', f), 30));
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}
