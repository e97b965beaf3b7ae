// The workload kinds without a server (apps/v1, batch/v1, autoscaling v1 and
// v2): upstream's defaults, validation messages in tables, the CronJob
// schedule parser's texts, the v1 view of a v2 autoscaler, and round trips
// of full objects through JSON, YAML and protobuf.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { decodeObject } from '../../../src/api/decode.js';
import { readJson, readYaml } from '../../../src/api/wire.js';
import { builtinSchemaLookup, decodeProtobufObject, encodeProtobufObject } from '../../../src/api/protobuf/index.js';
import { builtinKinds } from '../../../src/api/catalog.js';
import { codecsOf } from '../../../src/api/codec.js';
import type { KindDefinition, KubeObject } from '../../../src/api/kind.js';
import { controllerRevisions, daemonSets, deployments, replicaSets, statefulSets } from '../../../src/api/apps/v1/index.js';
import { cronJobs, jobs } from '../../../src/api/batch/v1/index.js';
import { horizontalPodAutoscalers } from '../../../src/api/autoscaling/index.js';
import { scheduleError } from '../../../src/api/batch/v1/cron.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';

type Obj = Record<string, any>;

/** Decoded, defaulted and prepared as a create would: the object validation sees. */
function created(kind: KindDefinition, obj: Obj): KubeObject {
  const o = decodeObject(kind, { apiVersion: kind.group ? `${kind.group}/${kind.version}` : kind.version, kind: kind.kind, ...obj }, { fieldValidation: 'Strict', warnings: [] });
  o.metadata = { name: 'x', namespace: 'default', uid: 'u-1', ...o.metadata };
  kind.strategy.defaults?.(o);
  kind.strategy.prepareForCreate?.(o);
  kind.strategy.defaults?.(o);
  return o;
}
const createMessages = (kind: KindDefinition, obj: Obj) => kind.strategy.validate!(created(kind, obj)).map((e) => e.describe());
const updateMessages = (kind: KindDefinition, old: KubeObject, change: (o: Obj) => void) => {
  const next = structuredClone(old);
  change(next);
  return kind.strategy.validateUpdate!(next, old).map((e) => e.describe());
};

const container = { name: 'c', image: 'nginx' };
const template = (labels: Obj = { app: 'web' }, spec: Obj = {}) => ({ metadata: { labels }, spec: { containers: [container], ...spec } });
const deploymentSpec = (extra: Obj = {}) => ({ spec: { selector: { matchLabels: { app: 'web' } }, template: template(), ...extra } });

test('Deployment defaults as upstream: one replica, RollingUpdate 25%/25%, history 10, progress deadline 600', () => {
  const d = created(deployments, deploymentSpec());
  assert.deepEqual(
    [d.spec.replicas, d.spec.strategy, d.spec.revisionHistoryLimit, d.spec.progressDeadlineSeconds, d.spec.template.spec.restartPolicy, d.status],
    [1, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } }, 10, 600, 'Always', {}],
  );
  const recreate = created(deployments, deploymentSpec({ strategy: { type: 'Recreate' } }));
  assert.deepEqual(recreate.spec.strategy, { type: 'Recreate' });
});

test('Deployment and ReplicaSet validation: upstream\'s messages, table-driven', () => {
  const table: [string, Obj, string[]][] = [
    ['a valid deployment', deploymentSpec(), []],
    ['no selector', { spec: { template: template() } }, ['spec.selector: Required value']],
    ['an empty selector', deploymentSpec({ selector: {} }), [
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    ]],
    ['selector and labels differ', deploymentSpec({ template: template({ app: 'db', tier: 'x' }) }), [
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"db", "tier":"x"}: `selector` does not match template `labels`',
    ]],
    ['restart policy', deploymentSpec({ template: template({ app: 'web' }, { restartPolicy: 'Never' }) }), [
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
    ]],
    ['activeDeadlineSeconds', deploymentSpec({ template: template({ app: 'web' }, { activeDeadlineSeconds: 5 }) }), [
      'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
    ]],
    ['negative numbers', deploymentSpec({ replicas: -1, minReadySeconds: -2, revisionHistoryLimit: -3 }), [
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      'spec.minReadySeconds: Invalid value: -2: must be greater than or equal to 0',
      'spec.revisionHistoryLimit: Invalid value: -3: must be greater than or equal to 0',
    ]],
    ['progress deadline not above minReadySeconds', deploymentSpec({ minReadySeconds: 10, progressDeadlineSeconds: 10 }), [
      'spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds',
    ]],
    ['both surge and unavailable zero', deploymentSpec({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '0%' } } }), [
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0',
    ]],
    ['bad percentages', deploymentSpec({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '120%', maxSurge: 'lots' } } }), [
      'spec.strategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"lots"}: must be an integer or percentage (e.g \'5%\')',
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"120%"}: must not be greater than 100%',
    ]],
    ['Recreate with rollingUpdate', deploymentSpec({ strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } }), [
      'spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is \'Recreate\'',
    ]],
    ['unknown strategy', deploymentSpec({ strategy: { type: 'Blue' } }), ['spec.strategy: Unsupported value: "Blue": supported values: "Recreate", "RollingUpdate"']],
  ];
  for (const [name, obj, expected] of table) assert.deepEqual(createMessages(deployments, obj), expected, name);
  assert.deepEqual(createMessages(replicaSets, { spec: { selector: { matchLabels: { app: 'web' } }, template: template({ app: 'x' }) } }), [
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"x"}: `selector` does not match template `labels`',
  ]);
});

test('apps/v1 selectors are immutable; a StatefulSet\'s spec is, but for its listed fields', () => {
  const d = created(deployments, deploymentSpec());
  assert.deepEqual(updateMessages(deployments, d, (o) => { o.spec.selector = { matchLabels: { app: 'web', v: '2' } }; o.spec.template.metadata.labels.v = '2'; }), [
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
  ]);
  assert.deepEqual(updateMessages(deployments, d, (o) => { o.spec.replicas = 5; }), []);
  const rs = created(replicaSets, deploymentSpec());
  assert.equal(updateMessages(replicaSets, rs, (o) => { o.spec.selector.matchExpressions = [{ key: 'app', operator: 'Exists' }]; }).length, 1);
  const ss = created(statefulSets, { spec: { selector: { matchLabels: { app: 'web' } }, template: template(), serviceName: 'web' } });
  assert.deepEqual(updateMessages(statefulSets, ss, (o) => { o.spec.replicas = 3; o.spec.updateStrategy = { type: 'OnDelete' }; }), []);
  assert.deepEqual(updateMessages(statefulSets, ss, (o) => { o.spec.serviceName = 'other'; }), [
    'spec: Forbidden: updates to statefulset spec for fields other than \'replicas\', \'ordinals\', \'template\', \'updateStrategy\', \'revisionHistoryLimit\', \'persistentVolumeClaimRetentionPolicy\' and \'minReadySeconds\' are forbidden',
  ]);
  const ds = created(daemonSets, { spec: { selector: { matchLabels: { app: 'web' } }, template: template() } });
  assert.equal(updateMessages(daemonSets, ds, (o) => { o.spec.selector = { matchLabels: { app: 'web', z: '1' } }; o.spec.template.metadata.labels.z = '1'; })[0]?.endsWith('field is immutable'), true);
});

test('StatefulSet and DaemonSet defaults and messages as upstream', () => {
  const ss = created(statefulSets, { spec: { selector: { matchLabels: { app: 'web' } }, template: template(), volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] } });
  assert.deepEqual([ss.spec.podManagementPolicy, ss.spec.updateStrategy, ss.spec.persistentVolumeClaimRetentionPolicy, ss.spec.replicas, ss.spec.revisionHistoryLimit, ss.spec.volumeClaimTemplates[0].spec.volumeMode, ss.spec.volumeClaimTemplates[0].status], [
    'OrderedReady', { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, { whenDeleted: 'Retain', whenScaled: 'Retain' }, 1, 10, 'Filesystem', { phase: 'Pending' },
  ]);
  const ssSpec = (extra: Obj) => ({ spec: { selector: { matchLabels: { app: 'web' } }, template: template(), ...extra } });
  // maxUnavailable is an alpha feature's field, off in 1.32: dropped on create, as upstream.
  assert.deepEqual(created(statefulSets, ssSpec({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2, maxUnavailable: 2 } } })).spec.updateStrategy.rollingUpdate, { partition: 2 });
  assert.deepEqual(createMessages(statefulSets, ssSpec({ podManagementPolicy: 'Random', updateStrategy: { type: 'OnDelete', rollingUpdate: { partition: 1 } }, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Keep' } })), [
    'spec.podManagementPolicy: Invalid value: "Random": must be \'OrderedReady\' or \'Parallel\'',
    'spec.updateStrategy.rollingUpdate: Invalid value: {"partition":1}: only allowed for updateStrategy \'RollingUpdate\'',
    'spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: "Keep": supported values: "Retain", "Delete"',
  ]);
  assert.deepEqual(createMessages(statefulSets, ssSpec({ selector: {} })), [
    'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for statefulset',
  ]);
  const ds = created(daemonSets, { spec: { selector: { matchLabels: { app: 'web' } }, template: template() } });
  assert.deepEqual([ds.spec.updateStrategy, ds.spec.revisionHistoryLimit, ds.status], [
    { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }, 10, { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
  ]);
  const dsSpec = (extra: Obj) => ({ spec: { selector: { matchLabels: { app: 'web' } }, template: template(), ...extra } });
  assert.deepEqual(createMessages(daemonSets, dsSpec({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 1 } } })), [
    'spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero',
  ]);
  assert.deepEqual(createMessages(daemonSets, dsSpec({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } })), [
    'spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0',
  ]);
  assert.deepEqual(createMessages(daemonSets, dsSpec({ template: template({ app: 'web' }, { activeDeadlineSeconds: 3 }) })), [
    'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported',
  ]);
  // No selector: upstream does not say "Required"; a missing selector matches no labels.
  assert.deepEqual(createMessages(daemonSets, { spec: { template: template() } }), [
    'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
  ]);
  assert.deepEqual(createMessages(controllerRevisions, { revision: -1 }), ['revision: Invalid value: -1: must be greater than or equal to 0', 'data: Required value: data is mandatory']);
});

test('Job: upstream\'s defaults, a generated selector and pod labels, and its messages', () => {
  const job = created(jobs, { spec: { template: { spec: { containers: [container], restartPolicy: 'Never' } } } });
  const generated = { [vocabulary.jobControllerUidLabel]: 'u-1', [vocabulary.jobNameLabel]: 'x', 'controller-uid': 'u-1', 'job-name': 'x' };
  assert.deepEqual(job.spec.template.metadata.labels, generated);
  assert.deepEqual(job.spec.selector, { matchLabels: { [vocabulary.jobControllerUidLabel]: 'u-1' } });
  assert.deepEqual(
    [job.spec.completions, job.spec.parallelism, job.spec.backoffLimit, job.spec.completionMode, job.spec.suspend, job.spec.manualSelector, job.spec.podReplacementPolicy],
    [1, 1, 6, 'NonIndexed', false, false, 'TerminatingOrFailed'],
  );
  assert.deepEqual(jobs.strategy.validate!(job), []);
  const jobSpec = (extra: Obj, restartPolicy = 'Never') => ({ spec: { template: { spec: { containers: [container], restartPolicy } }, ...extra } });
  const table: [string, Obj, string[]][] = [
    ['restart policy Always', jobSpec({}, 'Always'), ['spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']],
    ['negative counts', jobSpec({ parallelism: -1, backoffLimit: -2, ttlSecondsAfterFinished: -3 }), [
      'spec.parallelism: Invalid value: -1: must be greater than or equal to 0',
      'spec.backoffLimit: Invalid value: -2: must be greater than or equal to 0',
      'spec.ttlSecondsAfterFinished: Invalid value: -3: must be greater than or equal to 0',
    ]],
    ['an unknown completion mode', jobSpec({ completionMode: 'Sometimes' }), ['spec.completionMode: Unsupported value: "Sometimes": supported values: "NonIndexed", "Indexed"']],
    ['per-index limits need Indexed', jobSpec({ backoffLimitPerIndex: 1 }), ['spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode']],
    ['a pod failure policy wants Never', { ...jobSpec({ podFailurePolicy: { rules: [] } }, 'OnFailure') }, ['spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified']],
    ['a manual selector that does not match', jobSpec({ manualSelector: true, selector: { matchLabels: { a: 'b' } } }), [
      'spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`',
    ]],
    ['a selector not generated', jobSpec({ selector: { matchLabels: { a: 'b' } } }), [
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b", "batch.plat.io/controller-uid":"u-1"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated',
      'spec.template.metadata.labels: Invalid value: map[string]string{"batch.plat.io/controller-uid":"u-1", "batch.plat.io/job-name":"x", "controller-uid":"u-1", "job-name":"x"}: `selector` does not match template `labels`',
    ]],
  ];
  for (const [name, obj, expected] of table) assert.deepEqual(createMessages(jobs, obj), expected, name);
  assert.deepEqual(updateMessages(jobs, job, (o) => { o.spec.completions = 3; }), ['spec.completions: Invalid value: 3: field is immutable']);
  assert.deepEqual(updateMessages(jobs, job, (o) => { o.spec.suspend = true; o.spec.ttlSecondsAfterFinished = 5; }), []);
  // A suspended job that never started may have its scheduling directives changed, not the rest of its template.
  const nodeSelector = (o: Obj) => { o.spec.template.spec.nodeSelector = { disk: 'ssd' }; };
  assert.equal(updateMessages(jobs, job, nodeSelector)[0]?.startsWith('spec.template: Invalid value: '), true);
  const suspended = { ...job, spec: { ...job.spec, suspend: true } };
  assert.deepEqual(updateMessages(jobs, suspended, nodeSelector), []);
  assert.equal(updateMessages(jobs, suspended, (o) => { o.spec.template.spec.containers[0].image = 'other'; }).length, 1);
});

test('CronJob: defaults, schedules and time zones with upstream\'s texts', () => {
  const cron = (extra: Obj) => ({ spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { containers: [container], restartPolicy: 'OnFailure' } } } }, ...extra } });
  const cj = created(cronJobs, cron({}));
  assert.deepEqual([cj.spec.concurrencyPolicy, cj.spec.suspend, cj.spec.successfulJobsHistoryLimit, cj.spec.failedJobsHistoryLimit], ['Allow', false, 3, 1]);
  assert.equal(cj.spec.jobTemplate.spec.backoffLimit, undefined, 'a job template gets no job defaults');
  const table: [string, Obj, string[]][] = [
    ['valid', cron({ timeZone: 'Europe/Paris' }), []],
    ['minute out of range', cron({ schedule: '61 * * * *' }), ['spec.schedule: Invalid value: "61 * * * *": end of range (61) above maximum (59): 61']],
    ['TZ in the schedule', cron({ schedule: 'CRON_TZ=UTC * * * * *' }), ['spec.schedule: Invalid value: "CRON_TZ=UTC * * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field instead']],
    ['unknown zone', cron({ timeZone: 'Europe/Pariss' }), ['spec.timeZone: Invalid value: "Europe/Pariss": unknown time zone Europe/Pariss']],
    ['Local', cron({ timeZone: 'Local' }), ['spec.timeZone: Invalid value: "Local": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones']],
    ['empty zone', cron({ timeZone: '' }), ['spec.timeZone: Invalid value: "": timeZone must be nil or non-empty string']],
    ['concurrency policy', cron({ concurrencyPolicy: 'Sometimes' }), ['spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"']],
    ['a job template with a selector', cron({ jobTemplate: { spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [container], restartPolicy: 'Never' } } } } }), [
      'spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"a":"b"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated',
    ]],
    ['a job template restarting always', cron({ jobTemplate: { spec: { template: { spec: { containers: [container], restartPolicy: 'Always' } } } } }), [
      'spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"',
    ]],
    ['a name too long for its jobs', { ...cron({}), metadata: { name: 'a'.repeat(53) } }, ['metadata.name: Invalid value: "' + 'a'.repeat(53) + '": must be no more than 52 characters']],
  ];
  for (const [name, obj, expected] of table) assert.deepEqual(createMessages(cronJobs, obj), expected, name);
  // An object stored with a TZ before timeZone existed may keep it, but not gain a timeZone beside it.
  const old = { ...cj, spec: { ...cj.spec, schedule: 'TZ=UTC 0 * * * *' } };
  assert.deepEqual(updateMessages(cronJobs, old, () => undefined), []);
  assert.deepEqual(updateMessages(cronJobs, old, (o) => { o.spec.timeZone = 'UTC'; }), ['spec.schedule: Invalid value: "TZ=UTC 0 * * * *": cannot use both timeZone field and TZ or CRON_TZ in schedule']);
});

test('the schedule parser answers as robfig/cron\'s standard parser', () => {
  const cases: [string, string | undefined][] = [
    ['* * * * *', undefined], ['0 3 * * mon-fri', undefined], ['*/61 * * * *', undefined], ['0 0 1 jan,jul *', undefined], ['@daily', undefined], ['@every 1h30m', undefined],
    ['TZ=Europe/Paris 0 3 * * *', undefined],
    ['', 'empty spec string'], ['* * * *', 'expected exactly 5 fields, found 4: [* * * *]'], ['* * * * * *', 'expected exactly 5 fields, found 6: [* * * * * *]'],
    ['0 24 * * *', 'end of range (24) above maximum (23): 24'], ['* * 0 * *', 'beginning of range (0) below minimum (1): 0'], ['* * * * 7', 'end of range (7) above maximum (6): 7'],
    ['5-1 * * * *', 'beginning of range (5) beyond end of range (1): 5-1'], ['*/0 * * * *', 'step of range should be a positive number: */0'],
    ['1-2-3 * * * *', 'too many hyphens: 1-2-3'], ['*/2/3 * * * *', 'too many slashes: */2/3'], ['x * * * *', 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'],
    ['@fortnightly', 'unrecognized descriptor: @fortnightly'], ['@every soon', 'failed to parse duration @every soon: time: invalid duration "soon"'],
    ['TZ=Mars/Base * * * * *', 'provided bad location Mars/Base: unknown time zone Mars/Base'],
  ];
  for (const [schedule, error] of cases) assert.equal(scheduleError(schedule), error, schedule);
});

test('HorizontalPodAutoscaler: v2 defaults and messages; a v2 object as v1 sees it', () => {
  const hpa = created(horizontalPodAutoscalers, { spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, maxReplicas: 3, behavior: { scaleUp: { policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }] } } } });
  assert.deepEqual([hpa.spec.minReplicas, hpa.spec.metrics], [1, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]]);
  assert.deepEqual(hpa.spec.behavior, {
    scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }] },
    scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
  const bad = { spec: { scaleTargetRef: { kind: 'Deployment' }, minReplicas: 0, maxReplicas: 0, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization' } } }, { type: 'Pods' }], behavior: { scaleDown: { policies: [{ type: 'Pods', value: 0, periodSeconds: 1801 }] } } } };
  assert.deepEqual(createMessages(horizontalPodAutoscalers, bad), [
    'spec.minReplicas: Invalid value: 0: must be greater than or equal to 1',
    'spec.maxReplicas: Invalid value: 0: must be greater than 0',
    'spec.scaleTargetRef.name: Required value',
    'spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization',
    'spec.metrics[1].pods: Required value: must populate information for the given metric source',
    'spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero',
    'spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800',
  ]);
  const target = { kind: 'Deployment', name: 'web' };
  assert.deepEqual(createMessages(horizontalPodAutoscalers, { spec: { scaleTargetRef: target, maxReplicas: 2, metrics: [
    { type: 'Object', object: { describedObject: { kind: 'Service' }, metric: {}, target: { type: 'Value' } } },
    { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue' } } },
    { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '1', averageValue: '2' } } },
  ] } }), [
    'spec.metrics[0].object.metric.name: Required value: must specify a metric name',
    'spec.metrics[0].object.describedObject.name: Required value',
    'spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue',
    'spec.metrics[1].pods.target.averageValue: Required value: must specify a positive target averageValue',
    'spec.metrics[2].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target',
  ]);
  const [v1] = codecsOf(horizontalPodAutoscalers);
  const asV1 = v1!.fromStored({ ...hpa, spec: { ...hpa.spec, metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } }, ...hpa.spec.metrics] } });
  assert.equal(asV1.apiVersion, 'autoscaling/v1');
  assert.equal(asV1.spec.targetCPUUtilizationPercentage, 80);
  assert.equal(asV1.spec.metrics, undefined);
  assert.deepEqual(JSON.parse(asV1.metadata!.annotations[`${vocabulary.autoscalingAnnotationPrefix}metrics`]), [{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } }]);
});

// ---- round trips of full objects ----

const meta = { name: 'web', namespace: 'default', uid: 'u-1', resourceVersion: '5', generation: 2, creationTimestamp: '2026-11-25T10:00:00Z', labels: { app: 'web' } };
const podTemplate = {
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: { limits: { cpu: '500m' } }, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' }],
    restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', securityContext: {}, schedulerName: 'default-scheduler', enableServiceLinks: true,
  },
};
const condition = { type: 'Available', status: 'True', lastTransitionTime: '2026-11-25T10:01:00Z', reason: 'MinimumReplicasAvailable', message: 'ok' };

const fullObjects: [KindDefinition, KubeObject][] = [
  [deployments, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta,
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['db'] }] }, template: podTemplate, strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '50%' } }, minReadySeconds: 5, revisionHistoryLimit: 4, paused: true, progressDeadlineSeconds: 120 },
    status: { observedGeneration: 2, replicas: 3, updatedReplicas: 2, readyReplicas: 3, availableReplicas: 3, unavailableReplicas: 1, collisionCount: 1, conditions: [{ ...condition, lastUpdateTime: '2026-11-25T10:02:00Z' }] },
  }],
  [replicaSets, {
    apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: meta,
    spec: { replicas: 2, minReadySeconds: 1, selector: { matchLabels: { app: 'web' } }, template: podTemplate },
    status: { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 1, observedGeneration: 2, conditions: [{ ...condition, type: 'ReplicaFailure' }] },
  }],
  [statefulSets, {
    apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta,
    spec: {
      replicas: 2, selector: { matchLabels: { app: 'web' } }, template: podTemplate, serviceName: 'web', podManagementPolicy: 'Parallel',
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, volumeMode: 'Filesystem' }, status: { phase: 'Pending' } }],
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1, maxUnavailable: '10%' } }, revisionHistoryLimit: 3, minReadySeconds: 2,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' }, ordinals: { start: 5 },
    },
    status: { observedGeneration: 2, replicas: 2, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1, currentRevision: 'web-1', updateRevision: 'web-2', collisionCount: 1, conditions: [condition], availableReplicas: 1 },
  }],
  [daemonSets, {
    apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: meta,
    spec: { selector: { matchLabels: { app: 'web' } }, template: podTemplate, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%', maxSurge: 0 } }, minReadySeconds: 3, revisionHistoryLimit: 5 },
    status: { currentNumberScheduled: 2, numberMisscheduled: 1, desiredNumberScheduled: 2, numberReady: 2, observedGeneration: 2, updatedNumberScheduled: 2, numberAvailable: 2, numberUnavailable: 1, collisionCount: 1, conditions: [condition] },
  }],
  [controllerRevisions, {
    apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { ...meta, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 's-1', controller: true, blockOwnerDeletion: true }] },
    data: { spec: { template: { metadata: { labels: { app: 'web' } } } } }, revision: 7,
  }],
  [jobs, {
    apiVersion: 'batch/v1', kind: 'Job', metadata: meta,
    spec: {
      parallelism: 2, completions: 4, activeDeadlineSeconds: 600, backoffLimit: 3, backoffLimitPerIndex: 1, maxFailedIndexes: 2, selector: { matchLabels: { app: 'web' } }, manualSelector: true,
      podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'web', operator: 'In', values: [1, 42] } }, { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] },
      successPolicy: { rules: [{ succeededIndexes: '0-2', succeededCount: 2 }] },
      template: { ...podTemplate, spec: { ...podTemplate.spec, restartPolicy: 'Never' } }, ttlSecondsAfterFinished: 100, completionMode: 'Indexed', suspend: false, podReplacementPolicy: 'Failed', managedBy: 'example.com/queue',
    },
    status: {
      conditions: [{ type: 'Complete', status: 'True', lastProbeTime: '2026-11-25T10:03:00Z', lastTransitionTime: '2026-11-25T10:03:00Z', reason: 'CompletionsReached', message: 'done' }],
      startTime: '2026-11-25T10:00:00Z', completionTime: '2026-11-25T10:03:00Z', active: 1, succeeded: 3, failed: 1, terminating: 1, completedIndexes: '0-2', failedIndexes: '3',
      uncountedTerminatedPods: { succeeded: ['p-1'], failed: ['p-2'] }, ready: 1,
    },
  }],
  [cronJobs, {
    apiVersion: 'batch/v1', kind: 'CronJob', metadata: meta,
    spec: {
      schedule: '0 3 * * *', timeZone: 'Europe/Paris', startingDeadlineSeconds: 3600, concurrencyPolicy: 'Forbid', suspend: true, successfulJobsHistoryLimit: 2, failedJobsHistoryLimit: 2,
      jobTemplate: { metadata: { labels: { app: 'web' } }, spec: { template: { ...podTemplate, spec: { ...podTemplate.spec, restartPolicy: 'OnFailure' } } } },
    },
    status: { active: [{ kind: 'Job', namespace: 'default', name: 'web-1', uid: 'j-1', apiVersion: 'batch/v1', resourceVersion: '9' }], lastScheduleTime: '2026-11-25T03:00:00Z', lastSuccessfulTime: '2026-11-25T03:01:00Z' },
  }],
  [horizontalPodAutoscalers, {
    apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta,
    spec: {
      scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, minReplicas: 2, maxReplicas: 9,
      metrics: [
        { type: 'Object', object: { describedObject: { kind: 'Service', name: 'web', apiVersion: 'v1' }, target: { type: 'Value', value: '10' }, metric: { name: 'rps' } } },
        { type: 'ContainerResource', containerResource: { name: 'memory', target: { type: 'AverageValue', averageValue: '512Mi' }, container: 'web' } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
      ],
      behavior: { scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] }, scaleDown: { selectPolicy: 'Disabled', policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }] } },
    },
    status: {
      observedGeneration: 2, lastScaleTime: '2026-11-25T10:05:00Z', currentReplicas: 3, desiredReplicas: 3,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 50, averageValue: '250m' } } }],
      conditions: [{ type: 'ScalingActive', status: 'True', lastTransitionTime: '2026-11-25T10:01:00Z', reason: 'ValidMetricFound', message: 'ok' }],
    },
  }],
];

test('full objects of every workload kind round-trip through JSON, YAML and protobuf', () => {
  const lookup = builtinSchemaLookup(builtinKinds);
  for (const [kind, obj] of fullObjects) {
    const decode = (value: unknown) => decodeObject(kind, value, { fieldValidation: 'Strict', warnings: [] });
    assert.deepEqual(decode(readJson(JSON.stringify(obj)).value), obj, `${kind.kind} JSON`);
    assert.deepEqual(decode(readYaml(stringify(obj)).value), obj, `${kind.kind} YAML`);
    const wire = encodeProtobufObject(obj, lookup(obj.apiVersion!, kind.kind)!);
    assert.deepEqual(decodeProtobufObject(wire, lookup), obj, `${kind.kind} protobuf`);
  }
});

test('protobuf: upstream\'s field numbers (a Deployment\'s replicas, a Job\'s ttlSecondsAfterFinished)', () => {
  const lookup = builtinSchemaLookup(builtinKinds);
  const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 3 } };
  // DeploymentSpec {1: 3}, the template and strategy written even when empty: Deployment {2: spec}.
  const dHex = encodeProtobufObject(deployment, lookup('apps/v1', 'Deployment')!).toString('hex');
  assert.ok(dHex.includes('0803'), dHex);
  const job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { ttlSecondsAfterFinished: 100 } };
  const jHex = encodeProtobufObject(job, lookup('batch/v1', 'Job')!).toString('hex');
  assert.ok(jHex.includes('4064'), jHex); // field 8, varint 100
});
