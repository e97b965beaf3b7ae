// What validation from a schema costs beside a create. Custom resources do
// not exist yet, so the two sides are measured in one run, round by round:
// the server's CPU per create of a ConfigMap whose JSON is as large as the
// object below (built CLI child, fresh sqlite data dir, settled after each
// round), and, in this process, the CPU per object of the compiled schema
// (structural checks and defaults) and of the same schema with its three CEL
// rules. The share of a create is each in-process figure over the create's
// server CPU; the CEL rules' share is the difference of the two.

import { checkSchema, compileSchema, markers, type CompiledSchema, type JSONSchemaProps } from '../src/api/validation/index.js';
import { sendJson } from './http.js';
import { cpuMsPrecise, settle } from './child.js';
import { withBenchServer } from './session.js';
import { Row, target } from './table.js';
import { fmtCpu, fmtInt, median } from './stats.js';

export interface SchemaValidationBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 120_000;
const namespace = 'schemas';
const goalSharePct = 25;


/**
 * A typical operator's schema: about 50 properties at a few levels, bounds
 * and patterns, a list-map, a map, 3 CEL rules; with `withRegexRules`, two
 * more rules that run RE2 patterns (`matches`, `find`) on every object.
 */
export function operatorSchema(withRules: boolean, withRegexRules = false): JSONSchemaProps {
  const rules = (...r: { rule: string; message?: string }[]) => (withRules ? { [markers.validations]: r } : {});
  const regexRules = (...r: { rule: string; message?: string }[]) => (withRegexRules ? r : []);
  const str = (extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps => ({ type: 'string', maxLength: 253, ...extra });
  const int = (extra: Partial<JSONSchemaProps> = {}): JSONSchemaProps => ({ type: 'integer', minimum: 0, maximum: 65535, ...extra });
  const resources: JSONSchemaProps = { type: 'object', properties: { cpu: str({ pattern: '^[0-9]+m?$' }), memory: str({ pattern: '^[0-9]+(Mi|Gi)$' }) } };
  const container: JSONSchemaProps = {
    type: 'object', required: ['name', 'image'],
    properties: {
      name: str({ maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' }), image: str(), pullPolicy: str({ enum: ['Always', 'IfNotPresent', 'Never'], default: 'IfNotPresent' }),
      port: int({ minimum: 1 }), args: { type: 'array', maxItems: 16, items: str({ maxLength: 128 }) }, requests: resources, limits: resources,
    },
  };
  return {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' },
      spec: {
        type: 'object', required: ['replicas', 'version', 'containers'],
        ...rules(
          { rule: 'self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas', message: 'replicas must be between minReplicas and maxReplicas' },
          ...regexRules({ rule: "self.version.matches('^v[0-9]+\\\\.[0-9]+\\\\.[0-9]+$')", message: 'version must be vX.Y.Z' }),
        ),
        properties: {
          replicas: int({ default: 1 }), minReplicas: int({ default: 1 }), maxReplicas: int({ default: 10 }), version: str({ pattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+$' }),
          paused: { type: 'boolean', default: false }, serviceAccountName: str({ maxLength: 63 }), priority: int(), logLevel: str({ enum: ['debug', 'info', 'warn', 'error'], default: 'info' }),
          storage: { type: 'object', properties: { size: str({ pattern: '^[0-9]+Gi$' }), className: str(), accessMode: str({ enum: ['ReadWriteOnce', 'ReadWriteMany'] }), retain: { type: 'boolean' } } },
          network: { type: 'object', properties: { port: int({ minimum: 1 }), tlsSecret: str(), hostname: str({ format: 'hostname' }), cidr: str({ format: 'cidr' }), ingressClass: str() } },
          backup: {
            type: 'object', properties: { schedule: str(), retentionDays: int({ maximum: 365 }), bucket: str(), prefix: str({ maxLength: 64 }) },
            ...rules({ rule: "!has(self.bucket) || self.schedule.size() > 0", message: 'a backup bucket needs a schedule' }),
          },
          containers: {
            type: 'array', minItems: 1, maxItems: 8, [markers.listType]: 'map', [markers.listMapKeys]: ['name'], items: container,
            ...rules(
              { rule: "self.all(c, c.image.startsWith('registry.example.com/'))", message: 'images must come from registry.example.com' },
              ...regexRules({ rule: "self.all(c, c.image.find(':[0-9]+\\\\.[0-9]+\\\\.[0-9]+$') != '')", message: 'images must be tagged with a version' }),
            ),
          },
          labels: { type: 'object', maxProperties: 32, additionalProperties: str({ maxLength: 63 }) },
          tolerations: { type: 'array', maxItems: 8, items: { type: 'object', properties: { key: str(), operator: str({ enum: ['Exists', 'Equal'] }), value: str(), effect: str() } } },
        },
      },
      status: { type: 'object', properties: { phase: str(), readyReplicas: int(), observedGeneration: { type: 'integer' }, message: str({ maxLength: 1024 }) } },
    },
  };
}

/** An object of the schema, slightly different each time. */
export function operatorObject(i: number): Record<string, unknown> {
  const container = (n: number) => ({
    name: `c${n}`, image: `registry.example.com/app/c${n}:1.${i % 10}.0`, port: 8080 + n, args: ['--verbose', `--id=${i}`],
    requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '1Gi' },
  });
  return {
    apiVersion: 'example.com/v1', kind: 'App', metadata: { name: `app-${i}`, namespace },
    spec: {
      replicas: 1 + (i % 5), minReplicas: 1, maxReplicas: 8, version: `v1.${i % 20}.3`, serviceAccountName: 'app', priority: 100,
      storage: { size: '10Gi', className: 'fast', accessMode: 'ReadWriteOnce', retain: true },
      network: { port: 443, tlsSecret: 'app-tls', hostname: 'app.example.com', cidr: '10.0.0.0/16', ingressClass: 'nginx' },
      backup: { schedule: '0 3 * * *', retentionDays: 30, bucket: 'backups', prefix: `app-${i}` },
      containers: [container(1), container(2)],
      labels: { team: 'platform', tier: 'backend', app: `app-${i}` },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'app', effect: 'NoSchedule' }],
    },
  };
}

/** CPU milliseconds per object of validate + defaults over `objects`. */
function inProcessCpuMs(compiled: CompiledSchema, objects: Record<string, unknown>[]): number {
  const t0 = process.cpuUsage();
  for (const o of objects) {
    compiled.applyDefaults(o);
    const errs = compiled.validate(o);
    if (errs.length) throw new Error(`bench object is invalid: ${errs.map((e) => e.describe()).join('; ')}`);
  }
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / 1000 / objects.length;
}

export async function benchSchemaValidation(opts: SchemaValidationBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 500 : 3_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 7);
  const IN_PROCESS = quick ? 2_000 : 20_000;
  const withRules = operatorSchema(true);
  const problems = checkSchema(withRules, 'schema');
  if (problems.length) throw new Error(`bench schema refused: ${problems.map((e) => e.describe()).join('; ')}`);
  const full = compileSchema(withRules);
  const structural = compileSchema(operatorSchema(false));
  const regexRules = operatorSchema(true, true);
  const regexProblems = checkSchema(regexRules, 'schema');
  if (regexProblems.length) throw new Error(`bench schema with regex rules refused: ${regexProblems.map((e) => e.describe()).join('; ')}`);
  const withRegex = compileSchema(regexRules);
  const bytes = Buffer.byteLength(JSON.stringify(operatorObject(0)));

  return withBenchServer('plat-bench-schemas-', CONCURRENCY, async ({ server: s, agent, load: gen }) => {
    const created = await sendJson(agent, s.port, 'POST', '/api/v1/namespaces', { metadata: { name: namespace } }, 10_000);
    if (created.status !== 201) throw new Error(`namespace: HTTP ${created.status}`);
    let batch = 0;
    const createRound = async (count: number): Promise<number> => {
      await settle(s.pid);
      const cpu0 = cpuMsPrecise(s.pid);
      const r = await gen.run({ kind: 'create-cm', namespace, prefix: `b${batch++}-`, count, bytes }, PHASE_TIMEOUT_MS);
      await settle(s.pid);
      return (cpuMsPrecise(s.pid) - cpu0) / r.requests;
    };
    const objects = (n: number) => Array.from({ length: n }, (_, i) => operatorObject(i));
    progress('schema validation: warming up…');
    await createRound(COUNT / 5);
    inProcessCpuMs(full, objects(IN_PROCESS / 5));
    inProcessCpuMs(structural, objects(IN_PROCESS / 5));
    inProcessCpuMs(withRegex, objects(IN_PROCESS / 5));
    const create: number[] = [];
    const schemaOnly: number[] = [];
    const withCel: number[] = [];
    const withRegexRules: number[] = [];
    progress(`schema validation: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} ConfigMap creates (${fmtInt(bytes)} bytes) and ${fmtInt(IN_PROCESS)} validations…`);
    for (let round = 0; round < ROUNDS; round++) {
      create.push(await createRound(COUNT));
      schemaOnly.push(inProcessCpuMs(structural, objects(IN_PROCESS)));
      withCel.push(inProcessCpuMs(full, objects(IN_PROCESS)));
      withRegexRules.push(inProcessCpuMs(withRegex, objects(IN_PROCESS)));
    }
    const createMs = median(create);
    const schemaMs = median(schemaOnly);
    const fullMs = median(withCel);
    const celMs = Math.max(0, fullMs - schemaMs);
    const regexMs = median(withRegexRules);
    const pct = (ms: number) => (100 * ms) / createMs;
    return [
      { metric: `create a ConfigMap of ${fmtInt(bytes)} bytes, the size of the object below (server CPU per create, median of ${ROUNDS} rounds of ${fmtInt(COUNT)}, alternating with the rows below)`, result: `${fmtCpu(createMs)}/create`, target: '—' },
      {
        metric: 'validate + default an object of a ~50-property operator schema with 3 CEL rules (in-process CPU per object, median of rounds of ' + fmtInt(IN_PROCESS) + ')',
        result: `${fmtCpu(fullMs)}/object · ${pct(fullMs).toFixed(1)} % of the create`,
        target: target(`under ${goalSharePct} % of the create's server CPU`, pct(fullMs) < goalSharePct),
      },
      { metric: 'of which the structural checks and defaults', result: `${fmtCpu(schemaMs)}/object · ${pct(schemaMs).toFixed(1)} % of the create`, target: '—' },
      { metric: 'of which the 3 CEL rules', result: `${fmtCpu(celMs)}/object · ${pct(celMs).toFixed(1)} % of the create`, target: '—' },
      {
        metric: 'the same schema with 2 more rules on RE2 patterns (a `matches` on the version, a `find` on each image; alternating with the rows above)',
        result: `${fmtCpu(regexMs)}/object · ${pct(regexMs).toFixed(1)} % of the create · the 2 regex rules ${fmtCpu(Math.max(0, regexMs - fullMs))}/object`,
        target: '—',
      },
    ];
  });
}
