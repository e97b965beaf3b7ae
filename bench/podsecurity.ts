// What PodSecurity costs a Pod create: the realistic Pod of bench/bodies.ts
// (made to pass restricted: a RuntimeDefault seccomp profile added) created
// in a namespace labelled enforce=restricted, where every create runs every
// restricted check (enforce, then audit and warn reuse its result), and in
// an unlabelled one, where the plugin stops at the namespace's privileged
// policy. One server (built CLI child, fresh sqlite data dir); the two
// namespaces take turns round by round (the order swapped every other round)
// and each row is its median round by server CPU per request.

import { Agent } from 'node:https';
import { sendJson } from './http.js';
import { cpuMsPrecise, settle } from './child.js';
import { withBenchServer } from './session.js';
import { medianRound, rateCell, type Measured } from './alternate.js';
import { pod } from './bodies.js';
import { fmtInt, summarise } from './stats.js';
import type { Row } from './table.js';

export interface PodSecurityBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const TIMEOUT_MS = 30_000;
const namespaces = { plain: 'psa-plain', restricted: 'psa-restricted' } as const;
type Which = keyof typeof namespaces;

/** The bench Pod, with the one field restricted asks of it that it lacks. */
function restrictedPod(name: string): any {
  const body = pod(name);
  body.spec.securityContext = { seccompProfile: { type: 'RuntimeDefault' } };
  return body;
}

export async function benchPodSecurity(opts: PodSecurityBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 300 : 2_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 5);
  return withBenchServer('plat-bench-podsecurity-', CONCURRENCY, async ({ server: s, agent }) => {
    const labels: Record<Which, Record<string, string>> = { plain: {}, restricted: { 'pod-security.plat.io/enforce': 'restricted' } };
    for (const which of ['plain', 'restricted'] as const) {
      const r = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name: namespaces[which], labels: labels[which] } }, 10_000);
      if (r.status !== 201) throw new Error(`namespace ${namespaces[which]}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 200)}`);
    }
    const clients = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: s.creds.ca, cert: s.creds.cert, key: s.creds.key });
    try {
      let made = 0;
      /** `count` creates by CONCURRENCY clients; a create that is refused or warned about ends the bench (the pods must pass). */
      const creates = async (which: Which, count: number): Promise<Measured> => {
        const path = `/api/v1/namespaces/${namespaces[which]}/pods`;
        const latencies = new Float64Array(count);
        let next = 0;
        await settle(s.pid);
        const cpu0 = cpuMsPrecise(s.pid);
        const started = performance.now();
        await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
          while (next < count) {
            const i = next++;
            const t = performance.now();
            const r = await sendJson(clients, s.port, 'POST', path, restrictedPod(`p-${made++}`), TIMEOUT_MS);
            latencies[i] = performance.now() - t;
            if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
          }
        }));
        const elapsed = performance.now() - started;
        await settle(s.pid);
        return { ...summarise(latencies, elapsed), notes: {}, serverCpuMs: (cpuMsPrecise(s.pid) - cpu0) / count };
      };
      progress('podsecurity: warming both namespaces up…');
      for (const which of ['plain', 'restricted'] as const) await creates(which, Math.ceil(COUNT / 5));
      const rounds: Record<Which, Measured[]> = { plain: [], restricted: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const which of round % 2 ? (['restricted', 'plain'] as const) : (['plain', 'restricted'] as const)) rounds[which].push(await creates(which, COUNT));
        progress(`podsecurity: round ${round}: unlabelled ${rounds.plain.at(-1)!.serverCpuMs.toFixed(3)} ms, enforce=restricted ${rounds.restricted.at(-1)!.serverCpuMs.toFixed(3)} ms of server CPU per create`);
      }
      const plain = medianRound(rounds.plain);
      const restricted = medianRound(rounds.restricted);
      const overheadPct = ((restricted.serverCpuMs - plain.serverCpuMs) / plain.serverCpuMs) * 100;
      return [
        { metric: `PodSecurity: create a Pod in an unlabelled namespace (median of ${ROUNDS} rounds of ${fmtInt(COUNT)} POSTs, ${CONCURRENCY} clients)`, result: rateCell(plain), target: '—' },
        {
          metric: `PodSecurity: create the same Pod in a namespace labelled enforce=restricted (median of ${ROUNDS} rounds, alternating with the row above)`,
          result: `${rateCell(restricted)} (${overheadPct >= 0 ? '+' : ''}${overheadPct.toFixed(1)} % server CPU vs. unlabelled)`,
          target: '—',
        },
      ];
    } finally {
      clients.destroy();
    }
  });
}
