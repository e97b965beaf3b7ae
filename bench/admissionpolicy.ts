// A Pod create with one ValidatingAdmissionPolicy of three validations bound
// to it, beside a Pod create the policy does not apply to, on one server
// (built CLI child, fresh sqlite data dir), in alternated rounds: the policy
// is bound to one namespace by its binding's namespace selector, and the
// other namespace's Pods meet no policy at all (their requests still ask the
// plugin, which finds the binding's selector does not select them). Each
// row is the median of its rounds, by server CPU per create.

import { sendJson } from './http.js';
import { cpuMsPrecise, settle } from './child.js';
import { withBenchServer } from './session.js';
import type { PhaseSpec } from './load-protocol.js';
import { medianRound, rateCell, type Measured } from './alternate.js';
import { Row, target } from './table.js';
import { fmtInt } from './stats.js';
import { pod } from './bodies.js';

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 300_000;
const bound = 'vap-bound';
const free = 'vap-free';
const api = '/apis/admissionregistration.k8s.io/v1';

const policy = {
  metadata: { name: 'pod-rules' },
  spec: {
    failurePolicy: 'Fail',
    matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'] }] },
    validations: [
      { expression: 'object.spec.containers.all(c, has(c.resources) && has(c.resources.limits))', message: 'every container needs resource limits' },
      { expression: '!has(object.spec.hostNetwork) || !object.spec.hostNetwork', message: 'host networking is not allowed' },
      { expression: 'object.metadata.name.size() <= 63', messageExpression: "'name too long: ' + object.metadata.name" },
    ],
  },
};

export async function benchAdmissionPolicy(opts: { quick: boolean; rounds?: number; progress: (m: string) => void }): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 300 : 2_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 5);
  return withBenchServer('plat-bench-vap-', CONCURRENCY, async ({ server: s, agent, load: gen }) => {
    for (const [name, labels] of [[bound, { policy: 'on' }], [free, {}]] as const) {
      const r = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name, labels } }, 10_000);
      if (r.status !== 201) throw new Error(`namespace ${name}: HTTP ${r.status}`);
    }
    for (const [path, body] of [[`${api}/validatingadmissionpolicies`, policy], [`${api}/validatingadmissionpolicybindings`, {
      metadata: { name: 'pod-rules' }, spec: { policyName: 'pod-rules', validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: { policy: 'on' } } } },
    }]] as const) {
      const r = await sendJson(agent, s.port, 'POST', path, body, 10_000);
      if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    }
    // The binding reaches the plugin through its informer: wait until a Pod on the host network is refused.
    const hostPod = { ...pod('host'), spec: { ...pod('host').spec, hostNetwork: true } };
    for (let tries = 0; ; tries++) {
      const r = await sendJson(agent, s.port, 'POST', `/api/v1/namespaces/${bound}/pods?dryRun=All`, hostPod, 10_000);
      if (r.status === 422) break;
      if (tries > 200) throw new Error(`the policy never took effect: HTTP ${r.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const measure = async (spec: PhaseSpec): Promise<Measured> => {
      const cpu0 = cpuMsPrecise(s.pid);
      const m = await gen.run(spec, PHASE_TIMEOUT_MS);
      await settle(s.pid);
      return { ...m, serverCpuMs: (cpuMsPrecise(s.pid) - cpu0) / m.requests };
    };
    // Warm-up: the expressions' closures are JIT-compiled on first use.
    await measure({ kind: 'create-pod', namespace: bound, prefix: 'w-', count: COUNT });
    await measure({ kind: 'create-pod', namespace: free, prefix: 'w-', count: COUNT });
    const with_: Measured[] = [];
    const without: Measured[] = [];
    progress(`admission policy: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} Pod creates with and without a bound policy…`);
    for (let round = 0; round < ROUNDS; round++) {
      const a = () => measure({ kind: 'create-pod', namespace: bound, prefix: `r${round}-`, count: COUNT }).then((m) => with_.push(m));
      const b = () => measure({ kind: 'create-pod', namespace: free, prefix: `r${round}-`, count: COUNT }).then((m) => without.push(m));
      for (const run of round % 2 ? [b, a] : [a, b]) await run();
      progress(`admission policy: round ${round}: ${with_.at(-1)!.serverCpuMs.toFixed(2)} ms with, ${without.at(-1)!.serverCpuMs.toFixed(2)} ms without, of server CPU each`);
    }
    const w = medianRound(with_);
    const n = medianRound(without);
    const ratio = n.serverCpuMs / w.serverCpuMs;
    return [
      { metric: 'Pod create with one ValidatingAdmissionPolicy of three validations bound', result: rateCell(w), target: 'reported' },
      { metric: 'Pod create with no policy bound (same run)', result: rateCell(n), target: 'reported' },
      { metric: 'Pod create with a bound policy vs none, server CPU per create', result: `${ratio.toFixed(2)}× the rate without`, target: target('≥ 0.8×', ratio >= 0.8) },
    ];
  });
}
