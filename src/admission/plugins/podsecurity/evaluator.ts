// Which checks a level and version runs, worked out once for every policy
// version (v1.0 up to the newest a check revision names; later versions and
// `latest` are judged as the newest), as upstream's check registry: baseline
// runs the baseline checks, restricted the restricted ones plus every
// baseline check no restricted revision of that version overrides. Checks
// run baseline first, each level's by id, so messages list reasons in
// upstream's order.

import { checks as defaultChecks, type Check, type CheckFn, type PodParts, type Violation } from './checks.js';
import { latest, levelVersionText, type LevelVersion } from './levels.js';

/** The outcome of one level-version for one pod: the violations in order; allowed when there are none. */
export class Evaluation {
  constructor(readonly violations: readonly Violation[]) {}

  get allowed(): boolean {
    return this.violations.length === 0;
  }

  /** Reasons only: `privileged, allowPrivilegeEscalation != false` (the per-pod lines of a namespace's check). */
  reasons(): string {
    return this.violations.map((v) => v.reason).join(', ');
  }

  /** Reasons with their details: `privileged (container "c" must not set securityContext.privileged=true), …`. */
  details(): string {
    return this.violations.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
  }
}

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class Evaluator {
  private readonly baseline: CheckFn[][] = [];
  private readonly restricted: CheckFn[][] = [];
  /** The newest version a revision names: later ones (and latest) run its checks. */
  readonly newestVersion: number;

  constructor(checks: readonly Check[] = defaultChecks) {
    this.newestVersion = Math.max(...checks.map((c) => c.revisions.at(-1)!.since));
    const ordered = [
      ...checks.filter((c) => c.level === 'baseline').sort((a, b) => byteOrder(a.id, b.id)),
      ...checks.filter((c) => c.level === 'restricted').sort((a, b) => byteOrder(a.id, b.id)),
    ];
    for (let minor = 0; minor <= this.newestVersion; minor++) {
      const applying = ordered.flatMap((check) => {
        const revision = [...check.revisions].reverse().find((r) => r.since <= minor);
        return revision ? [{ check, revision }] : [];
      });
      const overridden = new Set(applying.flatMap(({ check, revision }) => (check.level === 'restricted' ? revision.overrides ?? [] : [])));
      this.baseline[minor] = applying.filter(({ check }) => check.level === 'baseline').map(({ revision }) => revision.check);
      this.restricted[minor] = applying.filter(({ check }) => check.level === 'restricted' || !overridden.has(check.id)).map(({ revision }) => revision.check);
    }
  }

  /** The checks `lv` runs (none for privileged). */
  checksFor(lv: LevelVersion): readonly CheckFn[] {
    if (lv.level === 'privileged') return [];
    const minor = lv.version === latest ? this.newestVersion : Math.min(lv.version, this.newestVersion);
    return (lv.level === 'baseline' ? this.baseline : this.restricted)[minor]!;
  }

  evaluate(lv: LevelVersion, pod: PodParts): Evaluation {
    const violations: Violation[] = [];
    for (const check of this.checksFor(lv)) {
      const violation = check(pod);
      if (violation) violations.push(violation);
    }
    return new Evaluation(violations);
  }
}

/** `violates PodSecurity "restricted:latest": …` (upstream's words for an enforced denial). */
export function violatesText(lv: LevelVersion, evaluation: Evaluation): string {
  return `violates PodSecurity "${levelVersionText(lv)}": ${evaluation.details()}`;
}

/** `would violate PodSecurity "baseline:v1.30": …` (warnings and audit annotations). */
export function wouldViolateText(lv: LevelVersion, evaluation: Evaluation): string {
  return `would violate PodSecurity "${levelVersionText(lv)}": ${evaluation.details()}`;
}
