// The custom resources of the most-used operators, as their users install
// them: the real CRD files of Gateway API (standard and experimental
// channels), prometheus-operator, Argo CD and Crossplane, kept unchanged in
// test/fixtures/operators (README.md there says where and at which commit
// each came from), applied with `kubectl apply --server-side` one project
// at a time, then every kind served and explainable, and examples of the
// projects' own objects created and read back unchanged.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

// dist/test/e2e → the repository's own test/fixtures (YAML is not compiled).
const fixtures = fileURLToPath(new URL('../../../test/fixtures/operators/', import.meta.url));

/** The CRD files of one project's folder; Gateway API's admission policy waits for ValidatingAdmissionPolicy. */
const crdFiles = (dir: string): string[] => readdirSync(join(fixtures, dir)).filter((f) => f.endsWith('.yaml') && !f.includes('_vap_')).map((f) => join(fixtures, dir, f));

interface Kind { group: string; plural: string; kind: string; versions: string[] }

function kindsOf(files: string[]): Kind[] {
  const kinds: Kind[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
      const crd = doc.toJS();
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      kinds.push({ group: crd.spec.group, plural: crd.spec.names.plural, kind: crd.spec.names.kind,
        versions: crd.spec.versions.filter((v: any) => v.served).map((v: any) => v.name) });
    }
  }
  return kinds;
}

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite' }); });
after(async () => { await s.close(); });

async function install(project: string): Promise<Kind[]> {
  const files = crdFiles(project);
  const applied = await s.kubectl(['apply', '--server-side', ...files.flatMap((f) => ['-f', f])]);
  assert.equal(applied.code, 0, `${project}: ${applied.stderr}`);
  const kinds = kindsOf(files);
  // Every served version of every kind answers a list.
  await eventually(`${project}: every kind is served`, async () => {
    for (const k of kinds) {
      for (const v of k.versions) {
        const r = await s.client.get(`/apis/${k.group}/${v}/${k.plural}`);
        if (r.status !== 200) return false;
      }
    }
    return true;
  });
  return kinds;
}

const projects = ['gateway-api/standard', 'prometheus-operator', 'argo-cd', 'crossplane'];

test('every CRD file installs with kubectl apply --server-side, each kind served in each served version, listed and explainable', async () => {
  const all: Kind[] = [];
  for (const p of projects) all.push(...await install(p));
  // The experimental channel over the standard one (upstream refuses this only through its admission policy).
  all.push(...await install('gateway-api/experimental'));
  const listed = new Set((await s.kubectlOk(['api-resources', '-o', 'name'])).trim().split('\n'));
  for (const k of all) assert.ok(listed.has(`${k.plural}.${k.group}`), `${k.plural}.${k.group} is listed`);
  // kubectl explain reads each kind's OpenAPI; one kind of each project, the largest schemas among them (a run is about a second).
  for (const [resource, kind] of [['httproutes.gateway.networking.k8s.io', 'HTTPRoute'], ['prometheuses.monitoring.coreos.com', 'Prometheus'],
    ['applicationsets.argoproj.io', 'ApplicationSet'], ['usages.protection.crossplane.io', 'Usage'], ['xbackendtrafficpolicies.gateway.networking.x-k8s.io', 'XBackendTrafficPolicy']]) {
    assert.match(await s.kubectlOk(['explain', `${resource}.spec`]), new RegExp(`KIND:\\s+${kind}`), resource);
  }
});

/** The projects' own example objects (from their documentation and examples), written as their users write them. */
const examples: Record<string, unknown>[] = [
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GatewayClass', metadata: { name: 'example' }, spec: { controllerName: 'example.com/gateway-controller' } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'example-gateway', namespace: 'default' },
    spec: { gatewayClassName: 'example', listeners: [{ name: 'http', protocol: 'HTTP', port: 80 }, { name: 'https', protocol: 'HTTPS', port: 443, hostname: '*.example.com',
      tls: { mode: 'Terminate', certificateRefs: [{ kind: 'Secret', name: 'example-com-cert' }] } }] } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'example-route', namespace: 'default' },
    spec: { parentRefs: [{ name: 'example-gateway' }], hostnames: ['www.example.com'],
      rules: [{ matches: [{ path: { type: 'PathPrefix', value: '/login' }, headers: [{ name: 'env', value: 'canary' }] }],
        filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'my-header', value: 'foo' }] } }],
        backendRefs: [{ name: 'example-svc', port: 8080, weight: 90 }, { name: 'example-svc-canary', port: 8080, weight: 10 }] }] } },
  { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'GRPCRoute', metadata: { name: 'grpc-route', namespace: 'default' },
    spec: { parentRefs: [{ name: 'example-gateway' }], rules: [{ matches: [{ method: { service: 'com.example.User', method: 'Login' } }], backendRefs: [{ name: 'foo-svc', port: 50051 }] }] } },
  { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'example-app', namespace: 'default', labels: { team: 'frontend' } },
    spec: { selector: { matchLabels: { app: 'example-app' } }, endpoints: [{ port: 'web', interval: '30s' }] } },
  { apiVersion: 'monitoring.coreos.com/v1', kind: 'Prometheus', metadata: { name: 'prometheus', namespace: 'default' },
    spec: { serviceAccountName: 'prometheus', serviceMonitorSelector: { matchLabels: { team: 'frontend' } }, resources: { requests: { memory: '400Mi' } } } },
  { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name: 'example-rules', namespace: 'default' },
    spec: { groups: [{ name: 'example', rules: [{ alert: 'HighRequestLatency', expr: 'job:request_latency_seconds:mean5m{job="myjob"} > 0.5', for: '10m', labels: { severity: 'page' } }] }] } },
  { apiVersion: 'monitoring.coreos.com/v1alpha1', kind: 'AlertmanagerConfig', metadata: { name: 'config-example', namespace: 'default' },
    spec: { route: { groupBy: ['job'], receiver: 'webhook' }, receivers: [{ name: 'webhook', webhookConfigs: [{ url: 'http://example.com/' }] }] } },
  { apiVersion: 'argoproj.io/v1alpha1', kind: 'AppProject', metadata: { name: 'my-project', namespace: 'default' },
    spec: { description: 'Example Project', sourceRepos: ['*'], destinations: [{ namespace: 'guestbook', server: 'https://kubernetes.default.svc' }] } },
  { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { name: 'guestbook', namespace: 'default' },
    spec: { project: 'default', source: { repoURL: 'https://github.com/argoproj/argocd-example-apps.git', targetRevision: 'HEAD', path: 'guestbook' },
      destination: { server: 'https://kubernetes.default.svc', namespace: 'guestbook' } } },
  { apiVersion: 'apiextensions.crossplane.io/v1', kind: 'Composition', metadata: { name: 'example' },
    spec: { compositeTypeRef: { apiVersion: 'example.crossplane.io/v1', kind: 'XR' }, mode: 'Pipeline',
      pipeline: [{ step: 'patch-and-transform', functionRef: { name: 'function-patch-and-transform' }, input: { apiVersion: 'pt.fn.crossplane.io/v1beta1', kind: 'Resources', resources: [] } }] } },
  { apiVersion: 'pkg.crossplane.io/v1', kind: 'Provider', metadata: { name: 'provider-nop' }, spec: { package: 'xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0' } },
];

/** The part of `got` that `sent` names: what was sent must read back as it was, beside the defaults the schemas add. */
function sentPart(sent: unknown, got: unknown): unknown {
  if (Array.isArray(sent)) return Array.isArray(got) ? sent.map((x, i) => sentPart(x, got[i])) : got;
  if (sent && typeof sent === 'object') {
    if (!got || typeof got !== 'object' || Array.isArray(got)) return got;
    return Object.fromEntries(Object.keys(sent).map((k) => [k, sentPart((sent as any)[k], (got as any)[k])]));
  }
  return got;
}

test("the projects' example objects are created and read back unchanged", async () => {
  const path = join(s.dataDir, 'examples.yaml');
  writeFileSync(path, examples.map((e) => stringify(e)).join('---\n'));
  const applied = await s.kubectl(['apply', '--server-side', '-f', path]);
  assert.equal(applied.code, 0, applied.stderr);
  for (const e of examples) {
    const meta = e.metadata as { name: string; namespace?: string };
    const got = JSON.parse(await s.kubectlOk(['get', `${(e.kind as string).toLowerCase()}.${(e.apiVersion as string).split('/')[0]}`, meta.name,
      ...(meta.namespace ? ['-n', meta.namespace] : []), '-o', 'json']));
    assert.deepEqual(sentPart(e.spec, got.spec), e.spec, `${e.kind}: what was sent is read back (defaults may be added)`);
  }
});

test("Crossplane's Usage: its printer column's escaped-dot path shows the annotation, its rule on `namespace` (`__namespace__`) fires", async () => {
  const usage = (name: string, of: Record<string, unknown>) => ({
    apiVersion: 'protection.crossplane.io/v1beta1', kind: 'Usage',
    metadata: { name, namespace: 'default', annotations: { 'crossplane.io/usage-details': `details of ${name}` } },
    spec: { of: { apiVersion: 'v1', kind: 'ConfigMap', ...of }, reason: 'kept for a test' },
  });
  const path = join(s.dataDir, 'usage.yaml');
  writeFileSync(path, stringify(usage('held', { resourceRef: { name: 'settings' } })));
  await s.kubectlOk(['apply', '--server-side', '-f', path]);
  assert.match(await s.kubectlOk(['get', 'usages.protection.crossplane.io', '-n', 'default']), /^NAME\s+DETAILS\s+READY\s+AGE\nheld\s+details of held\s+/);
  writeFileSync(path, stringify(usage('across', { resourceRef: { name: 'settings', namespace: 'other' } })));
  const refused = await s.kubectl(['apply', '--server-side', '-f', path]);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /cross-namespace "spec.of" is not allowed without "spec.by" resource./);
});
