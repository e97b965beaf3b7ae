// Summarises a V8 .cpuprofile (from `node --cpu-prof`): the functions with the
// most self time and the most inclusive time. Used by the full run's `--cpu-prof`, and
// alone: npm run bench -- profile <file.cpuprofile> [--top N]

import { readFileSync } from 'node:fs';
import { originalPosition } from '../src/machinery/sourcemaps.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface HotSpot {
  where: string;
  selfMs: number;
  totalMs: number;
}

function label(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  // A frame of the CLI's bundle is named by its source file and line (the line table beside each chunk).
  const source = url ? originalPosition(url, lineNumber + 1) : undefined;
  const file = (source?.file ?? url).replace(/^file:\/\//, '').replace(/^.*\/(dist|node_modules|src)\//, '$1/');
  return `${functionName || '(anonymous)'} ${file ? `${file}:${source?.line ?? lineNumber + 1}` : ''}`.trim();
}

export function summariseProfile(path: string): { totalMs: number; spots: HotSpot[] } {
  const prof = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  // Self time per node from the samples and their time deltas (µs).
  const selfUs = new Map<number, number>();
  const samples = prof.samples ?? [];
  const deltas = prof.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    const dt = deltas[i + 1] ?? deltas[i] ?? 0;
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, dt));
  }

  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const l = label(node);
    self.set(l, (self.get(l) ?? 0) + us);
    // Inclusive: count once per distinct label on the stack (recursion-safe).
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const cl = label(byId.get(cur)!);
      if (seen.has(cl)) continue;
      seen.add(cl);
      total.set(cl, (total.get(cl) ?? 0) + us);
    }
  }
  const spots = [...self.keys()].map((where) => ({ where, selfMs: self.get(where)! / 1000, totalMs: total.get(where)! / 1000 }));
  for (const [where, t] of total) if (!self.has(where)) spots.push({ where, selfMs: 0, totalMs: t / 1000 });
  return { totalMs: (prof.endTime - prof.startTime) / 1000, spots };
}

export function formatProfile(path: string, top = 30): string {
  const { totalMs, spots } = summariseProfile(path);
  const line = (s: HotSpot) => `${s.selfMs.toFixed(0).padStart(7)} ms self ${s.totalMs.toFixed(0).padStart(7)} ms total  ${s.where}`;
  const interesting = (s: HotSpot) => !/^\((root|program|idle)\)/.test(s.where);
  return [
    `profile ${path} (${totalMs.toFixed(0)} ms wall)`,
    `-- top self time --`,
    ...[...spots].sort((a, b) => b.selfMs - a.selfMs).slice(0, top).map(line),
    `-- top inclusive time (our code and libraries) --`,
    ...[...spots].filter(interesting).filter((s) => /dist\/|node_modules\//.test(s.where))
      .sort((a, b) => b.totalMs - a.totalMs).slice(0, top).map(line),
  ].join('\n');
}
