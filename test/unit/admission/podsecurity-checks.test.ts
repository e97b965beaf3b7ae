// The Pod Security Standards check by check and version by version: every
// check's passing and failing pods (test/support/podsecurity-fixtures.ts,
// after upstream's fixtures) at baseline and restricted for v1.0 … v1.32 and
// latest, the versions where rules begin, and each check's words.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Evaluator, violatesText } from '../../../src/admission/plugins/podsecurity/evaluator.js';
import { checks } from '../../../src/admission/plugins/podsecurity/checks.js';
import type { LevelVersion, Version } from '../../../src/admission/plugins/podsecurity/levels.js';
import { fixtures, fixturesAt, minimalPod, newestVersion, type Pod } from '../../support/podsecurity-fixtures.js';

const evaluator = new Evaluator();
const judge = (level: 'baseline' | 'restricted', version: Version, pod: Pod) => evaluator.evaluate({ level, version }, pod);

describe('every check at every version (upstream fixtures)', () => {
  test('the newest version a rule names is 1.32, and latest is judged as it', () => {
    assert.equal(evaluator.newestVersion, newestVersion);
    for (const level of ['baseline', 'restricted'] as const) {
      assert.equal(evaluator.checksFor({ level, version: 'latest' }), evaluator.checksFor({ level, version: newestVersion }));
      assert.equal(evaluator.checksFor({ level, version: 40 }), evaluator.checksFor({ level, version: newestVersion }));
    }
    assert.deepEqual(evaluator.checksFor({ level: 'privileged', version: 'latest' }), []);
  });

  for (const level of ['baseline', 'restricted'] as const) {
    test(`${level}: the smallest valid pods pass, each check's passing pods pass and failing pods fail, v1.0 to v1.${newestVersion} and latest`, () => {
      let judged = 0;
      const versions: Version[] = [...Array.from({ length: newestVersion + 1 }, (_, i) => i), 'latest'];
      for (const version of versions) {
        const minor = version === 'latest' ? newestVersion : version;
        const bases = [minimalPod(level, minor)];
        if (level === 'restricted' && minor >= 25) bases.push(minimalPod(level, minor, 'linux'), minimalPod(level, minor, 'windows'));
        for (const base of bases) {
          const result = judge(level, version, base);
          assert.ok(result.allowed, `${level}:${version} minimal pod ${JSON.stringify(base.spec.os)}: ${result.details()}`);
        }
        const base = bases[0]!;
        const applying = fixturesAt(level, minor);
        // Every check of the level at this version has data.
        const ids = new Set(applying.map((f) => f.check));
        for (const check of checks) {
          const applies = check.revisions[0]!.since <= minor && (check.level === 'baseline' || level === 'restricted');
          assert.equal(ids.has(check.id), applies, `${check.id} at ${level}:${version}`);
        }
        for (const fixture of applying) {
          for (const [i, pod] of fixture.pass(base).entries()) {
            const result = judge(level, version, pod);
            assert.ok(result.allowed, `${level}:${version} ${fixture.check} pass ${i}: ${result.details()}`);
            judged++;
          }
          const failing = fixture.fail(base);
          assert.ok(failing.length > 0);
          for (const [i, pod] of failing.entries()) {
            const result = judge(level, version, pod);
            assert.ok(!result.allowed, `${level}:${version} ${fixture.check} fail ${i} was allowed`);
            assert.ok(result.details().includes(fixture.expect), `${level}:${version} ${fixture.check} fail ${i}: ${result.details()}`);
            judged++;
          }
        }
      }
      assert.ok(judged > 1000, `${judged} pods judged`);
    });
  }

  test('the fixtures cover every check upstream 1.32 enables', () => {
    assert.deepEqual(new Set(fixtures.map((f) => f.check)), new Set(checks.map((c) => c.id)));
  });
});

describe('versions where rules begin', () => {
  const base = (minor: number) => minimalPod('restricted', minor);
  const at = (version: Version, pod: Pod, level: 'baseline' | 'restricted' = 'restricted') => judge(level, version, pod).allowed;

  test('allowPrivilegeEscalation from 1.8, seccomp fields from 1.19, capabilities from 1.22, runAsUser from 1.23', () => {
    const pod = minimalPod('restricted', 0);
    assert.ok(at(7, pod));
    assert.ok(!at(8, pod));
    const pod8 = base(8);
    assert.ok(at(18, pod8));
    assert.ok(!at(19, pod8));
    const pod19 = base(19);
    assert.ok(at(21, pod19));
    assert.ok(!at(22, pod19));
    const root = structuredClone(base(22));
    root.spec.securityContext.runAsUser = 0;
    assert.ok(at(22, root));
    assert.ok(!at(23, root));
  });

  test('seccomp annotations count until 1.18; from 1.19 the fields do', () => {
    const annotated = minimalPod('baseline', 0);
    annotated.metadata.annotations = { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined' };
    assert.ok(!at(18, annotated, 'baseline'));
    assert.ok(at(19, annotated, 'baseline'));
    const field = minimalPod('baseline', 0);
    field.spec.securityContext = { seccompProfile: { type: 'Unconfined' } };
    assert.ok(at(18, field, 'baseline'));
    assert.ok(!at(19, field, 'baseline'));
  });

  test('Windows pods need not set Linux-only fields from 1.25', () => {
    const windows = minimalPod('restricted', 25, 'windows');
    assert.ok(!at(24, windows));
    assert.ok(at(25, windows));
    assert.ok(at('latest', windows));
  });

  test('sysctls allowed grow at 1.27, 1.29 and 1.32; container_engine_t is allowed from 1.31', () => {
    const sysctl = (name: string) => ({ metadata: {}, spec: { containers: [{ name: 'c' }], securityContext: { sysctls: [{ name, value: '1' }] } } });
    assert.deepEqual([26, 27].map((v) => at(v, sysctl('net.ipv4.ip_local_reserved_ports'), 'baseline')), [false, true]);
    assert.deepEqual([28, 29].map((v) => at(v, sysctl('net.ipv4.tcp_keepalive_time'), 'baseline')), [false, true]);
    assert.deepEqual([31, 32, 'latest' as const].map((v) => at(v, sysctl('net.ipv4.tcp_rmem'), 'baseline')), [false, true, true]);
    const engine = { metadata: {}, spec: { containers: [{ name: 'c', securityContext: { seLinuxOptions: { type: 'container_engine_t' } } }] } };
    assert.deepEqual([30, 31].map((v) => at(v, engine, 'baseline')), [false, true]);
  });
});

describe('what each check says', () => {
  const pod = (spec: Record<string, any>, metadata: Record<string, any> = {}): Pod => ({ metadata, spec });
  const said = (lv: LevelVersion, p: Pod) => evaluator.evaluate(lv, p).details();
  const baseline: LevelVersion = { level: 'baseline', version: 'latest' };

  test('the denial of a privileged pod at restricted:latest lists every violation, baseline checks first', () => {
    const p = pod({ containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] });
    const lv: LevelVersion = { level: 'restricted', version: 'latest' };
    assert.equal(violatesText(lv, evaluator.evaluate(lv, p)),
      'violates PodSecurity "restricted:latest": privileged (container "c" must not set securityContext.privileged=true), '
      + 'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
      + 'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
      + 'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
      + 'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")');
    assert.equal(evaluator.evaluate(lv, p).reasons(), 'privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile');
  });

  test('host ports, namespaces, paths and capabilities', () => {
    assert.equal(said(baseline, pod({ containers: [{ name: 'a', ports: [{ hostPort: 0 }] }, { name: 'b', ports: [{ hostPort: 0 }, { hostPort: 20 }] }] })),
      'hostPort (container "b" uses hostPort 20)');
    // Ports sort as text, as upstream's set of strings.
    assert.equal(said(baseline, pod({ containers: [{ name: 'b', ports: [{ hostPort: 9 }, { hostPort: 10 }] }, { name: 'c', ports: [{ hostPort: 9 }, { hostPort: 30 }] }] })),
      'hostPort (containers "b", "c" use hostPorts 10, 30, 9)');
    assert.equal(said(baseline, pod({ hostNetwork: true, hostPID: true, hostIPC: true, containers: [] })), 'host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)');
    assert.equal(said(baseline, pod({ containers: [], volumes: [{ name: 'a', hostPath: { path: '/' } }, { name: 'b', emptyDir: {} }, { name: 'c', hostPath: { path: '/x' } }] })),
      'hostPath volumes (volumes "a", "c")');
    assert.equal(said(baseline, pod({ containers: [{ name: 'a', securityContext: { capabilities: { add: ['NET_RAW', 'CHOWN', 'SYS_ADMIN'] } } }, { name: 'b', securityContext: { capabilities: { add: ['NET_RAW'] } } }] })),
      'non-default capabilities (containers "a", "b" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)');
  });

  test('AppArmor, SELinux, procMount, seccomp, sysctls and hostProcess', () => {
    assert.equal(said(baseline, pod(
      { securityContext: { appArmorProfile: { type: 'Unconfined' } }, containers: [{ name: 'a', securityContext: { appArmorProfile: { type: 'Unconfined' } } }] },
      { annotations: { 'container.apparmor.security.beta.kubernetes.io/a': 'unconfined' } },
    )), 'forbidden AppArmor profiles (pod and container "a" and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a="unconfined"")');
    assert.equal(said(baseline, pod({ securityContext: { seLinuxOptions: { type: 'spc_t', user: 'u' } }, containers: [{ name: 'a', securityContext: { seLinuxOptions: { role: 'r' } } }] })),
      'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)');
    assert.equal(said(baseline, pod({ containers: [{ name: 'a', securityContext: { procMount: 'Unmasked' } }] })),
      'procMount (container "a" must not set securityContext.procMount to "Unmasked")');
    assert.equal(said(baseline, pod({ securityContext: { seccompProfile: { type: 'Unconfined' } }, containers: [{ name: 'a', securityContext: { seccompProfile: { type: 'Unconfined' } } }] })),
      'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")');
    assert.equal(said({ level: 'baseline', version: 18 }, pod({ containers: [{ name: 'a' }] }, { annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'unconfined', 'container.seccomp.security.alpha.kubernetes.io/a': 'unconfined' } })),
      'seccompProfile (forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="unconfined", seccomp.security.alpha.kubernetes.io/pod="unconfined")');
    assert.equal(said(baseline, pod({ securityContext: { sysctls: [{ name: 'kernel.msgmax' }, { name: 'net.ipv4.tcp_syncookies' }, { name: 'vm.x' }] }, containers: [] })),
      'forbidden sysctls (kernel.msgmax, vm.x)');
    assert.equal(said(baseline, pod({ securityContext: { windowsOptions: { hostProcess: true } }, containers: [{ name: 'a', securityContext: { windowsOptions: { hostProcess: true } } }] })),
      'hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)');
  });

  test('restricted volumes, runAsNonRoot, runAsUser and capabilities', () => {
    const restricted: LevelVersion = { level: 'restricted', version: 'latest' };
    const good = minimalPod('restricted', newestVersion);
    const withVolumes = structuredClone(good);
    withVolumes.spec.volumes = [{ name: 'a', nfs: { server: 's', path: '/' } }, { name: 'b', hostPath: { path: '/' } }, { name: 'c', nfs: { server: 's', path: '/' } }];
    assert.equal(said(restricted, withVolumes), 'restricted volume types (volumes "a", "b", "c" use restricted volume types "hostPath", "nfs")');
    const nonRoot = structuredClone(good);
    nonRoot.spec.securityContext.runAsNonRoot = false;
    nonRoot.spec.containers[0].securityContext.runAsNonRoot = false;
    assert.equal(said(restricted, nonRoot), 'runAsNonRoot != true (pod and container "container1" must not set securityContext.runAsNonRoot=false)');
    const root = structuredClone(good);
    root.spec.initContainers[0].securityContext.runAsUser = 0;
    assert.equal(said(restricted, root), 'runAsUser=0 (container "initcontainer1" must not set runAsUser=0)');
    const caps = structuredClone(good);
    caps.spec.containers[0].securityContext.capabilities = { add: ['SYS_TIME'] };
    assert.equal(said(restricted, caps),
      'unrestricted capabilities (container "container1" must set securityContext.capabilities.drop=["ALL"]; container "container1" must not include "SYS_TIME" in securityContext.capabilities.add)');
  });
});
