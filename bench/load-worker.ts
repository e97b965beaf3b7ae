// The load generator, run in a worker_thread so that building requests and
// parsing responses does not share the benchmark's main event loop. It keeps
// one keep-alive https.Agent (maxSockets = concurrency) for its whole life and
// runs one phase per message from the main thread, answering with the
// per-request latencies. The same agent (16 sockets per server) also drives the
// no-work server, so both see the same warm client.

import { parentPort, workerData } from 'node:worker_threads';
import { Agent } from 'node:https';
import { Reply, sendJson } from './http.js';
import type { LoadWorkerData, PhaseReply, PhaseRequest, PhaseSpec } from './load-protocol.js';
import { seededRandom } from '../test/support/random.js';
import { configMap, deployment, pod } from './bodies.js';

const data = workerData as LoadWorkerData;
const base = new URL(data.url);
const bearer = data.bearerToken === undefined ? undefined : { Authorization: `Bearer ${data.bearerToken}` };
const agent = new Agent({
  keepAlive: true, maxSockets: data.concurrency, maxFreeSockets: data.concurrency,
  ca: data.creds.ca, ...(bearer ? {} : { cert: data.creds.cert, key: data.creds.key }),
});
const REQUEST_TIMEOUT_MS = 30_000;

const noWorkPort = data.noWorkUrl ? Number(new URL(data.noWorkUrl).port) : undefined;

function send(method: string, path: string, body?: unknown, port = Number(base.port)): Promise<Reply> {
  return sendJson(agent, port, method, path, body, REQUEST_TIMEOUT_MS, bearer);
}

class UnexpectedStatus extends Error {
  constructor(method: string, path: string, r: Reply) {
    super(`${method} ${path}: HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 500)}`);
  }
}

function expect(r: Reply, method: string, path: string, ...codes: number[]): Reply {
  if (!codes.includes(r.status)) throw new UnexpectedStatus(method, path, r);
  return r;
}

/** The freshest copy of each object we have seen, for the update phase. */
const latest = new Map<string, any>();

const nameOf = (prefix: string, i: number) => `${prefix}${String(i).padStart(5, '0')}`;
const serviceAccount = (name: string, labels: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, labels } });
/** The labels of the i-th unconditional replace of a round. */
const replaceLabels = (round: number, i: number) => ({ app: 'bench', 'bench-round': String(round), 'bench-seq': String(i) });
const collection = (ns: string) => `/api/v1/namespaces/${ns}/serviceaccounts`;
const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/** Occurrences of `needle` in `hay` (counts list items by their names without parsing them). */
function occurrences(hay: Buffer, needle: Buffer): number {
  let n = 0;
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + needle.length)) n++;
  return n;
}

/** The continue token of a list reply, read from its metadata (which precedes the items) without parsing the items. */
function continueOf(body: Buffer): string | undefined {
  const head = body.subarray(0, Math.min(body.length, 4096)).toString('utf8');
  const items = head.indexOf('"items":');
  const m = /"continue":"([^"]*)"/.exec(items >= 0 ? head.slice(0, items) : head);
  return m && m[1] ? m[1] : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** Runs `total` operations from `concurrency` loops; op(i) is timed including its retries. */
async function drive(total: number, op: (i: number) => Promise<void>, concurrency = data.concurrency): Promise<{ latencies: Float64Array; elapsedMs: number }> {
  const latencies = new Float64Array(total);
  let next = 0;
  let failed: unknown;
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, data.concurrency, total)) }, async () => {
    while (next < total && failed === undefined) {
      const i = next++;
      const t = performance.now();
      try {
        await op(i);
      } catch (e) {
        failed ??= e;
        return;
      }
      latencies[i] = performance.now() - t;
    }
  }));
  if (failed !== undefined) throw failed;
  return { latencies, elapsedMs: performance.now() - started };
}

async function runPhase(spec: PhaseSpec): Promise<{ latencies: Float64Array; elapsedMs: number; notes: Record<string, number>; values?: Float64Array }> {
  const notes: Record<string, number> = {};
  switch (spec.kind) {
    case 'namespaces': {
      const r = await drive(spec.names.length, async (i) => {
        const body = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: spec.names[i] } };
        expect(await send('POST', '/api/v1/namespaces', body), 'POST', '/api/v1/namespaces', 201, 409);
      });
      return { ...r, notes };
    }
    case 'create': {
      const path = collection(spec.namespace);
      const r = await drive(spec.count, async (i) => {
        const body = serviceAccount(nameOf(spec.prefix, (spec.first ?? 0) + i), { app: 'bench' });
        const reply = expect(await send('POST', path, body), 'POST', path, 201);
        if (spec.remember) latest.set(`${spec.namespace}/${body.metadata.name}`, JSON.parse(reply.body.toString('utf8')));
      });
      return { ...r, notes };
    }
    case 'create-pod': case 'create-deployment': {
      const [path, body] = spec.kind === 'create-pod' ? [`/api/v1/namespaces/${spec.namespace}/pods`, pod] : [`/apis/apps/v1/namespaces/${spec.namespace}/deployments`, deployment];
      const r = await drive(spec.count, async (i) => {
        expect(await send('POST', path, body(nameOf(spec.prefix, i))), 'POST', path, 201);
      });
      return { ...r, notes };
    }
    case 'get': {
      const random = seededRandom(spec.seed);
      const picks = Array.from({ length: spec.count }, () => Math.floor(random() * spec.population));
      const r = await drive(spec.count, async (i) => {
        const name = nameOf(spec.prefix, picks[i]!);
        const path = `${spec.collectionPath ?? collection(spec.namespace)}/${name}${spec.anyVersion ? '?resourceVersion=0' : ''}`;
        const reply = expect(await send('GET', path), 'GET', path, 200);
        if (spec.unparsed) {
          if (reply.body.indexOf(`"name":"${name}"`) < 0) throw new Error(`GET ${path} returned ${reply.body.toString('utf8').slice(0, 200)}`);
          return;
        }
        const obj = JSON.parse(reply.body.toString('utf8'));
        if (obj?.metadata?.name !== name) throw new Error(`GET ${path} returned ${reply.body.toString('utf8').slice(0, 200)}`);
        latest.set(`${spec.namespace}/${name}`, obj);
      });
      return { ...r, notes };
    }
    case 'update': {
      let conflicts = 0;
      let fetched = 0;
      const r = await drive(spec.count, async (i) => {
        const name = nameOf(spec.prefix, i % spec.population);
        const key = `${spec.namespace}/${name}`;
        const path = `${spec.collectionPath ?? collection(spec.namespace)}/${name}`;
        const target = spec.status ? `${path}/status` : path;
        let obj = latest.get(key);
        for (let attempt = 0; ; attempt++) {
          if (!obj) {
            fetched++;
            obj = JSON.parse(expect(await send('GET', path), 'GET', path, 200).body.toString('utf8'));
          }
          if (spec.status && spec.statusCount) obj.status = { ...obj.status, [spec.statusCount]: spec.round * spec.count + i + 1 };
          else if (spec.status) obj.status = { ...obj.status, message: `round ${spec.round}, write ${i}` };
          else obj.metadata.labels = { ...obj.metadata.labels, 'bench-round': String(spec.round), 'bench-seq': String(i) };
          const reply = await send('PUT', target, obj);
          if (reply.status === 409 && attempt < 5) {
            conflicts++;
            obj = undefined;
            continue;
          }
          latest.set(key, JSON.parse(expect(reply, 'PUT', target, 200).body.toString('utf8')));
          return;
        }
      });
      notes.conflicts = conflicts;
      notes.refetches = fetched;
      return { ...r, notes };
    }
    case 'replace': {
      const r = await drive(spec.count, async (j) => {
        const i = (spec.first ?? 0) + j;
        const name = nameOf(spec.prefix, i % spec.population);
        const path = `${collection(spec.namespace)}/${name}`;
        const labels = replaceLabels(spec.round, i);
        const obj = JSON.parse(expect(await send('PUT', path, serviceAccount(name, labels)), 'PUT', path, 200).body.toString('utf8'));
        if (obj?.metadata?.labels?.['bench-seq'] !== labels['bench-seq']) throw new Error(`PUT ${path} returned ${JSON.stringify(obj).slice(0, 300)}`);
        latest.set(`${spec.namespace}/${name}`, obj);
      });
      return { ...r, notes };
    }
    case 'nowork': {
      const { method } = spec;
      if (noWorkPort === undefined) throw new Error('a nowork phase needs noWorkUrl');
      const r = await drive(spec.count, async (i) => {
        const name = nameOf(spec.prefix, i % spec.population);
        const cm = spec.configMapBytes;
        const coll = cm === undefined ? collection(spec.namespace) : configMaps(spec.namespace);
        const path = method === 'POST' ? coll : `${coll}/${name}`;
        const labels = method === 'POST' ? { app: 'bench' } : replaceLabels(0, i);
        const body = method === 'GET' ? undefined : cm === undefined ? serviceAccount(name, labels) : configMap(name, cm, {}, labels);
        const obj = JSON.parse(expect(await send(method, path, body, noWorkPort), method, path, method === 'POST' ? 201 : 200).body.toString('utf8'));
        if (obj?.kind !== 'ServiceAccount') throw new Error(`${method} ${path} returned ${JSON.stringify(obj).slice(0, 300)}`);
      });
      return { ...r, notes };
    }
    case 'list': {
      const path = collection(spec.namespace);
      let checked = 0;
      const r = await drive(spec.count, async (i) => {
        const reply = expect(await send('GET', path), 'GET', path, 200);
        // Parsing every 500-item list would tax the generator; check a sample.
        if (i % 50 === 0) {
          // The service account controller adds `default` to every namespace.
          const items = (JSON.parse(reply.body.toString('utf8')).items as any[] | undefined)?.filter((i) => i?.metadata?.name !== 'default');
          if (!Array.isArray(items) || items.length !== spec.expectItems) {
            throw new Error(`GET ${path}: ${Array.isArray(items) ? items.length : 'no'} items, expected ${spec.expectItems}`);
          }
          checked++;
        }
      });
      notes.checked = checked;
      return { ...r, notes };
    }
    case 'apply': {
      const collectionPath = spec.what === 'cm' ? configMaps(spec.namespace) : `/apis/apps/v1/namespaces/${spec.namespace}/deployments`;
      const r = await drive(spec.count, async (i) => {
        const name = nameOf(spec.prefix, i);
        const body = spec.what === 'cm' ? configMap(name, spec.bytes) : deployment(name);
        body.metadata.labels = { ...body.metadata.labels, round: `r${spec.round}` };
        const path = `${collectionPath}/${name}?fieldManager=bench&force=true`;
        expect(await sendJson(agent, Number(base.port), 'PATCH', path, body, REQUEST_TIMEOUT_MS, { ...bearer, 'Content-Type': 'application/apply-patch+yaml' }), 'PATCH', path, 200, 201);
      });
      return { ...r, notes };
    }
    case 'create-cm': {
      const path = configMaps(spec.namespace);
      const r = await drive(spec.count, async (i) => {
        expect(await send('POST', path, configMap(nameOf(spec.prefix, (spec.first ?? 0) + i), spec.bytes)), 'POST', path, 201);
      }, spec.concurrency);
      return { ...r, notes };
    }
    case 'replace-cm': {
      const r = await drive(spec.count, async (j) => {
        const i = (spec.first ?? 0) + j;
        const name = nameOf(spec.prefix, i % spec.population);
        const path = `${configMaps(spec.namespace)}/${name}`;
        const labels = replaceLabels(spec.round, i);
        const obj = JSON.parse(expect(await send('PUT', path, configMap(name, spec.bytes, {}, labels)), 'PUT', path, 200).body.toString('utf8'));
        if (obj?.metadata?.labels?.['bench-seq'] !== labels['bench-seq']) throw new Error(`PUT ${path} returned ${JSON.stringify(obj).slice(0, 300)}`);
      });
      return { ...r, notes };
    }
    case 'list-cm': {
      const path = spec.collectionPath ?? configMaps(spec.namespace);
      let checked = 0;
      let bytes = 0;
      const r = await drive(spec.count, async (i) => {
        const reply = expect(await send('GET', path), 'GET', path, 200);
        bytes = reply.body.length;
        if (i % spec.checkEvery === 0) {
          const list = JSON.parse(reply.body.toString('utf8'));
          const items = Array.isArray(list.items) ? list.items.filter((o: any) => o?.metadata?.name?.startsWith(spec.prefix)).length : -1;
          if (items !== spec.expectItems || list.metadata?.continue) {
            throw new Error(`GET ${path}: ${items} items named ${spec.prefix}…, expected ${spec.expectItems}${list.metadata?.continue ? ', and a continue token' : ''}`);
          }
          checked++;
        }
      }, spec.concurrency);
      notes.checked = checked;
      notes.bytes = bytes;
      return { ...r, notes };
    }
    case 'walk-cm': {
      let pages = 0;
      const named = Buffer.from(`"name":"${spec.prefix}`);
      const r = await drive(spec.count, async () => {
        let token: string | undefined;
        let items = 0;
        let rv: string | undefined;
        for (let page = 0; page <= spec.expectItems / spec.limit + 1; page++) {
          const path = `${configMaps(spec.namespace)}?limit=${spec.limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
          const reply = expect(await send('GET', path), 'GET', path, 200);
          pages++;
          items += occurrences(reply.body, named);
          // Every page comes from the first page's snapshot.
          const pageRv = /"resourceVersion":"(\d+)"/.exec(reply.body.subarray(0, 512).toString('utf8'))?.[1];
          if (rv !== undefined && pageRv !== rv) throw new Error(`page ${page} at resourceVersion ${pageRv}, the first at ${rv}`);
          rv = pageRv;
          token = continueOf(reply.body);
          if (!token) break;
        }
        if (token || items !== spec.expectItems) throw new Error(`walk of ${spec.namespace}: ${items} items named ${spec.prefix}… (expected ${spec.expectItems})${token ? ', and more pages' : ''}`);
      }, 1);
      notes.pages = pages;
      return { ...r, notes };
    }
    case 'paced-writes': {
      const path = configMaps(spec.namespace);
      const total = Math.round((spec.perSecond * spec.durationMs) / 1000);
      const values = new Float64Array(total);
      const latencies = new Float64Array(total);
      const gap = 1000 / spec.perSecond;
      const start = performance.now() + 5;
      let late = 0;
      const r = await drive(total, async (i) => {
        // Each write waits for its slot; its latency is measured from when it is sent.
        const wait = start + i * gap - performance.now();
        if (wait > 0) await sleep(wait);
        else if (wait < -50) late++;
        const sent = performance.now();
        const name = nameOf(spec.prefix, i % spec.pool);
        const body = configMap(name, 300, { seq: String(i) });
        const reply = i < spec.pool
          ? expect(await send('POST', path, body), 'POST', path, 201)
          : expect(await send('PUT', `${path}/${name}`, body), 'PUT', `${path}/${name}`, 200);
        values[i] = Number(JSON.parse(reply.body.toString('utf8')).metadata.resourceVersion);
        latencies[i] = performance.now() - sent;
      });
      notes.late = late;
      return { latencies, elapsedMs: r.elapsedMs, notes, values };
    }
  }
}

parentPort!.on('message', async (msg: PhaseRequest | { close: true }) => {
  if ('close' in msg) {
    agent.destroy();
    parentPort!.close();
    return;
  }
  let reply: PhaseReply;
  try {
    const { latencies, elapsedMs, notes, values } = await runPhase(msg.spec);
    reply = { id: msg.id, ok: true, latencies, elapsedMs, notes, values };
    parentPort!.postMessage(reply, [latencies.buffer as ArrayBuffer, ...(values ? [values.buffer as ArrayBuffer] : [])]);
  } catch (e) {
    reply = { id: msg.id, ok: false, error: (e as Error)?.stack ?? String(e) };
    parentPort!.postMessage(reply);
  }
});
