// Exec credential plugins: a kubeconfig user whose credentials come from a
// command. The command gets an ExecCredential in PLAT_EXEC_INFO and prints
// one back with a token or a client certificate and key. Answers are cached
// in this process only (never on disk) until their expirationTimestamp, or
// until a 401 shows the server no longer takes them.

import { spawn } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { isAbsolute, resolve, sep } from 'node:path';
import { setOwn } from '../machinery/ownkeys.js';
import { productGroup, vocabulary } from '../machinery/vocabulary.js';
import type { ClientConfig, ExecConfig } from './kubeconfig.js';

/** The versions of ExecCredential a plugin may speak; the upstream group name is the same API. */
const execGroups = [productGroup('client.authentication'), 'client.authentication.k8s.io'];
const execVersions = ['v1', 'v1beta1'];

/** `client.authentication.k8s.io/v1` → our group's `v1`; undefined for versions no plugin speaks. */
function canonicalExecVersion(apiVersion: unknown): string | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  const slash = apiVersion.indexOf('/');
  const group = apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  return slash > 0 && execGroups.includes(group) && execVersions.includes(version) ? `${execGroups[0]}/${version}` : undefined;
}

export class ExecPluginError extends Error {
  override name = 'ExecPluginError';
}

export interface ExecCredentials {
  token?: string;
  certPem?: string;
  keyPem?: string;
  /** Milliseconds since the epoch; none: good until a 401. */
  expiresAt?: number;
}

export interface ExecProviderOptions {
  /** Whether standard input is a terminal (injectable: Node has no pty for tests). */
  stdinIsTerminal?: () => boolean;
  /** Where the plugin's stderr goes (its prompts and messages); the process's stderr by default. */
  stderr?: NodeJS.WritableStream;
  /** The environment the plugin inherits. */
  env?: Readonly<Record<string, string | undefined>>;
  now?: () => number;
}

/** Checks what can be checked before the first run: the version and the interactive mode v1 requires. */
export function validateExecConfig(config: ExecConfig): void {
  if (canonicalExecVersion(config.apiVersion) === undefined) throw new ExecPluginError(`exec plugin: invalid apiVersion ${JSON.stringify(config.apiVersion)}`);
  if (config.apiVersion.endsWith('/v1') && config.interactiveMode === undefined) throw new ExecPluginError('interactiveMode must be specified to use exec authentication plugin');
}

/** The command to run: a path with a folder in it is relative to the kubeconfig's folder; a bare name is looked up in PATH. */
export function execCommandPath(config: ExecConfig): string {
  const c = config.command;
  return isAbsolute(c) || !(c.includes(sep) || c.includes('/')) ? c : resolve(config.dir, c);
}

export class ExecCredentialProvider {
  private cached?: ExecCredentials;
  private running?: Promise<ExecCredentials>;
  private readonly interactive: boolean;
  private readonly now: () => number;

  constructor(private readonly config: ExecConfig, private readonly cluster: ClientConfig, private readonly options: ExecProviderOptions = {}) {
    validateExecConfig(config);
    this.now = options.now ?? Date.now;
    const mode = config.interactiveMode ?? 'IfAvailable';
    const terminal = (options.stdinIsTerminal ?? (() => process.stdin.isTTY === true))();
    if (mode === 'Always' && !terminal) throw new ExecPluginError('exec plugin cannot support interactive mode: standard input is not a terminal');
    this.interactive = mode !== 'Never' && terminal;
  }

  /** The cached credentials while they last, else the plugin's new answer. */
  get(): Promise<ExecCredentials> {
    const c = this.cached;
    if (c && (c.expiresAt === undefined || this.now() < c.expiresAt)) return Promise.resolve(c);
    return this.run();
  }

  /** After a 401 with `used`: runs the plugin again unless another request already did. */
  refresh(used: ExecCredentials): Promise<ExecCredentials> {
    if (this.cached !== used) return this.get();
    this.cached = undefined;
    return this.run();
  }

  private run(): Promise<ExecCredentials> {
    // Concurrent requests share one run of the plugin.
    this.running ??= this.execute().then(
      (c) => {
        this.running = undefined;
        this.cached = c;
        return c;
      },
      (e) => {
        this.running = undefined;
        throw e;
      },
    );
    return this.running;
  }

  private execInfo(): string {
    const spec: Record<string, unknown> = { interactive: this.interactive };
    if (this.config.provideClusterInfo) {
      const c = this.cluster;
      const cluster: Record<string, unknown> = { server: c.server };
      if (c.tlsServerName) cluster['tls-server-name'] = c.tlsServerName;
      if (c.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
      if (c.caData) cluster['certificate-authority-data'] = c.caData;
      if (c.proxyUrl) cluster['proxy-url'] = c.proxyUrl;
      if (c.disableCompression) cluster['disable-compression'] = true;
      if (c.execClusterConfig !== undefined) cluster.config = c.execClusterConfig;
      spec.cluster = cluster;
    }
    return JSON.stringify({ kind: 'ExecCredential', apiVersion: this.config.apiVersion, spec });
  }

  private execute(): Promise<ExecCredentials> {
    const command = execCommandPath(this.config);
    // Names from the kubeconfig are set as own keys (an entry named __proto__ is a variable, not a prototype).
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(this.options.env ?? process.env)) if (v !== undefined) setOwn(env, k, v);
    for (const { name, value } of this.config.env) setOwn(env, name, value);
    setOwn(env, vocabulary.execInfoEnv, this.execInfo());
    const stderr = this.options.stderr ?? process.stderr;
    return new Promise((resolvePromise, reject) => {
      const child = spawn(command, this.config.args, { env, stdio: [this.interactive ? 'inherit' : 'ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      child.stdout!.on('data', (c: Buffer) => out.push(c));
      child.stderr!.on('data', (c: Buffer) => stderr.write(c));
      child.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'ENOENT') {
          reject(new ExecPluginError(`exec: executable ${this.config.command} not found${this.config.installHint ? `\n\n${this.config.installHint}` : ''}`));
        } else reject(new ExecPluginError(`exec: ${e.message}`));
      });
      child.on('close', (code, signal) => {
        if (code !== 0) {
          reject(new ExecPluginError(code === null ? `exec: executable ${this.config.command} was killed by ${signal}` : `exec: executable ${this.config.command} failed with exit code ${code}`));
          return;
        }
        try {
          resolvePromise(this.decode(Buffer.concat(out).toString('utf8')));
        } catch (e) {
          reject(e);
        }
      });
    });
  }

  private decode(stdout: string): ExecCredentials {
    let answer: unknown;
    try {
      answer = JSON.parse(stdout);
    } catch (e) {
      throw new ExecPluginError(`decoding stdout: ${(e as Error).message}`);
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new ExecPluginError('decoding stdout: not an ExecCredential object');
    const a = answer as Record<string, unknown>;
    if (a.kind !== 'ExecCredential') throw new ExecPluginError(`decoding stdout: kind ${JSON.stringify(a.kind)} is not ExecCredential`);
    const wanted = canonicalExecVersion(this.config.apiVersion);
    if (canonicalExecVersion(a.apiVersion) !== wanted) {
      throw new ExecPluginError(`exec plugin is configured to use API version ${this.config.apiVersion}, plugin returned version ${typeof a.apiVersion === 'string' ? a.apiVersion : JSON.stringify(a.apiVersion)}`);
    }
    const status = a.status;
    if (typeof status !== 'object' || status === null || Array.isArray(status)) throw new ExecPluginError('exec plugin didn\'t return a status field');
    const s = status as Record<string, unknown>;
    const str = (k: string) => (typeof s[k] === 'string' ? (s[k] as string) : '');
    const token = str('token');
    const certPem = str('clientCertificateData');
    const keyPem = str('clientKeyData');
    if (!token && !certPem && !keyPem) throw new ExecPluginError('exec plugin didn\'t return a token or cert/key pair');
    if (!certPem !== !keyPem) throw new ExecPluginError('exec plugin returned only certificate or key, not both');
    const creds: ExecCredentials = {};
    if (token) creds.token = token;
    if (certPem) {
      try {
        new X509Certificate(certPem);
        createPrivateKey(keyPem);
      } catch (e) {
        throw new ExecPluginError(`failed parsing client key/certificate: ${(e as Error).message}`);
      }
      creds.certPem = certPem;
      creds.keyPem = keyPem;
    }
    const expiry = s.expirationTimestamp;
    if (expiry !== undefined && expiry !== null) {
      const at = typeof expiry === 'string' ? Date.parse(expiry) : NaN;
      if (Number.isNaN(at)) throw new ExecPluginError(`decoding stdout: expirationTimestamp ${JSON.stringify(expiry)} is not an RFC 3339 time`);
      creds.expiresAt = at;
    }
    return creds;
  }
}
