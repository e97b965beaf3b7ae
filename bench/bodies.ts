// The objects the benches write: ConfigMaps of a given stored size, and pods
// of realistic size (what a deployment's template makes), and deployments of them.

/** A ConfigMap whose stored JSON (with the server's uid, timestamp and resourceVersion) is about `bytes` long. */
export function configMap(name: string, bytes: number, extra: Record<string, string> = {}, labels: Record<string, string> = { app: 'bench' }): any {
  // 235 bytes: what the server adds plus the envelope of the object, measured.
  const payload = 'x'.repeat(Math.max(0, bytes - 235 - name.length));
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data: { payload, ...extra } };
}

/** A pod as a deployment's template makes them: two containers with ports, environment, resources, probes and mounts. */
export function pod(name: string): any {
  const container = (c: string, image: string, port: number) => ({
    name: c, image, ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
    env: Array.from({ length: 6 }, (_, i) => ({ name: `SETTING_${i}`, value: `value-of-setting-${i}-for-${c}` })),
    envFrom: [{ configMapRef: { name: `${c}-settings` } }],
    resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '500m', memory: '512Mi' } },
    livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, initialDelaySeconds: 5, periodSeconds: 10 },
    readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
    volumeMounts: [{ name: 'config', mountPath: `/etc/${c}`, readOnly: true }, { name: 'cache', mountPath: '/var/cache' }],
    securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  });
  return {
    apiVersion: 'v1', kind: 'Pod',
    metadata: { name, labels: { app: 'bench', tier: 'web', 'pod-template-hash': '5d8f7c9b6' }, annotations: { 'bench.plat.io/note': 'a pod of realistic size' } },
    spec: {
      containers: [container('web', 'registry.example.com/team/web:1.27.3', 8080), container('sidecar', 'registry.example.com/team/proxy:2.4.1', 9090)],
      volumes: [{ name: 'config', configMap: { name: 'web-config' } }, { name: 'cache', emptyDir: { sizeLimit: '1Gi' } }],
      serviceAccountName: 'default', nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { app: 'bench' } }, topologyKey: 'kubernetes.io/hostname' } }] } },
    },
  };
}

/** A deployment whose template is that pod (two replicas, a selector of two of its labels). */
export function deployment(name: string): any {
  const { metadata, spec } = pod(name);
  return {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, labels: { app: 'bench' } },
    spec: { replicas: 2, selector: { matchLabels: { app: 'bench', tier: 'web' } }, template: { metadata: { labels: metadata.labels, annotations: metadata.annotations }, spec } },
  };
}
