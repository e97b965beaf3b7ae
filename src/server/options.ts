// What a server is started with. The CLI fills this from flags (src/cli/flags.ts);
// tests fill it directly through startServer().

import { product } from '../machinery/vocabulary.js';

export type StorageBackendName = 'sqlite' | 'memory';

export interface ServerOptions {
  /** Port to listen on; 0 picks a free one. Default 6443. */
  securePort: number;
  /** Address to listen on. Default 127.0.0.1. */
  bindAddress: string;
  /** Folder for the SQLite store, generated key material and admin.kubeconfig. Default ./data. */
  dataDir: string;
  storageBackend: StorageBackendName;
  /** Serving certificate and key (PEM files); generated under dataDir when absent. */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** CA bundle that verifies client certificates; the generated CA when absent. */
  clientCaFile?: string;
  /** Public keys (PEM) that verify service-account tokens; repeatable. */
  serviceAccountKeyFiles: string[];
  /** Private key (PEM) that signs service-account tokens. */
  serviceAccountSigningKeyFile?: string;
  serviceAccountIssuer: string[];
  /** How long the store keeps history for watches and continue tokens, in ms. Default 5 minutes. */
  etcdCompactionIntervalMs: number;
  /** Events queued for a watcher that stops reading before it is cut off (its socket buffers come on top). */
  watchMaxBufferedEvents: number;
  /** Unauthenticated requests become system:anonymous instead of 401. Off while every authenticated request is allowed. */
  anonymousAuth: boolean;
  /** Log level for pino: fatal, error, warn, info, debug, trace, silent. */
  logLevel: string;
  /** Admission plugins to turn on beside the default set (order irrelevant). */
  enableAdmissionPlugins: string[];
  /** Admission plugins to turn off, default ones included. */
  disableAdmissionPlugins: string[];
  /** AdmissionConfiguration file (YAML or JSON) with per-plugin configuration. */
  admissionControlConfigFile?: string;
}

export const defaultServerOptions: ServerOptions = {
  securePort: 6443,
  bindAddress: '127.0.0.1',
  dataDir: './data',
  storageBackend: 'sqlite',
  serviceAccountKeyFiles: [],
  serviceAccountIssuer: [`https://${product.name}.default.svc.cluster.local`],
  etcdCompactionIntervalMs: 5 * 60 * 1000,
  watchMaxBufferedEvents: 10_000,
  anonymousAuth: false,
  logLevel: 'info',
  enableAdmissionPlugins: [],
  disableAdmissionPlugins: [],
};
