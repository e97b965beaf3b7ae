// Reading a kubeconfig file into one endpoint: the server URL and how to
// trust and reach it (CA, client certificate and key, bearer token), from
// the current context, or from the only cluster and user when the file names
// no context (webhook configuration files often do not). Paths inside the
// file are relative to its folder, as clients read them.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import YAML from 'yaml';
import type { RemoteEndpoint } from '../machinery/endpoint.js';
import { ownValue } from '../machinery/ownkeys.js';
import { product, productGroup } from '../machinery/vocabulary.js';


type Entry = { name?: unknown; cluster?: Record<string, unknown>; user?: Record<string, unknown>; context?: Record<string, unknown> };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function entries(doc: Record<string, unknown>, key: string): Entry[] {
  const list = doc[key];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list) || !list.every(isObject)) throw new Error(`${key} must be a list of named entries`);
  return list as Entry[];
}

function pick(list: Entry[], what: string, name: string | undefined): Entry | undefined {
  if (name !== undefined) {
    const found = list.find((e) => e.name === name);
    if (!found) throw new Error(`${what} ${JSON.stringify(name)} is not in the file`);
    return found;
  }
  if (list.length > 1) throw new Error(`no current-context, and more than one ${what} to choose from`);
  return list[0];
}

/** Reads a file a kubeconfig names (`key` is the field naming it), relative to the kubeconfig's folder. */
export type KubeconfigFileReader = (key: string, path: string) => Promise<string>;

/** A reader that resolves paths against `base` and lets read errors through as they are. */
export const filesBeside = (base: string): KubeconfigFileReader => (_key, path) => readFile(isAbsolute(path) ? path : resolve(base, path), 'utf8');

/** A `<name>-data` value (base64) or a `<name>` file. */
async function material(fields: Record<string, unknown>, name: string, read: KubeconfigFileReader): Promise<string | undefined> {
  const data = ownValue(fields, `${name}-data`);
  if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
  const file = ownValue(fields, name);
  if (typeof file === 'string' && file) return read(name, file);
  return undefined;
}

/** What a kubeconfig user presents: a client certificate and key, a bearer token (`token`, else `tokenFile`). */
export interface UserCredentials {
  certPem?: string;
  keyPem?: string;
  token?: string;
}

export async function userCredentials(user: Record<string, unknown>, read: KubeconfigFileReader): Promise<UserCredentials> {
  const c: UserCredentials = {};
  const certPem = await material(user, 'client-certificate', read);
  if (certPem !== undefined) c.certPem = certPem;
  const keyPem = await material(user, 'client-key', read);
  if (keyPem !== undefined) c.keyPem = keyPem;
  const token = ownValue(user, 'token');
  const tokenFile = ownValue(user, 'tokenFile');
  if (typeof token === 'string' && token) c.token = token;
  else if (typeof tokenFile === 'string' && tokenFile) c.token = (await read('tokenFile', tokenFile)).trim();
  return c;
}

export async function readKubeconfigEndpoint(path: string): Promise<RemoteEndpoint> {
  const read = filesBeside(dirname(path));
  const doc: unknown = YAML.parse(await readFile(path, 'utf8'));
  if (!isObject(doc)) throw new Error('not a kubeconfig: expected a mapping');
  const current = typeof doc['current-context'] === 'string' && doc['current-context'] ? doc['current-context'] : undefined;
  const context = current === undefined ? undefined : pick(entries(doc, 'contexts'), 'context', current)?.context;
  const clusterName = context && typeof context.cluster === 'string' ? context.cluster : undefined;
  const userName = context && typeof context.user === 'string' ? context.user : undefined;
  const cluster = pick(entries(doc, 'clusters'), 'cluster', clusterName)?.cluster;
  if (!isObject(cluster) || typeof cluster.server !== 'string' || !cluster.server) throw new Error('no cluster with a server URL');
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    throw new Error(`server ${JSON.stringify(cluster.server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`server ${JSON.stringify(cluster.server)} is not an http or https URL`);
  const endpoint: RemoteEndpoint = { server: cluster.server };
  endpoint.caPem = await material(cluster, 'certificate-authority', read);
  if (cluster['insecure-skip-tls-verify'] === true) endpoint.insecureSkipTlsVerify = true;
  const user = pick(entries(doc, 'users'), 'user', userName)?.user;
  if (isObject(user)) Object.assign(endpoint, await userCredentials(user, read));
  if ((endpoint.certPem === undefined) !== (endpoint.keyPem === undefined)) throw new Error('a client certificate needs its key, and a key its certificate');
  return endpoint;
}

// ---------------------------------------------------------------------------
// The client's reading: several files merged as upstream's clientcmd merges
// KUBECONFIG, then one context resolved into everything a connection needs.

/** A named entry with the folder of the file it came from (its relative paths resolve there). */
export interface KubeconfigEntry {
  fields: Record<string, unknown>;
  dir: string;
}

/** Several kubeconfig files merged: the first file that names a cluster, user or context wins it whole; the first non-empty current-context wins. */
export interface MergedKubeconfig {
  currentContext?: string;
  clusters: Map<string, KubeconfigEntry>;
  users: Map<string, KubeconfigEntry>;
  contexts: Map<string, KubeconfigEntry>;
  /** The files read, in precedence order. */
  files: string[];
}

export class KubeconfigError extends Error {
  override name = 'KubeconfigError';
}

const errorCode = (e: unknown): unknown => (e as { code?: unknown } | null)?.code;

/** Merges documents already read, first one winning (`docs` in precedence order). */
export function mergeKubeconfigs(docs: readonly { doc: unknown; path: string }[]): MergedKubeconfig {
  const merged: MergedKubeconfig = { clusters: new Map(), users: new Map(), contexts: new Map(), files: [] };
  const sections = [['clusters', 'cluster', merged.clusters], ['users', 'user', merged.users], ['contexts', 'context', merged.contexts]] as const;
  for (const { doc, path } of docs) {
    merged.files.push(path);
    if (doc === null || doc === undefined) continue; // an empty file sets nothing
    if (!isObject(doc)) throw new KubeconfigError(`${path}: not a kubeconfig: expected a mapping`);
    const current = ownValue(doc, 'current-context');
    if (merged.currentContext === undefined && typeof current === 'string' && current) merged.currentContext = current;
    for (const [key, inner, into] of sections) {
      let list: Entry[];
      try {
        list = entries(doc, key);
      } catch (e) {
        throw new KubeconfigError(`${path}: ${(e as Error).message}`);
      }
      for (const e of list) {
        if (typeof e.name !== 'string' || !e.name) throw new KubeconfigError(`${path}: an entry of ${key} has no name`);
        const fields = (e as Record<string, unknown>)[inner];
        if (fields !== undefined && fields !== null && !isObject(fields)) throw new KubeconfigError(`${path}: ${key} ${JSON.stringify(e.name)}: ${inner} must be a mapping`);
        if (!into.has(e.name)) into.set(e.name, { fields: (fields as Record<string, unknown> | undefined) ?? {}, dir: dirname(path) });
      }
    }
  }
  return merged;
}

export interface LoadKubeconfigOptions {
  /** Files to read, in precedence order; each must exist. Without it: `KUBECONFIG`, else ~/.kube/config. */
  paths?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  /** The home folder for ~/.kube/config. */
  home?: string;
}

/**
 * Reads and merges kubeconfig files as clientcmd does: explicit paths must
 * exist; `KUBECONFIG` is a path list (`:`, `;` on Windows) whose empty and
 * repeated entries are skipped and whose missing files are ignored; without
 * either, ~/.kube/config when it exists.
 */
export async function loadKubeconfig(options: LoadKubeconfigOptions = {}): Promise<MergedKubeconfig> {
  const env = options.env ?? process.env;
  let paths: string[];
  let mayBeMissing: boolean;
  if (options.paths) {
    paths = [...options.paths];
    mayBeMissing = false;
  } else if (env.KUBECONFIG) {
    paths = [...new Set(env.KUBECONFIG.split(delimiter).filter((p) => p))];
    mayBeMissing = true;
  } else {
    paths = [join(options.home ?? homedir(), '.kube', 'config')];
    mayBeMissing = true;
  }
  const docs: { doc: unknown; path: string }[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      if (mayBeMissing && errorCode(e) === 'ENOENT') continue;
      throw new KubeconfigError(`cannot read kubeconfig ${path}: ${(e as Error).message}`);
    }
    let doc: unknown;
    try {
      doc = YAML.parse(text);
    } catch (e) {
      throw new KubeconfigError(`${path}: not YAML: ${(e as Error).message}`);
    }
    docs.push({ doc, path: resolve(path) });
  }
  return mergeKubeconfigs(docs);
}

/** client.authentication's exec plugin settings of a kubeconfig user, with the folder a relative command resolves against. */
export interface ExecConfig {
  command: string;
  apiVersion: string;
  args: string[];
  env: { name: string; value: string }[];
  installHint?: string;
  provideClusterInfo: boolean;
  interactiveMode?: 'Never' | 'IfAvailable' | 'Always';
  /** The kubeconfig's folder. */
  dir: string;
}

/** Everything needed to reach a server as one context says. */
export interface ClientConfig extends RemoteEndpoint {
  /** The context's namespace, else `default`. */
  namespace: string;
  contextName?: string;
  tokenFile?: string;
  username?: string;
  password?: string;
  tlsServerName?: string;
  proxyUrl?: string;
  exec?: ExecConfig;
  /** The cluster's `certificate-authority-data` as written (base64), for exec plugins that ask for the cluster. */
  caData?: string;
  /** The cluster's extension for exec plugins (the `extensions` entry named `<our client.authentication group>/exec`). */
  execClusterConfig?: unknown;
  disableCompression?: boolean;
}

export interface ContextOverrides {
  context?: string;
  cluster?: string;
  user?: string;
  namespace?: string;
}

/** Names the exec extension of a cluster may go by (ours, and upstream's that plugins written for it read). */
const execExtensionNames = [`${productGroup('client.authentication')}/exec`, 'client.authentication.k8s.io/exec'];

function execConfig(value: unknown, dir: string): ExecConfig {
  if (!isObject(value)) throw new KubeconfigError('exec must be a mapping');
  const command = ownValue(value, 'command');
  const apiVersion = ownValue(value, 'apiVersion');
  if (typeof command !== 'string' || !command) throw new KubeconfigError('exec: command must be specified');
  if (typeof apiVersion !== 'string' || !apiVersion) throw new KubeconfigError('exec: apiVersion must be specified');
  const args = ownValue(value, 'args') ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw new KubeconfigError('exec: args must be a list of strings');
  const envList = ownValue(value, 'env') ?? [];
  if (!Array.isArray(envList)) throw new KubeconfigError('exec: env must be a list of name/value pairs');
  const env = envList.map((e) => {
    if (!isObject(e) || typeof e.name !== 'string' || typeof e.value !== 'string') throw new KubeconfigError('exec: env must be a list of name/value pairs');
    return { name: e.name, value: e.value };
  });
  const mode = ownValue(value, 'interactiveMode');
  if (mode !== undefined && mode !== '' && mode !== 'Never' && mode !== 'IfAvailable' && mode !== 'Always') throw new KubeconfigError(`exec: invalid interactiveMode: ${JSON.stringify(mode)}`);
  const hint = ownValue(value, 'installHint');
  const config: ExecConfig = { command, apiVersion, args: args as string[], env, provideClusterInfo: ownValue(value, 'provideClusterInfo') === true, dir };
  if (typeof hint === 'string' && hint) config.installHint = hint;
  if (mode) config.interactiveMode = mode as ExecConfig['interactiveMode'];
  return config;
}

function clusterExtension(cluster: Record<string, unknown>): unknown {
  const list = ownValue(cluster, 'extensions');
  if (!Array.isArray(list)) return undefined;
  for (const name of execExtensionNames) {
    const found = list.find((e) => isObject(e) && e.name === name);
    if (found) return (found as Record<string, unknown>).extension;
  }
  return undefined;
}

/** One context of a merged kubeconfig (the current one unless overridden) as a connection's settings. */
export async function resolveContext(merged: MergedKubeconfig, overrides: ContextOverrides = {}): Promise<ClientConfig> {
  const contextName = overrides.context || merged.currentContext;
  let context: Record<string, unknown> = {};
  if (contextName) {
    const found = merged.contexts.get(contextName);
    if (!found) throw new KubeconfigError(`context was not found for specified context: ${contextName}`);
    context = found.fields;
  }
  const clusterName = overrides.cluster || (typeof context.cluster === 'string' ? context.cluster : undefined);
  const userName = overrides.user || (typeof context.user === 'string' ? context.user : undefined);
  if (!clusterName) throw new KubeconfigError('invalid configuration: no configuration has been provided');
  const cluster = merged.clusters.get(clusterName);
  if (!cluster) throw new KubeconfigError(`cluster ${JSON.stringify(clusterName)} was not found`);
  const server = ownValue(cluster.fields, 'server');
  if (typeof server !== 'string' || !server) throw new KubeconfigError(`cluster ${JSON.stringify(clusterName)} has no server defined`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(`server ${JSON.stringify(server)} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new KubeconfigError(`server ${JSON.stringify(server)} is not an http or https URL`);
  const namespace = overrides.namespace || (typeof context.namespace === 'string' && context.namespace ? context.namespace : 'default');
  const config: ClientConfig = { server: server.replace(/\/+$/, ''), namespace };
  if (contextName) config.contextName = contextName;
  const readCluster = filesBeside(cluster.dir);
  config.caPem = await material(cluster.fields, 'certificate-authority', readCluster);
  const caData = ownValue(cluster.fields, 'certificate-authority-data');
  if (typeof caData === 'string' && caData) config.caData = caData;
  else if (config.caPem !== undefined) config.caData = Buffer.from(config.caPem).toString('base64');
  if (ownValue(cluster.fields, 'insecure-skip-tls-verify') === true) config.insecureSkipTlsVerify = true;
  if (config.insecureSkipTlsVerify && config.caPem !== undefined) throw new KubeconfigError('specifying a root certificates file with the insecure flag is not allowed');
  const tlsServerName = ownValue(cluster.fields, 'tls-server-name');
  if (typeof tlsServerName === 'string' && tlsServerName) config.tlsServerName = tlsServerName;
  const proxyUrl = ownValue(cluster.fields, 'proxy-url');
  if (typeof proxyUrl === 'string' && proxyUrl) {
    let proxy: URL;
    try {
      proxy = new URL(proxyUrl);
    } catch {
      throw new KubeconfigError(`proxy-url ${JSON.stringify(proxyUrl)} is not a URL`);
    }
    if (!['http:', 'https:', 'socks5:'].includes(proxy.protocol)) throw new KubeconfigError(`proxy URL scheme ${JSON.stringify(proxy.protocol.slice(0, -1))} is not supported: use http, https or socks5`);
    config.proxyUrl = proxyUrl;
  }
  if (ownValue(cluster.fields, 'disable-compression') === true) config.disableCompression = true;
  const extension = clusterExtension(cluster.fields);
  if (extension !== undefined) config.execClusterConfig = extension;
  if (userName) {
    const user = merged.users.get(userName);
    if (!user) throw new KubeconfigError(`user ${JSON.stringify(userName)} was not found`);
    const read = filesBeside(user.dir);
    const certPem = await material(user.fields, 'client-certificate', read);
    const keyPem = await material(user.fields, 'client-key', read);
    if (certPem !== undefined) config.certPem = certPem;
    if (keyPem !== undefined) config.keyPem = keyPem;
    const token = ownValue(user.fields, 'token');
    const tokenFile = ownValue(user.fields, 'tokenFile');
    if (typeof token === 'string' && token) config.token = token;
    else if (typeof tokenFile === 'string' && tokenFile) config.tokenFile = isAbsolute(tokenFile) ? tokenFile : resolve(user.dir, tokenFile);
    const username = ownValue(user.fields, 'username');
    const password = ownValue(user.fields, 'password');
    if (typeof username === 'string' && username) config.username = username;
    if (typeof password === 'string' && password) config.password = password;
    const exec = ownValue(user.fields, 'exec');
    if (exec !== undefined && exec !== null) config.exec = execConfig(exec, user.dir);
  }
  if ((config.certPem === undefined) !== (config.keyPem === undefined)) throw new KubeconfigError('a client certificate needs its key, and a key its certificate');
  if ((config.username !== undefined || config.password !== undefined) && (config.token !== undefined || config.tokenFile !== undefined)) {
    throw new KubeconfigError('username/password or bearer token may be set, but not both');
  }
  return config;
}

/** Where a pod finds its service account's credentials: ours, then the folder upstream mounts. */
export const serviceAccountDirs = [`/var/run/secrets/${product.domain}/serviceaccount`, '/var/run/secrets/kubernetes.io/serviceaccount'] as const;

/** The server's address in a pod's environment: the product's service variables, then upstream's. */
const serviceEnvPrefixes = [product.envPrefix, 'KUBERNETES'];

/**
 * The configuration of a client running in a pod: the server from
 * `<PREFIX>_SERVICE_HOST`/`_PORT`, the service account's token file (re-read
 * as it rotates), CA and namespace.
 */
export async function inClusterConfig(options: { env?: Readonly<Record<string, string | undefined>>; dir?: string } = {}): Promise<ClientConfig> {
  const env = options.env ?? process.env;
  const prefix = serviceEnvPrefixes.find((p) => env[`${p}_SERVICE_HOST`] && env[`${p}_SERVICE_PORT`]);
  if (prefix === undefined) throw new KubeconfigError(`unable to load in-cluster configuration, ${product.envPrefix}_SERVICE_HOST and ${product.envPrefix}_SERVICE_PORT must be defined`);
  const host = env[`${prefix}_SERVICE_HOST`]!;
  const port = env[`${prefix}_SERVICE_PORT`]!;
  const dir = options.dir ?? serviceAccountDirs.find((d) => existsSync(join(d, 'token'))) ?? serviceAccountDirs[0];
  const tokenFile = join(dir, 'token');
  try {
    await readFile(tokenFile, 'utf8');
  } catch (e) {
    throw new KubeconfigError(`unable to load in-cluster configuration: ${(e as Error).message}`);
  }
  const config: ClientConfig = { server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`, tokenFile, namespace: 'default' };
  try {
    config.caPem = await readFile(join(dir, 'ca.crt'), 'utf8');
    config.caData = Buffer.from(config.caPem).toString('base64');
  } catch { /* upstream goes on without the CA, trusting the system's roots */ }
  try {
    const ns = (await readFile(join(dir, 'namespace'), 'utf8')).trim();
    if (ns) config.namespace = ns;
  } catch { /* default */ }
  return config;
}
