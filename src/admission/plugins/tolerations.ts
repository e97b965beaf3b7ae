// Tolerations as upstream merges them: a toleration another one already
// covers (a superset: any key with an empty-key Exists, any effect with an
// empty effect, a shorter or equal NoExecute time) is dropped, the first of
// two equal ones kept. RuntimeClass merges its class's tolerations this way.

type Obj = Record<string, any>;

function same(a: Obj, b: Obj): boolean {
  return (a.key ?? '') === (b.key ?? '') && (a.operator ?? '') === (b.operator ?? '') && (a.value ?? '') === (b.value ?? '')
    && (a.effect ?? '') === (b.effect ?? '') && (a.tolerationSeconds ?? null) === (b.tolerationSeconds ?? null);
}

/** Whether `wide` tolerates every taint `t` does. */
export function tolerationCovers(wide: Obj, t: Obj): boolean {
  if (same(wide, t)) return true;
  const wideKey = wide.key ?? '';
  if ((t.key ?? '') !== wideKey && (wideKey !== '' || wide.operator !== 'Exists')) return false;
  if ((t.effect ?? '') !== (wide.effect ?? '') && (wide.effect ?? '') !== '') return false;
  if (wide.effect === 'NoExecute' && wide.tolerationSeconds != null) {
    if (t.tolerationSeconds == null || t.tolerationSeconds > wide.tolerationSeconds) return false;
  }
  switch (wide.operator ?? '') {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && (t.value ?? '') === (wide.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function mergeTolerations(first: readonly Obj[], second: readonly Obj[]): Obj[] {
  const all = [...first, ...second];
  const merged: Obj[] = [];
  all.forEach((t, i) => {
    if (merged.some((kept) => tolerationCovers(kept, t))) return;
    if (all.slice(i + 1).some((later) => !same(t, later) && tolerationCovers(later, t))) return;
    merged.push(t);
  });
  return merged;
}
