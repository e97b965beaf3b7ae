// Running the server from the command line: start, the welcome line, signals
// to shut down (both in the run's log format), and one line for a start-up
// failure the user can act on.
// Loaded by main.ts once the flags are read (see there why not before).

import { resolve } from 'node:path';
import { commandName } from './flags.js';
import { startServer, type RunningServer } from '../apiserver/start.js';
import { collectWhenIdle } from './idlegc.js';
import { StorageError } from '../storage/backend.js';
import { ApiError } from '../machinery/errors.js';
import { AdmissionConfigError } from '../admission/index.js';
import type { ServerOptions } from '../server/options.js';
import { KeyMaterialError } from '../pki/index.js';
import { TokenFileError } from '../auth/authn/tokenfile.js';
import { AuthorizationConfigError } from '../apiserver/authorization.js';
import { IdentityConfigError } from '../apiserver/identity.js';
import { AuditConfigError } from '../server/audit/index.js';
import { RuntimeConfigError } from '../api/versioning.js';
import { FeatureGateError } from '../machinery/featuregates.js';
import { MetricsConfigError } from '../machinery/metricdeclaration.js';

/** A start-up failure the user can act on, as one line; undefined for anything else (a bug: the stack helps). */
function startFailure(e: unknown, options: ServerOptions): string | undefined {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === 'EADDRINUSE') return `port ${options.securePort} on ${options.bindAddress} is already in use (is another server running?); choose another with --secure-port`;
  if (code === 'EADDRNOTAVAIL') return `cannot listen on ${options.bindAddress}: no such address on this machine (--bind-address)`;
  if (code === 'EACCES' && (e as NodeJS.ErrnoException).syscall === 'listen') return `not allowed to listen on port ${options.securePort} (ports below 1024 need privileges); choose another with --secure-port`;
  if (code === 'EACCES' || code === 'EROFS') return `cannot write ${(e as NodeJS.ErrnoException).path ?? options.dataDir}: ${(e as Error).message} (--data-dir)`;
  if (e instanceof StorageError) return `${e.message} (--data-dir ${options.dataDir})`;
  // The store answered 503/504 while the server set itself up: it cannot be reached.
  if (e instanceof ApiError && (e.code === 503 || e.code === 504)) return `${e.message} (--etcd-servers ${options.etcdServers.join(',')})`;
  if (e instanceof KeyMaterialError || e instanceof TokenFileError || e instanceof AuthorizationConfigError || e instanceof IdentityConfigError) return e.message;
  if (e instanceof AdmissionConfigError || e instanceof AuditConfigError || e instanceof RuntimeConfigError || e instanceof FeatureGateError || e instanceof MetricsConfigError) return e.message;
  return undefined;
}

/**
 * The line a person reads at start, in the run's log format: where it serves,
 * the kubeconfig's absolute path (to copy) and a command to try. Written
 * whatever the log level, as the one line every start owes its user.
 */
function welcome(server: RunningServer): void {
  const kubeconfig = resolve(server.kubeconfigPath);
  server.log.child({}, { level: 'info' }).info({ url: server.url, kubeconfig, try: `export KUBECONFIG=${kubeconfig}; kubectl get namespaces` }, `${commandName} is serving`);
}

/**
 * A closed pipe (`npm start | tee log` ended by Ctrl-C) must not end the
 * process before it shuts down cleanly: writes to it are dropped instead.
 */
function tolerateClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'EPIPE') throw err; });
  }
}

function say(text: string): void {
  if (process.stderr.writable) process.stderr.write(text);
}

/** Runs the server until a signal stops it; exits 1 with one line when it cannot start. */
export async function serve(options: ServerOptions): Promise<void> {
  tolerateClosedOutput();
  // Signals are taken from the first moment: one that comes while the server starts stops it once it has.
  let server: RunningServer | undefined;
  let stopSignal: string | undefined;
  const stop = (signal: string) => {
    if (stopSignal) return;
    stopSignal = signal;
    if (!server) return;
    const running = server;
    running.log.child({}, { level: 'info' }).info({ signal }, 'received signal, shutting down');
    running.shutdown().then(() => process.exit(0), (err) => { running.log.error({ err }, 'shutdown failed'); process.exit(1); });
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  try {
    server = await startServer(options);
  } catch (e) {
    const why = startFailure(e, options);
    if (why === undefined) throw e;
    say(`${commandName}: ${why}\n`);
    process.exit(1);
  }
  const log = server.log;
  // One failed request or callback is a logged error, never the end of the server.
  process.on('uncaughtException', (err) => log.error({ err }, 'uncaught exception; the server goes on'));
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled promise rejection; the server goes on'));
  // Heap pages back once a burst of work is over (idlegc.ts).
  collectWhenIdle((ms) => log.debug({ ms: Math.round(ms) }, 'collected garbage after a busy spell'));
  welcome(server);
  const early = stopSignal;
  if (early) {
    stopSignal = undefined;
    stop(early);
  }
}
