// Credentials the server presents to webhooks: the kubeconfig file named by
// the plugin's WebhookAdmissionConfiguration (`kubeConfigFile`, an absolute
// path). Its users are keyed by the webhook's host: `host:port` of a URL, or
// `<service>.<namespace>.svc:<port>`; a `*.` prefix matches a domain, `*`
// any host, and the current context's user comes last, as upstream.

import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { vocabulary } from '../../machinery/vocabulary.js';
import { ownValue } from '../../machinery/ownkeys.js';
import { expectKind, parseConfigText } from '../config.js';
import { AdmissionConfigError } from '../plugin-names.js';

export interface WebhookCredentials {
  certPem?: string;
  keyPem?: string;
  token?: string;
  username?: string;
  password?: string;
}

type Doc = Record<string, unknown>;
const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);

async function readText(path: string, what: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new AdmissionConfigError(`unable to read ${what} "${path}": ${(e as Error).message}`);
  }
}

/** A kubeconfig user's credentials; files are read now, relative to the kubeconfig's folder. */
async function credentialsOf(user: Doc, base: string, what: string): Promise<WebhookCredentials> {
  const str = (key: string): string | undefined => {
    const v = ownValue(user, key);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  const file = (key: string) => readText(resolve(base, str(key)!), `${key} of ${what}`);
  const data = (key: string) => Buffer.from(str(key)!, 'base64').toString('utf8');
  if (ownValue(user, 'auth-provider') !== undefined) throw new AdmissionConfigError(`${what}: auth provider not supported`);
  const c: WebhookCredentials = {};
  if (str('token')) c.token = str('token');
  else if (str('tokenFile')) c.token = (await file('tokenFile')).trim();
  if (str('client-certificate-data')) c.certPem = data('client-certificate-data');
  else if (str('client-certificate')) c.certPem = await file('client-certificate');
  if (str('client-key-data')) c.keyPem = data('client-key-data');
  else if (str('client-key')) c.keyPem = await file('client-key');
  if (str('username') || str('password')) {
    c.username = str('username') ?? '';
    c.password = str('password') ?? '';
  }
  return c;
}

export class CredentialResolver {
  constructor(private readonly users: ReadonlyMap<string, WebhookCredentials> = new Map(), private readonly currentUser?: WebhookCredentials) {}

  /** Reads the plugin's configuration; none means no credentials. */
  static async load(config: Doc | undefined, plugin: string): Promise<CredentialResolver> {
    if (!config) return new CredentialResolver();
    const what = `the configuration of ${plugin}`;
    expectKind(config, [
      { apiVersion: `${vocabulary.apiserverConfigGroup}/v1`, kind: 'WebhookAdmissionConfiguration' },
      { apiVersion: `${vocabulary.apiserverConfigGroup}/v1alpha1`, kind: 'WebhookAdmission' },
    ], what);
    const path = ownValue(config, 'kubeConfigFile');
    if (path === undefined || path === '') return new CredentialResolver();
    if (typeof path !== 'string' || !isAbsolute(path)) {
      throw new AdmissionConfigError(`${what}: kubeConfigFile: Invalid value: ${JSON.stringify(path)}: must be an absolute file path`);
    }
    const kubeconfig = parseConfigText(await readText(path, `the kubeconfig of ${plugin}`), `kubeconfig "${path}"`);
    if (!isDoc(kubeconfig)) throw new AdmissionConfigError(`kubeconfig "${path}" must hold an object`);
    const users = new Map<string, WebhookCredentials>();
    const list = ownValue(kubeconfig, 'users') ?? [];
    if (!Array.isArray(list)) throw new AdmissionConfigError(`kubeconfig "${path}": users must be a list`);
    for (const entry of list) {
      if (!isDoc(entry) || typeof entry.name !== 'string') throw new AdmissionConfigError(`kubeconfig "${path}": every user needs a name`);
      const user = ownValue(entry, 'user') ?? {};
      if (!isDoc(user)) throw new AdmissionConfigError(`kubeconfig "${path}": user ${entry.name} must be an object`);
      users.set(entry.name, await credentialsOf(user, dirname(path), `user ${entry.name} in kubeconfig "${path}"`));
    }
    let current: WebhookCredentials | undefined;
    const contextName = ownValue(kubeconfig, 'current-context');
    const contexts = ownValue(kubeconfig, 'contexts');
    if (typeof contextName === 'string' && Array.isArray(contexts)) {
      const context = contexts.find((c) => isDoc(c) && c.name === contextName) as Doc | undefined;
      const userName = isDoc(context?.context) ? ownValue(context.context as Doc, 'user') : undefined;
      if (typeof userName === 'string') current = users.get(userName);
    }
    return new CredentialResolver(users, current);
  }

  /** Credentials for `host:port` (the port may be absent for URLs without one). */
  for(target: string): WebhookCredentials | undefined {
    const found = this.lookup(target);
    if (found) return found;
    const withoutPort = /^(.*):443$/.exec(target)?.[1];
    return (withoutPort !== undefined ? this.lookup(withoutPort) : undefined) ?? this.users.get('*') ?? this.currentUser;
  }

  /** Exact name, then `*.` + each shorter domain suffix. */
  private lookup(target: string): WebhookCredentials | undefined {
    const exact = this.users.get(target);
    if (exact) return exact;
    const steps = target.split('.');
    for (let i = 1; i < steps.length; i++) {
      const wildcard = this.users.get(`*.${steps.slice(i).join('.')}`);
      if (wildcard) return wildcard;
    }
    return undefined;
  }
}
