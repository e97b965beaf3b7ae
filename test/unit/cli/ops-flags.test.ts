// The operating flags: limits, audit, start and stop, and -v/--v as upstream spells it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError, helpText, parseFlags } from '../../../src/cli/flags.js';

function options(...argv: string[]) {
  const parsed = parseFlags(argv);
  assert.ok('options' in parsed);
  return parsed.options;
}

test('-v and --v set the verbosity in every spelling', () => {
  assert.equal(options().verbosity, 0);
  assert.equal(options('-v', '3').verbosity, 3);
  assert.equal(options('-v=4').verbosity, 4);
  assert.equal(options('--v', '5').verbosity, 5);
  assert.equal(options('--v=2').verbosity, 2);
  assert.throws(() => parseFlags(['-v', 'loud']), FlagError);
  assert.throws(() => parseFlags(['--v=-1']), /must not be negative/);
});

test('limits, audit and shutdown flags reach the options with upstream defaults', () => {
  const d = options();
  assert.equal(d.maxRequestsInflight, 400);
  assert.equal(d.maxMutatingRequestsInflight, 200);
  assert.equal(d.requestTimeoutMs, 60_000);
  assert.equal(d.auditLogFormat, 'json');
  assert.equal(d.auditWebhookBatchMaxSize, 400);
  assert.equal(d.auditWebhookBatchBufferSize, 10_000);
  assert.equal(d.auditWebhookBatchMaxWaitMs, 30_000);
  // Upstream's webhook defaults: retries from 10 s, at most 10 batches a second in bursts of 15.
  assert.deepEqual([d.auditWebhookInitialBackoffMs, d.auditWebhookBatchThrottleEnable, d.auditWebhookBatchThrottleQps, d.auditWebhookBatchThrottleBurst], [10_000, true, 10, 15]);
  const unthrottled = options('--audit-webhook-batch-throttle-enable=false', '--audit-webhook-batch-initial-backoff', '1s');
  assert.deepEqual([unthrottled.auditWebhookBatchThrottleEnable, unthrottled.auditWebhookInitialBackoffMs], [false, 1000]);
  assert.throws(() => parseFlags(['--audit-webhook-batch-throttle-qps', 'fast']), /not a number/);
  assert.throws(() => parseFlags(['--audit-webhook-batch-throttle-qps=-1']), /must not be negative/);
  const o = options(
    '--max-requests-inflight', '10', '--max-mutating-requests-inflight=0', '--audit-policy-file', 'p.yaml', '--audit-log-path', '-',
    '--audit-log-format', 'legacy', '--audit-log-maxage', '7', '--audit-log-maxbackup', '3', '--audit-log-maxsize', '100',
    '--audit-webhook-config-file', 'w.kubeconfig', '--audit-webhook-batch-max-size', '5', '--audit-webhook-batch-max-wait', '2s',
    '--audit-webhook-batch-buffer-size', '50', '--livez-grace-period', '1m', '--shutdown-delay-duration', '5s',
    '--shutdown-send-retry-after', '--shutdown-watch-termination-grace-period', '10s',
  );
  assert.equal(o.maxRequestsInflight, 10);
  assert.equal(o.maxMutatingRequestsInflight, 0);
  assert.equal(o.auditPolicyFile, 'p.yaml');
  assert.equal(o.auditLogPath, '-');
  assert.equal(o.auditLogFormat, 'legacy');
  assert.deepEqual([o.auditLogMaxAge, o.auditLogMaxBackup, o.auditLogMaxSize], [7, 3, 100]);
  assert.equal(o.auditWebhookConfigFile, 'w.kubeconfig');
  assert.deepEqual([o.auditWebhookBatchMaxSize, o.auditWebhookBatchMaxWaitMs, o.auditWebhookBatchBufferSize], [5, 2000, 50]);
  assert.deepEqual([o.livezGracePeriodMs, o.shutdownDelayDurationMs, o.shutdownSendRetryAfter, o.shutdownWatchTerminationGracePeriodMs], [60_000, 5000, true, 10_000]);
  assert.throws(() => parseFlags(['--audit-log-format', 'xml']), /must be one of json, legacy/);
  assert.throws(() => parseFlags(['--max-requests-inflight', '-3']), /must not be negative/);
  assert.match(helpText(), /-v, --v int/);
  assert.match(helpText(), /--audit-policy-file string/);
});
