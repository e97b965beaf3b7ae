// A watchers worker: many watch streams over HTTPS, one TLS connection each,
// spread over several keep-alive-free https.Agents. In marker mode a stream
// only searches its raw bytes for the armed marker and notes when it first
// sees it; in sequence mode it parses every event and keeps its
// resourceVersion, so the main thread can check that nothing was lost or
// reordered.

import { parentPort, workerData } from 'node:worker_threads';
import { Agent, request } from 'node:https';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { sharedNow, type SequenceReport, type WatchersReply, type WatchersRequest, type WatchersWorkerData, type WatchMode } from './watchers-protocol.js';

const data = workerData as WatchersWorkerData;
const base = new URL(data.url);
const agents: Agent[] = [];
const OPEN_TIMEOUT_MS = 30_000;

interface Stream {
  mode: WatchMode;
  req: ClientRequest;
  res?: IncomingMessage;
  ended: boolean;
  /** Marker mode: the last bytes of the previous chunk, so a marker split over two chunks is found. */
  tail: Buffer;
  /** Marker mode: when the armed marker arrived (0: not yet). */
  seenAt: number;
  /** Sequence mode: the unfinished line, and the resourceVersions of the events so far. */
  pending: string;
  revisions: number[];
  error?: string;
}

const streams: Stream[] = [];
let marker: Buffer | undefined;
let seenCount = 0;
/** Marker-mode streams when the marker was armed. */
let armedCount = 0;
let wake: (() => void) | undefined;

function agentFor(index: number): Agent {
  const a = Math.floor(index / data.perAgent);
  while (agents.length <= a) {
    agents.push(new Agent({ keepAlive: false, maxSockets: Infinity, ca: data.creds.ca, cert: data.creds.cert, key: data.creds.key }));
  }
  return agents[a]!;
}

function onMarkerData(s: Stream, chunk: Buffer): void {
  if (!marker || s.seenAt !== 0) return;
  let found = chunk.indexOf(marker) >= 0;
  if (!found && s.tail.length > 0) found = Buffer.concat([s.tail, chunk.subarray(0, marker.length)]).indexOf(marker) >= 0;
  if (found) {
    s.seenAt = sharedNow();
    if (++seenCount === armedCount) wake?.();
  } else {
    s.tail = Buffer.from(chunk.subarray(Math.max(0, chunk.length - marker.length + 1)));
  }
}

function onSequenceData(s: Stream, chunk: Buffer): void {
  s.pending += chunk.toString('utf8');
  let nl: number;
  while ((nl = s.pending.indexOf('\n')) >= 0) {
    const line = s.pending.slice(0, nl);
    s.pending = s.pending.slice(nl + 1);
    if (!line.trim()) continue;
    const event = JSON.parse(line);
    if (event.type === 'BOOKMARK') continue;
    if (event.type === 'ERROR') {
      s.error = `ERROR event: ${event.object?.message}`;
      s.ended = true;
      continue;
    }
    s.revisions.push(Number(event.object.metadata.resourceVersion));
  }
  wake?.();
}

function openOne(path: string, mode: WatchMode): Promise<void> {
  return new Promise((resolve, reject) => {
    const index = streams.length;
    const req = request({ host: base.hostname, port: base.port, path, method: 'GET', agent: agentFor(index), headers: { Accept: 'application/json' } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`watch ${path}: HTTP ${res.statusCode}`));
        res.resume();
        return;
      }
      s.res = res;
      res.on('data', (chunk: Buffer) => (mode === 'marker' ? onMarkerData(s, chunk) : onSequenceData(s, chunk)));
      const end = () => { s.ended = true; wake?.(); };
      res.on('end', end);
      res.on('error', end);
      res.on('close', end);
      resolve();
    });
    const s: Stream = { mode, req, ended: false, tail: Buffer.alloc(0), seenAt: 0, pending: '', revisions: [] };
    streams.push(s);
    req.setTimeout(OPEN_TIMEOUT_MS, () => { if (!s.res) req.destroy(new Error(`watch ${path}: no answer in ${OPEN_TIMEOUT_MS} ms`)); });
    req.on('error', (e) => { s.ended = true; reject(e); });
    req.end();
  });
}

async function open(path: string, count: number, mode: WatchMode, parallel: number): Promise<number> {
  const t = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, async () => {
    while (next < count) {
      next++;
      await openOne(path, mode);
    }
  }));
  return performance.now() - t;
}

/** Waits until `done()` or `timeoutMs`; `wake` is called by the streams whenever something arrived. */
async function waitUntil(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now())));
      wake = () => { clearTimeout(t); resolve(); };
    });
    wake = undefined;
  }
}

function verify(expected: Float64Array): SequenceReport {
  const want = new Set(expected);
  const r: SequenceReport = { watchers: 0, exact: 0, lost: 0, reordered: 0, duplicated: 0, unexpected: 0, ended: 0, events: 0 };
  for (const s of streams) {
    if (s.mode !== 'sequence') continue;
    r.watchers++;
    r.events += s.revisions.length;
    if (s.ended) r.ended++;
    const seen = new Set<number>();
    let exact = s.revisions.length === expected.length;
    for (let i = 0; i < s.revisions.length; i++) {
      const rv = s.revisions[i]!;
      if (exact && rv !== expected[i]) exact = false;
      if (i > 0 && rv < s.revisions[i - 1]!) r.reordered++;
      if (seen.has(rv)) r.duplicated++;
      else if (!want.has(rv)) r.unexpected++;
      seen.add(rv);
    }
    for (const rv of expected) if (!seen.has(rv)) r.lost++;
    if (exact) r.exact++;
  }
  return r;
}

function closeAll(): void {
  for (const s of streams) s.req.destroy();
  streams.length = 0;
  for (const a of agents) a.destroy();
  agents.length = 0;
  marker = undefined;
}

async function handle(msg: WatchersRequest): Promise<WatchersReply> {
  switch (msg.op) {
    case 'open':
      return { id: msg.id, ok: true, openMs: await open(msg.path, msg.count, msg.mode, msg.parallel) };
    case 'arm':
      marker = Buffer.from(msg.marker);
      seenCount = 0;
      armedCount = streams.filter((s) => s.mode === 'marker').length;
      for (const s of streams) {
        s.seenAt = 0;
        s.tail = Buffer.alloc(0);
      }
      return { id: msg.id, ok: true };
    case 'collect': {
      const markerStreams = streams.filter((s) => s.mode === 'marker');
      await waitUntil(() => seenCount >= markerStreams.length, msg.timeoutMs);
      const seen = markerStreams.filter((s) => s.seenAt !== 0);
      const times = Float64Array.from(seen, (s) => s.seenAt);
      marker = undefined;
      return { id: msg.id, ok: true, times, missing: markerStreams.length - seen.length };
    }
    case 'verify': {
      const n = msg.expected.length;
      await waitUntil(() => streams.every((s) => s.mode !== 'sequence' || s.ended || s.revisions.length >= n), msg.timeoutMs);
      return { id: msg.id, ok: true, report: verify(msg.expected) };
    }
    case 'close':
      closeAll();
      return { id: msg.id, ok: true };
  }
}

parentPort!.on('message', async (msg: WatchersRequest) => {
  let reply: WatchersReply;
  try {
    reply = await handle(msg);
  } catch (e) {
    reply = { id: msg.id, ok: false, error: (e as Error)?.stack ?? String(e) };
  }
  parentPort!.postMessage(reply, reply.ok && reply.times ? [reply.times.buffer as ArrayBuffer] : []);
});
