// Reading a kubeconfig file into one endpoint: the server URL and how to
// trust and reach it (CA, client certificate and key, bearer token), from
// the current context, or from the only cluster and user when the file names
// no context (webhook configuration files often do not). Paths inside the
// file are relative to its folder, as clients read them.

import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import YAML from 'yaml';
import type { RemoteEndpoint } from '../machinery/endpoint.js';
import { ownValue } from '../machinery/ownkeys.js';


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
