// The Pod Security Standards as test data, after upstream's
// pod-security-admission fixtures: for each level and policy version the
// smallest pod that passes, and for each check, from the version its rule
// starts, pods made from that one that must pass and pods that must fail
// (with a piece of the message they fail with). A check's data for v1.x
// holds for later versions until the check has data of its own again.

export type Pod = { metadata: Record<string, any>; spec: Record<string, any> };
type Tweak = (pod: Pod) => void;

export interface CheckFixture {
  check: string;
  level: 'baseline' | 'restricted';
  /** The first version (1.<since>) this data applies to. */
  since: number;
  /** Text every failing pod's message holds. */
  expect: string;
  pass: (base: Pod) => Pod[];
  fail: (base: Pod) => Pod[];
}

export const newestVersion = 32;

function tweak(base: Pod, change: Tweak): Pod {
  const pod = structuredClone(base);
  change(pod);
  return pod;
}

const containers = (pod: Pod) => [...pod.spec.initContainers, ...pod.spec.containers] as Record<string, any>[];

function withSecurityContexts(base: Pod): Pod {
  return tweak(base, (pod) => {
    pod.spec.securityContext ??= {};
    for (const c of containers(pod)) c.securityContext ??= {};
  });
}

const first = (pod: Pod) => pod.spec.containers[0];
const firstInit = (pod: Pod) => pod.spec.initContainers[0];

/** The smallest passing pod of a level at a version (before a requirement's version, the pod without it). */
export function minimalPod(level: 'baseline' | 'restricted', minor: number, os?: 'linux' | 'windows'): Pod {
  const pod: Pod = {
    metadata: {},
    spec: {
      initContainers: [{ name: 'initcontainer1', image: 'registry.k8s.io/pause' }],
      containers: [{ name: 'container1', image: 'registry.k8s.io/pause' }],
    },
  };
  if (level === 'baseline') return pod;
  pod.spec.securityContext = { runAsNonRoot: true };
  // From 1.25 the fields that do not apply to Windows are not asked of Windows pods.
  const windowsRelief = os === 'windows' && minor >= 25;
  if (minor >= 8 && !windowsRelief) for (const c of containers(pod)) c.securityContext = { allowPrivilegeEscalation: false };
  if (minor >= 19 && !windowsRelief) pod.spec.securityContext.seccompProfile = { type: 'RuntimeDefault' };
  if (minor >= 22 && !windowsRelief) for (const c of containers(pod)) c.securityContext.capabilities = { drop: ['ALL'] };
  if (os) pod.spec.os = { name: os };
  return pod;
}

const allDefaultCapabilities = ['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT'];

function sysctlFixture(since: number, allowed: string[]): CheckFixture {
  return {
    check: 'sysctls', level: 'baseline', since, expect: 'forbidden sysctl',
    pass: (base) => [
      tweak(base, (p) => { (p.spec.securityContext ??= {}).sysctls = undefined; }),
      tweak(base, (p) => { (p.spec.securityContext ??= {}).sysctls = allowed.map((name) => ({ name, value: '0' })); }),
    ],
    fail: (base) => [tweak(base, (p) => { (p.spec.securityContext ??= {}).sysctls = [{ name: 'othersysctl', value: 'other' }]; })],
  };
}

const sysctls1_0 = ['kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range', 'net.ipv4.ip_unprivileged_port_start'];
const sysctls1_27 = [...sysctls1_0, 'net.ipv4.ip_local_reserved_ports'];
const sysctls1_29 = [...sysctls1_27, 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes'];
const sysctls1_32 = ['net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

const restrictedVolumeSources: Record<string, unknown>[] = [
  { gcePersistentDisk: { pdName: 'test' } }, { awsElasticBlockStore: { volumeID: 'test' } }, { gitRepo: { repository: 'github.com/kubernetes/kubernetes' } },
  { nfs: { server: 'test', path: '/test' } }, { iscsi: { targetPortal: 'test', iqn: 'iqn.2001-04.com.example:storage.kube.sys1.xyz', lun: 0 } },
  { glusterfs: { path: 'test', endpoints: 'test' } }, { rbd: { monitors: ['test'], image: 'test' } }, { flexVolume: { driver: 'test' } },
  { cinder: { volumeID: 'test' } }, { cephfs: { monitors: ['test'] } }, { flocker: { datasetName: 'test' } }, { fc: { wwids: ['test'] } },
  { azureFile: { secretName: 'test', shareName: 'test' } }, { vsphereVolume: { volumePath: 'test' } }, { quobyte: { registry: 'localhost:1234', volume: 'test' } },
  { azureDisk: { diskName: 'test', diskURI: 'https://test.blob.core.windows.net/test/test.vhd' } }, { portworxVolume: { volumeID: 'test', fsType: 'ext4' } },
  { scaleIO: { volumeName: 'test', gateway: 'localhost', system: 'test', secretRef: { name: 'x' } } }, { storageos: { volumeName: 'test' } }, { hostPath: { path: '/dev/null' } },
];

const seLinux1_0: CheckFixture = {
  check: 'seLinuxOptions', level: 'baseline', since: 0, expect: 'seLinuxOptions',
  pass: (base) => {
    const withOptions = tweak(withSecurityContexts(base), (p) => {
      p.spec.securityContext.seLinuxOptions ??= {};
      for (const c of containers(p)) c.securityContext.seLinuxOptions ??= {};
    });
    return [
      tweak(withOptions, (p) => { delete p.spec.securityContext.seLinuxOptions; delete first(p).securityContext.seLinuxOptions; firstInit(p).securityContext.seLinuxOptions = {}; }),
      tweak(withOptions, (p) => {
        p.spec.securityContext.seLinuxOptions.type = 'container_t';
        first(p).securityContext.seLinuxOptions = { type: 'container_init_t', level: 'somevalue' };
        firstInit(p).securityContext.seLinuxOptions.type = 'container_kvm_t';
      }),
    ];
  },
  fail: (base) => {
    const withOptions = tweak(withSecurityContexts(base), (p) => {
      p.spec.securityContext.seLinuxOptions ??= {};
      for (const c of containers(p)) c.securityContext.seLinuxOptions ??= {};
    });
    return [
      tweak(withOptions, (p) => { p.spec.securityContext.seLinuxOptions.type = 'somevalue'; }),
      tweak(withOptions, (p) => { first(p).securityContext.seLinuxOptions.type = 'somevalue'; }),
      tweak(withOptions, (p) => { firstInit(p).securityContext.seLinuxOptions.type = 'somevalue'; }),
      tweak(withOptions, (p) => { p.spec.securityContext.seLinuxOptions.user = 'somevalue'; }),
      tweak(withOptions, (p) => { p.spec.securityContext.seLinuxOptions.role = 'somevalue'; }),
    ];
  },
};

export const fixtures: readonly CheckFixture[] = [
  {
    check: 'privileged', level: 'baseline', since: 0, expect: 'privileged',
    pass: (base) => [tweak(withSecurityContexts(base), (p) => { for (const c of containers(p)) c.securityContext.privileged = false; })],
    fail: (base) => [
      tweak(withSecurityContexts(base), (p) => { first(p).securityContext.privileged = true; delete first(p).securityContext.allowPrivilegeEscalation; }),
      tweak(withSecurityContexts(base), (p) => { firstInit(p).securityContext.privileged = true; delete firstInit(p).securityContext.allowPrivilegeEscalation; }),
    ],
  },
  {
    check: 'hostNamespaces', level: 'baseline', since: 0, expect: 'host namespaces',
    pass: () => [],
    fail: (base) => ['hostIPC', 'hostNetwork', 'hostPID'].map((field) => tweak(base, (p) => { p.spec[field] = true; })),
  },
  {
    check: 'hostPorts', level: 'baseline', since: 0, expect: 'hostPort',
    pass: (base) => [tweak(base, (p) => { first(p).ports = [{ containerPort: 12345 }]; firstInit(p).ports = [{ containerPort: 12346 }]; })],
    fail: (base) => [
      tweak(base, (p) => { first(p).ports = [{ containerPort: 12345, hostPort: 12345 }]; }),
      tweak(base, (p) => { firstInit(p).ports = [{ containerPort: 12346, hostPort: 12346 }]; }),
      tweak(base, (p) => {
        first(p).ports = [{ containerPort: 12345, hostPort: 12345 }, { containerPort: 12347 }];
        firstInit(p).ports = [{ containerPort: 12346, hostPort: 12346 }, { containerPort: 12348 }];
      }),
    ],
  },
  {
    check: 'hostPathVolumes', level: 'baseline', since: 0, expect: 'hostPath',
    pass: () => [],
    fail: (base) => [
      tweak(base, (p) => { p.spec.volumes = [{ name: 'volume-emptydir', emptyDir: {} }, { name: 'volume-hostpath', hostPath: { path: '/a' } }]; }),
      tweak(base, (p) => { p.spec.volumes = [{ name: 'volume-hostpath-a', hostPath: { path: '/a' } }, { name: 'volume-hostpath-b', hostPath: { path: '/b' } }]; }),
    ],
  },
  {
    check: 'capabilities_baseline', level: 'baseline', since: 0, expect: 'capabilities',
    pass: (base) => {
      // A pod that drops ALL (restricted 1.22+) has nothing to show here.
      if (first(base).securityContext?.capabilities?.drop?.includes('ALL')) return [];
      return [tweak(withSecurityContexts(base), (p) => { for (const c of containers(p)) c.securityContext.capabilities = { add: allDefaultCapabilities }; })];
    },
    fail: (base) => ['NET_RAW', 'init:NET_RAW', 'chown', 'CAP_CHOWN'].map((cap) => tweak(withSecurityContexts(base), (p) => {
      const target = cap.startsWith('init:') ? firstInit(p) : first(p);
      target.securityContext.capabilities = { ...target.securityContext.capabilities, add: [cap.replace('init:', '')] };
    })),
  },
  {
    check: 'appArmorProfile', level: 'baseline', since: 0, expect: 'forbidden AppArmor profile',
    pass: (base) => [
      tweak(base, (p) => { p.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/container1': 'runtime/default', 'container.apparmor.security.beta.kubernetes.io/initcontainer1': 'localhost/foo' }; }),
      tweak(withSecurityContexts(base), (p) => {
        p.spec.securityContext.appArmorProfile = { type: 'RuntimeDefault' };
        first(p).securityContext.appArmorProfile = { type: 'Localhost', localhostProfile: 'foo' };
      }),
    ],
    fail: (base) => [
      tweak(base, (p) => { p.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/container1': 'unconfined' }; }),
      tweak(base, (p) => { p.metadata.annotations = { 'container.apparmor.security.beta.kubernetes.io/initcontainer1': 'unconfined' }; }),
      tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.appArmorProfile = { type: 'Unconfined' }; }),
      tweak(withSecurityContexts(base), (p) => { firstInit(p).securityContext.appArmorProfile = { type: 'Unconfined' }; }),
    ],
  },
  seLinux1_0,
  {
    // container_engine_t joined the allowed types in 1.31.
    check: 'seLinuxOptions', level: 'baseline', since: 31, expect: 'seLinuxOptions',
    pass: (base) => [...seLinux1_0.pass(base), tweak(withSecurityContexts(base), (p) => { first(p).securityContext.seLinuxOptions = { type: 'container_engine_t' }; })],
    fail: (base) => [...seLinux1_0.fail(base), tweak(withSecurityContexts(base), (p) => { first(p).securityContext.seLinuxOptions = { type: 'spc_t' }; })],
  },
  {
    check: 'procMount', level: 'baseline', since: 0, expect: 'procMount',
    pass: (base) => [tweak(withSecurityContexts(base), (p) => { for (const c of containers(p)) c.securityContext.procMount = 'Default'; p.spec.hostUsers = false; })],
    fail: (base) => [
      tweak(withSecurityContexts(base), (p) => { first(p).securityContext.procMount = 'Unmasked'; p.spec.hostUsers = false; }),
      tweak(withSecurityContexts(base), (p) => { firstInit(p).securityContext.procMount = 'Unmasked'; p.spec.hostUsers = false; }),
    ],
  },
  {
    // Before 1.19 seccomp was set by annotations.
    check: 'seccompProfile_baseline', level: 'baseline', since: 0, expect: 'seccompProfile',
    pass: (base) => [tweak(base, (p) => {
      p.metadata.annotations = { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default', 'container.seccomp.security.alpha.kubernetes.io/container1': 'localhost/testing' };
    })],
    fail: (base) => [
      tweak(base, (p) => { p.metadata.annotations = { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' }; }),
      tweak(base, (p) => { p.metadata.annotations = { 'container.seccomp.security.alpha.kubernetes.io/container1': 'unconfined' }; }),
      tweak(base, (p) => { p.metadata.annotations = { 'container.seccomp.security.alpha.kubernetes.io/initcontainer1': 'unconfined' }; }),
    ],
  },
  {
    check: 'seccompProfile_baseline', level: 'baseline', since: 19, expect: 'seccompProfile',
    pass: (base) => {
      if (base.spec.securityContext?.seccompProfile?.type === 'RuntimeDefault') return [];
      return [tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.seccompProfile = { type: 'RuntimeDefault' }; first(p).securityContext.seccompProfile = { type: 'RuntimeDefault' }; })];
    },
    fail: (base) => [
      tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.seccompProfile = { type: 'Unconfined' }; }),
      tweak(withSecurityContexts(base), (p) => { first(p).securityContext.seccompProfile = { type: 'Unconfined' }; }),
      tweak(withSecurityContexts(base), (p) => { firstInit(p).securityContext.seccompProfile = { type: 'Unconfined' }; }),
    ],
  },
  sysctlFixture(0, sysctls1_0),
  sysctlFixture(27, sysctls1_27),
  sysctlFixture(29, sysctls1_29),
  sysctlFixture(32, sysctls1_32),
  {
    check: 'windowsHostProcess', level: 'baseline', since: 0, expect: 'hostProcess',
    pass: () => [],
    fail: (base) => {
      const windows = tweak(withSecurityContexts(base), (p) => {
        p.spec.securityContext.windowsOptions ??= {};
        for (const c of containers(p)) c.securityContext.windowsOptions ??= {};
      });
      return [
        tweak(windows, (p) => { p.spec.hostNetwork = true; p.spec.securityContext.windowsOptions.hostProcess = true; }),
        tweak(windows, (p) => { p.spec.hostNetwork = true; for (const c of containers(p)) c.securityContext.windowsOptions.hostProcess = true; }),
      ];
    },
  },
  {
    check: 'allowPrivilegeEscalation', level: 'restricted', since: 8, expect: 'allowPrivilegeEscalation',
    pass: () => [],
    fail: (base) => [
      tweak(base, (p) => { first(p).securityContext.allowPrivilegeEscalation = true; }),
      tweak(base, (p) => { firstInit(p).securityContext.allowPrivilegeEscalation = true; }),
      tweak(base, (p) => { delete first(p).securityContext.allowPrivilegeEscalation; }),
      tweak(base, (p) => { delete first(p).securityContext; }),
    ],
  },
  {
    check: 'capabilities_restricted', level: 'restricted', since: 22, expect: 'unrestricted capabilities',
    pass: (base) => [tweak(base, (p) => { for (const c of containers(p)) c.securityContext.capabilities = { drop: ['ALL'], add: ['NET_BIND_SERVICE'] }; })],
    fail: (base) => [
      tweak(base, (p) => { first(p).securityContext.capabilities.drop = []; }),
      tweak(base, (p) => { firstInit(p).securityContext.capabilities.drop = []; }),
      // Dropping each capability by name is not dropping ALL.
      tweak(base, (p) => { for (const c of containers(p)) c.securityContext.capabilities.drop = ['SYS_ADMIN', 'NET_RAW', 'CHOWN', ...allDefaultCapabilities]; }),
      tweak(base, (p) => { for (const c of containers(p)) c.securityContext.capabilities = { drop: ['ALL'], add: allDefaultCapabilities }; }),
    ],
  },
  {
    check: 'restrictedVolumes', level: 'restricted', since: 0, expect: 'restricted volume types',
    pass: (base) => [tweak(base, (p) => {
      p.spec.volumes = [
        { name: 'volume0' }, { name: 'volume1', emptyDir: {} }, { name: 'volume2', secret: { secretName: 'test' } },
        { name: 'volume3', persistentVolumeClaim: { claimName: 'test' } },
        { name: 'volume4', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
        { name: 'volume5', configMap: { name: 'test' } }, { name: 'volume6', projected: { sources: [] } },
        { name: 'volume7', csi: { driver: 'inline.storage.plat.io' } }, { name: 'volume8', ephemeral: {} },
      ];
    })],
    fail: (base) => restrictedVolumeSources.map((source) => tweak(base, (p) => { p.spec.volumes = [{ name: 'volume1', ...source }]; })),
  },
  {
    check: 'runAsNonRoot', level: 'restricted', since: 0, expect: 'runAsNonRoot',
    pass: (base) => [
      tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.runAsNonRoot = true; for (const c of containers(p)) delete c.securityContext.runAsNonRoot; }),
      tweak(withSecurityContexts(base), (p) => { delete p.spec.securityContext.runAsNonRoot; for (const c of containers(p)) c.securityContext.runAsNonRoot = true; }),
    ],
    fail: (base) => [
      tweak(withSecurityContexts(base), (p) => { delete p.spec.securityContext.runAsNonRoot; for (const c of containers(p)) delete c.securityContext.runAsNonRoot; }),
      tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.runAsNonRoot = false; }),
      tweak(withSecurityContexts(base), (p) => { first(p).securityContext.runAsNonRoot = false; }),
      tweak(withSecurityContexts(base), (p) => { firstInit(p).securityContext.runAsNonRoot = false; }),
    ],
  },
  {
    check: 'runAsUser', level: 'restricted', since: 23, expect: 'runAsUser',
    pass: (base) => [tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.runAsUser = 1000; for (const c of containers(p)) c.securityContext.runAsUser = 1000; })],
    fail: (base) => [
      tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.runAsUser = 0; }),
      tweak(withSecurityContexts(base), (p) => { first(p).securityContext.runAsUser = 0; }),
      tweak(withSecurityContexts(base), (p) => { firstInit(p).securityContext.runAsUser = 0; }),
    ],
  },
  {
    check: 'seccompProfile_restricted', level: 'restricted', since: 19, expect: 'seccompProfile',
    pass: (base) => [
      tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.seccompProfile = { type: 'RuntimeDefault' }; }),
      tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.seccompProfile = { type: 'Localhost', localhostProfile: 'testing' }; }),
      tweak(withSecurityContexts(base), (p) => {
        delete p.spec.securityContext.seccompProfile;
        first(p).securityContext.seccompProfile = { type: 'RuntimeDefault' };
        firstInit(p).securityContext.seccompProfile = { type: 'Localhost', localhostProfile: 'testing' };
      }),
    ],
    fail: (base) => [
      tweak(withSecurityContexts(base), (p) => { delete p.spec.securityContext.seccompProfile; }),
      tweak(withSecurityContexts(base), (p) => { p.spec.securityContext.seccompProfile = { type: 'Unconfined' }; }),
      tweak(withSecurityContexts(base), (p) => { delete p.spec.securityContext.seccompProfile; first(p).securityContext.seccompProfile = { type: 'RuntimeDefault' }; }),
      tweak(withSecurityContexts(base), (p) => { delete p.spec.securityContext.seccompProfile; firstInit(p).securityContext.seccompProfile = { type: 'RuntimeDefault' }; }),
      tweak(withSecurityContexts(base), (p) => {
        delete p.spec.securityContext.seccompProfile;
        first(p).securityContext.seccompProfile = { type: 'RuntimeDefault' };
        firstInit(p).securityContext.seccompProfile = { type: 'Unconfined' };
      }),
    ],
  },
];

/** The data that applies to `check` at `level` 1.`minor`: its latest `since` at or below it (baseline data also holds for restricted). */
export function fixturesAt(level: 'baseline' | 'restricted', minor: number): CheckFixture[] {
  const applying = fixtures.filter((f) => f.since <= minor && (f.level === 'baseline' || level === 'restricted'));
  return applying.filter((f) => !applying.some((other) => other.check === f.check && other.since > f.since));
}
