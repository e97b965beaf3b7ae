// Feature gates and metric stability as a user of the server sees them: a
// gate turned off changes what the server does (StorageVersionHash:
// discovery without hashes), /metrics shows each gate's state and stage, a
// bad gate or a bad --show-hidden-metrics-for-version stops the command with
// one line, metric help texts carry their stability, and a metric deprecated
// in the previous release is hidden unless the flag names that release.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Counter } from 'prom-client';
import { startTestServer, tempDir, type TestServer, cliPath } from '../support/server.js';
import { parsePrometheusText, value } from '../support/prometheus.js';
import { declareMetric } from '../../src/machinery/metricdeclaration.js';
import { product } from '../../src/machinery/vocabulary.js';

const featureMetric = `${product.name}_feature_enabled`;

async function withServer(options: Parameters<typeof startTestServer>[0], body: (s: TestServer) => Promise<void>): Promise<void> {
  const s = await startTestServer(options);
  try {
    await body(s);
  } finally {
    await s.close();
  }
}

const metricsText = async (s: TestServer) => (await s.client.get('/metrics')).text;

test('StorageVersionHash: on by default, turned off discovery lists no storage version hashes; /metrics shows each gate', async () => {
  await withServer({}, async (s) => {
    const configmaps = (await s.client.get('/api/v1')).json.resources.find((r: any) => r.name === 'configmaps');
    assert.equal(typeof configmaps.storageVersionHash, 'string');
    const families = parsePrometheusText(await metricsText(s));
    assert.equal(value(families, featureMetric, { name: 'StorageVersionHash', stage: 'BETA' }), 1);
    assert.equal(value(families, featureMetric, { name: 'AggregatedDiscoveryEndpoint', stage: '' }), 1);
  });
  await withServer({ featureGates: [['StorageVersionHash', false]] }, async (s) => {
    const configmaps = (await s.client.get('/api/v1')).json.resources.find((r: any) => r.name === 'configmaps');
    assert.equal(configmaps.storageVersionHash, undefined);
    assert.equal(value(parsePrometheusText(await metricsText(s)), featureMetric, { name: 'StorageVersionHash', stage: 'BETA' }), 0);
  });
});

/** The command's exit code and what it printed, when it does not start. */
function refusedStart(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cliPath, '--secure-port', '0', '--data-dir', tempDir(), '--storage-backend', 'memory', ...args], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 30_000 });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

test('the command refuses, in one line, an unknown gate, a locked gate turned off, a removed version and a hidden-metrics release other than the previous one', async () => {
  const cases: [string[], string][] = [
    [['--feature-gates=NoSuchGate=true'], '--feature-gates: unrecognized feature gate: NoSuchGate'],
    [['--feature-gates', 'APIListChunking=false'], '--feature-gates: cannot set feature gate APIListChunking to false, feature is locked to true'],
    [['--runtime-config=batch/v1beta1=true'], '--runtime-config names batch/v1beta1, which was removed in v1.25 (use batch/v1 instead)'],
    [['--show-hidden-metrics-for-version=1.30'], "--show-hidden-metrics-for-version must be omitted or have the value '1.31'. Only the previous minor version is allowed"],
  ];
  // The commands start side by side: each is a whole process start that ends in the refusal.
  const answers = await Promise.all(cases.map(([args]) => refusedStart(args)));
  for (const [i, [args, line]] of cases.entries()) {
    const r = answers[i]!;
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(r.stderr.trim().split('\n').some((l) => l.endsWith(line)), `${args.join(' ')}: ${r.stderr}`);
  }
});

test('help texts carry the stability of each metric', async () => {
  await withServer({}, async (s) => {
    const text = await metricsText(s);
    assert.match(text, /^# HELP apiserver_request_total \[STABLE\] Counter of apiserver requests/m);
    assert.match(text, /^# HELP apiserver_watch_events_total \[ALPHA\] /m);
    assert.match(text, new RegExp(`^# HELP ${featureMetric} \\[BETA\\] `, 'm'));
  });
});

/** Declares, on the running server, a metric deprecated in 1.31 and one deprecated in 1.32 (this release); answers the /metrics text. */
async function withDeprecatedMetrics(s: TestServer): Promise<string> {
  new Counter(declareMetric(s.metricRegistry, { name: 'test_deprecated_last_release_total', help: 'Deprecated one release ago.', deprecatedVersion: '1.31.0' })).inc();
  new Counter(declareMetric(s.metricRegistry, { name: 'test_deprecated_this_release_total', help: 'Deprecated in this release.', deprecatedVersion: '1.32.0', stability: 'STABLE' })).inc();
  return metricsText(s);
}

test('a metric deprecated in the previous release is hidden; one deprecated in this release says so in its help', async () => {
  await withServer({}, async (s) => {
    const text = await withDeprecatedMetrics(s);
    assert.doesNotMatch(text, /test_deprecated_last_release_total/);
    assert.match(text, /^# HELP test_deprecated_this_release_total \[STABLE\] \(Deprecated since 1\.32\.0\) Deprecated in this release\.$/m);
    assert.match(text, /^test_deprecated_this_release_total 1$/m);
  });
});

test('--show-hidden-metrics-for-version with the previous minor shows the metrics it deprecated', async () => {
  await withServer({ showHiddenMetricsForVersion: '1.31' }, async (s) => {
    const text = await withDeprecatedMetrics(s);
    assert.match(text, /^# HELP test_deprecated_last_release_total \[ALPHA\] \(Deprecated since 1\.31\.0\) Deprecated one release ago\.$/m);
    assert.match(text, /^test_deprecated_last_release_total 1$/m);
  });
});
