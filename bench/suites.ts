// Every suite `npm run bench -- <suite>` runs, by name: the file that holds
// it, what it measures (bench/README.md's table says the same, with targets
// and last results), the flags it takes from the one table of bench/args.ts,
// and how it runs. A suite is imported only when it is the one asked for.
// The few suites whose owners keep their own argument parsing (`own`) run as
// a child process of their file with the rest of the command line as given.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlagName, ParsedArgs } from './args.js';
import type { Row } from './table.js';
import { targets } from './targets.js';

/** The clients of the suites that take a concurrency (as the full run gives them). */
const CONCURRENCY = 16;

interface SuiteBase {
  name: string;
  file: string;
  what: string;
}

export interface InProcessSuite extends SuiteBase {
  flags: readonly FlagName[];
  /** What it takes besides flags, for its usage line (`FILE`); without it, none. */
  operands?: string;
  /** Its rows (printed as the table, then the targets met and missed), or nothing when it printed its own result. */
  run: (args: ParsedArgs<FlagName>, progress: (m: string) => void) => Promise<Row[] | void>;
}

export interface OwnSuite extends SuiteBase {
  /** Its usage, as its file's head gives it (its flags are parsed there). */
  usage: string;
  /** Node's own flags the file needs. */
  nodeArgs?: readonly string[];
}

export type Suite = InProcessSuite | OwnSuite;

export const isOwn = (s: Suite): s is OwnSuite => 'usage' in s;

/** A suite given the flags it declares: its run sees exactly those. */
function suite<F extends FlagName>(s: SuiteBase & { flags: readonly F[]; operands?: string; run: (args: ParsedArgs<F>, progress: (m: string) => void) => Promise<Row[] | void> }): InProcessSuite {
  return s as unknown as InProcessSuite;
}

/** A temporary data root for suites that take one, removed afterwards unless kept. */
async function inTempDir<T>(prefix: string, keep: boolean, fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await fn(dir);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

export const suites: readonly Suite[] = [
  suite({
    name: 'all', file: 'full.ts', what: 'the full run: every suite marked "in run" in bench/README.md; the table to bench/results*.md',
    flags: ['quick', 'no-reads', 'no-memory', 'no-cache', 'no-store', 'cpu-prof', 'keep', 'backend'],
    run: async (a) => { await (await import('./full.js')).benchAll(a); },
  }),
  suite({
    name: 'writes', file: 'writes.ts', what: 'ConfigMap creates and unconditional PUTs against the no-work ceiling',
    flags: ['quick', 'rounds', 'cpu-prof', 'perf'],
    run: async (a, progress) => (await (await import('./writes.js')).benchWrites({ quick: a.quick, rounds: a.rounds, cpuProf: a['cpu-prof'], perf: a.perf, progress })).rows,
  }),
  suite({
    name: 'reads', file: 'reads.ts', what: 'lists of 10,000 ConfigMaps, RSS with them cached, one event to 1,000 watchers, a write soak',
    flags: ['quick', 'keep'],
    run: async (a, progress) => inTempDir('plat-bench-reads-', a.keep, async (dir) => (await import('./reads.js')).benchReads(dir, { quick: a.quick, progress })),
  }),
  suite({
    name: 'watchcache', file: 'watchcache.ts', what: 'in-process: one event to 1,000 cache watchers, lists from the cache',
    flags: [],
    run: async () => (await import('./full.js')).cacheRows(),
  }),
  suite({
    name: 'storage', file: 'storage.ts', what: 'raw SQLite and memory stores: concurrent creates, gets, paged ranges',
    flags: ['quick'],
    run: async (a) => (await import('./full.js')).storeRows(a.quick),
  }),
  suite({
    name: 'tokens', file: 'tokens.ts', what: 'gets with a service-account token beside the client certificate',
    flags: ['quick', 'keep'],
    run: async (a, progress) => inTempDir('plat-bench-tokens-', a.keep, async (dir) =>
      (await import('./tokens.js')).benchBearerTokens(dir, { quick: a.quick, concurrency: CONCURRENCY, progress })),
  }),
  suite({
    name: 'authn-external', file: 'authn-external.ts', what: 'gets with OIDC and webhook tokens beside the certificate',
    flags: ['quick'],
    run: async (a, progress) => (await import('./authn-external.js')).benchExternalAuthn({ quick: a.quick, concurrency: CONCURRENCY, progress }),
  }),
  suite({
    name: 'rbac', file: 'rbac.ts', what: "gets allowed by one RoleBinding among 1,000 beside an admin's",
    flags: ['quick', 'keep'],
    run: async (a, progress) => (await import('./rbac.js')).benchRbac({ quick: a.quick, concurrency: CONCURRENCY, progress, keep: a.keep }),
  }),
  suite({
    name: 'nodeauthz', file: 'nodeauthz.ts', what: "a node agent's get of a secret through the Node authorizer's graph beside an RBAC user's",
    flags: ['quick', 'keep'],
    run: async (a, progress) => (await import('./nodeauthz.js')).benchNodeAuthorizer({ quick: a.quick, concurrency: CONCURRENCY, progress, keep: a.keep }),
  }),
  suite({
    name: 'aggregator', file: 'aggregator.ts', what: 'a GET through the aggregator beside the same GET straight to the aggregated server',
    flags: ['quick', 'keep'],
    run: async (a, progress) => (await import('./aggregator.js')).benchAggregator({ quick: a.quick, concurrency: CONCURRENCY, progress, keep: a.keep }),
  }),
  suite({
    name: 'admission', file: 'admission.ts', what: 'creates with no webhook configuration, 10 non-matching, 1 matching',
    flags: ['quick'],
    run: async (a, progress) => (await import('./admission.js')).benchAdmission({ quick: a.quick, progress }),
  }),
  suite({
    name: 'audit', file: 'audit.ts', what: 'creates and gets with audit at Metadata to a file beside none',
    flags: ['quick'],
    run: async (a, progress) => (await import('./audit.js')).benchAudit({ quick: a.quick, progress }),
  }),
  suite({
    name: 'versions', file: 'versions.ts', what: 'gets of Events at a converted version beside the stored one',
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./versions.js')).benchVersions({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'deprecation', file: 'deprecation.ts', what: 'gets at a deprecated version beside a current one',
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./deprecation.js')).benchDeprecation({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'codec', file: 'codec.ts', what: 'stored-version reads, watch events and creates beside another build (by default the commit before versioned kinds)',
    flags: ['quick', 'rounds', 'baseline'],
    run: async (a, progress) => (await import('./codec.js')).benchCodec({ quick: a.quick, rounds: a.rounds, baseline: a.baseline, progress }),
  }),
  { name: 'writeroad', file: 'writeroad.ts', what: "upstream's write order beside the commit before it", usage: '[--quick] [--rounds N] [--baseline COMMIT | --baseline-dir BUILT_FOLDER]' },
  suite({
    name: 'schemavalidation', file: 'schemavalidation.ts', what: "validation from a schema beside a create's whole CPU",
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./schemavalidation.js')).benchSchemaValidation({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'namedgroups', file: 'namedgroups.ts', what: 'Ingress and the endpoints controllers beside ConfigMaps',
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./namedgroups.js')).benchNamedGroups({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'pods', file: 'pods.ts', what: 'Pods of realistic size beside ConfigMaps, watch fan-out of 500',
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./pods.js')).benchPods({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'deployments', file: 'deployments.ts', what: 'Deployments beside ConfigMaps',
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./deployments.js')).benchDeployments({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'customresources', file: 'customresources.ts', what: 'operator-schema custom objects beside ConfigMaps; a definition until served',
    flags: ['quick', 'rounds', 'perf'],
    run: async (a, progress) => (await import('./customresources.js')).benchCustomResources({ quick: a.quick, rounds: a.rounds, perf: a.perf, progress }),
  }),
  { name: 'operators', file: 'operators.ts', what: "the operators' CRDs installed; an HTTPRoute create beside a ConfigMap's", usage: '[--quick] | --routes [--quick] [--baseline COMMIT] [--cpu-prof] [--perf]' },
  suite({
    name: 'admission-plugins', file: 'admission-plugins.ts', what: 'Pod creates with the default plugin set beside every plugin off',
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./admission-plugins.js')).benchAdmissionPlugins({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'admissionpolicy', file: 'admissionpolicy.ts', what: 'Pod creates with one ValidatingAdmissionPolicy bound beside none',
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./admissionpolicy.js')).benchAdmissionPolicy({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'podsecurity', file: 'podsecurity.ts', what: 'Pod creates in an enforce=restricted namespace beside an unlabelled one',
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./podsecurity.js')).benchPodSecurity({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'namespacedelete', file: 'namespacedelete.ts', what: 'deleting a namespace of 10,000 objects with every controller running',
    flags: ['quick', 'cpu-prof'],
    run: async (a, progress) => (await import('./namespacedelete.js')).benchNamespaceDelete({ quick: a.quick, cpuProf: a['cpu-prof'], progress }),
  }),
  suite({
    name: 'client', file: 'client.ts', what: "this package's client CPU per get and watch event beside @kubernetes/client-node",
    flags: ['quick', 'rounds'],
    run: async (a, progress) => (await import('./client.js')).benchClient({ quick: a.quick, rounds: a.rounds, progress }),
  }),
  suite({
    name: 'memory', file: 'memory.ts', what: "RSS 30 s after each load; a restart holding 100,000 ConfigMaps; the event window's bound",
    flags: ['quick', 'heavy', 'light', 'keep'],
    run: async (a, progress) => inTempDir('plat-bench-memory-', a.keep, async (dir) =>
      (await import('./memory.js')).benchMemory(dir, { quick: a.quick, heavy: a.heavy || (!a.quick && !a.light), progress })),
  }),
  suite({
    name: 'selectors', file: 'selectors.ts', what: '1,000 filtered watchers beside 1,000 unfiltered',
    flags: ['quick', 'keep'],
    run: async (a, progress) => inTempDir('plat-bench-selectors-', a.keep, async (dir) => (await import('./selectors.js')).benchSelectors(dir, { quick: a.quick, progress })),
  }),
  suite({
    name: 'etcd', file: 'etcd.ts', what: 'the foundation load on a local etcd, one and two API servers (needs the etcd binary)',
    flags: ['quick', 'entry'],
    run: async (a, progress) => (await import('./etcd.js')).benchEtcd({ quick: a.quick, concurrency: CONCURRENCY, goals: targets.etcd, entry: a.entry, progress }),
  }),
  suite({
    name: 'etcd-builds', file: 'etcd-builds.ts', what: 'two builds on one etcd beside SQLite: CPU per create and consistent get',
    flags: ['base', 'rounds', 'count', 'perf', 'functions', 'keep-perf'],
    run: async (a, progress) => (await import('./etcd-builds.js')).benchEtcdBuilds({
      base: a.base, rounds: a.rounds ?? 5, perRound: a.count ?? 2_000, perf: a.perf, functions: a.functions, keepPerf: a['keep-perf'], progress,
    }),
  }),
  { name: 'restart', file: 'restart.ts', what: 'a restart holding 100,000 ConfigMaps, this build beside others, and where the start went', usage: '--data-dir DIR [--base CLI …] [--rounds 3] [--objects 100000] [--rss] [--node-arg=… …] [--server-arg=… …]' },
  suite({
    name: 'sqlite-drivers', file: 'sqlite-drivers.ts', what: 'better-sqlite3 beside node:sqlite: store rows and a server\'s creates and gets',
    flags: ['rounds'],
    run: async (a, progress) => (await import('./sqlite-drivers.js')).benchSqliteDrivers({ rounds: a.rounds ?? 5, progress }),
  }),
  { name: 'cluster-sim', file: 'cluster-sim.ts', what: 'a cluster at a fraction of upstream\'s envelope: node agents, leases, pod churn', usage: '[--scale 0.2] [--duration 60] [--baseline COMMIT [--baseline-entry CLI]]' },
  { name: 'pod-memory', file: 'pod-memory.ts', what: "one stored pod's memory, part by part", usage: '[--pods 30000]', nodeArgs: ['--expose-gc'] },
  suite({
    name: 'profile', file: 'profile.ts', what: 'a tool: the hot spots of a .cpuprofile file',
    flags: ['top'], operands: 'FILE',
    run: async (a) => {
      const [file] = a.positionals;
      if (!file || a.positionals.length > 1) throw new (await import('./args.js')).BenchArgsError('profile takes one .cpuprofile file');
      process.stdout.write((await import('./profile.js')).formatProfile(file, a.top ?? 30) + '\n');
    },
  }),
  suite({
    name: 'perfprofile', file: 'perfprofile.ts', what: 'a tool: where the CPU of a Linux perf recording went',
    flags: ['ops', 'top', 'functions'], operands: 'FILE',
    run: async (a) => {
      const [file] = a.positionals;
      const { BenchArgsError } = await import('./args.js');
      if (!file || a.positionals.length > 1) throw new BenchArgsError('perfprofile takes one perf.data file');
      if (a.ops === undefined) throw new BenchArgsError('perfprofile needs --ops N, the operations the recording covers');
      const { formatPerf, summarisePerf } = await import('./perfprofile.js');
      process.stdout.write(formatPerf(file, summarisePerf(file, a.ops, a.functions), a.top ?? 30) + '\n');
    },
  }),
];

export function findSuite(name: string): Suite | undefined {
  return suites.find((s) => s.name === name);
}
