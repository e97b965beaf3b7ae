// APIService validation as upstream's (kube-aggregator ValidateAPIService):
// the name is version.group, priorities in range, local APIServices carry
// no TLS settings, remote ones name their Service; re-expressed as cases.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { apiServices } from '../../../src/api/apiregistration/v1/apiservice.js';

const valid = {
  metadata: { name: 'v1alpha1.wardle.example.com' },
  spec: { group: 'wardle.example.com', version: 'v1alpha1', groupPriorityMinimum: 1000, versionPriority: 15, service: { namespace: 'ns', name: 'api', port: 443 } },
};

function problems(change: (o: any) => void): string[] {
  const o = structuredClone(valid) as any;
  change(o);
  return (apiServices.strategy.validate?.(o) ?? []).map((e) => e.describe());
}

test('APIService validation: upstream\'s rules and messages', () => {
  assert.deepEqual(problems(() => {}), []);
  const cases: [string, (o: any) => void, RegExp][] = [
    ['name is version.group', (o) => { o.metadata.name = 'wardle'; }, /metadata\.name: Invalid value: "wardle": must be `spec\.version\+"\."\+spec\.group`: "v1alpha1\.wardle\.example\.com"/],
    ['an empty group is only v1', (o) => { o.spec.group = ''; o.metadata.name = 'v1alpha1.'; }, /spec\.group: Required value: only v1 may have an empty group and it better be legacy kube/],
    ['the version is a DNS-1035 label', (o) => { o.spec.version = 'V1'; o.metadata.name = 'V1.wardle.example.com'; }, /spec\.version: Invalid value: "V1"/],
    ['group priority in range', (o) => { o.spec.groupPriorityMinimum = 20001; }, /spec\.groupPriorityMinimum: Invalid value: 20001: must be positive and less than 20000/],
    ['version priority in range', (o) => { o.spec.versionPriority = 0; }, /spec\.versionPriority: Invalid value: 0: must be positive and less than 1000/],
    ['a remote one names its Service', (o) => { o.spec.service = { port: 443 }; }, /spec\.service\.namespace: Required value/],
    ['a port is a port', (o) => { o.spec.service.port = 70000; }, /spec\.service\.port: Invalid value: 70000/],
    ['no insecureSkipTLSVerify beside a caBundle', (o) => { o.spec.insecureSkipTLSVerify = true; o.spec.caBundle = Buffer.from('x').toString('base64'); }, /spec\.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present/],
    ['a local one has no caBundle', (o) => { delete o.spec.service; o.spec.caBundle = Buffer.from('abc').toString('base64'); }, /spec\.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle/],
  ];
  for (const [what, change, expected] of cases) {
    const found = problems(change);
    assert.ok(found.some((p) => expected.test(p)), `${what}: ${found.join('; ')}`);
  }
});

test('APIService defaults: a Service port of 443', () => {
  const o: any = { metadata: { name: 'v1.x.io' }, spec: { group: 'x.io', version: 'v1', service: { namespace: 'ns', name: 'api' } } };
  apiServices.strategy.defaults?.(o);
  assert.equal(o.spec.service.port, 443);
});
