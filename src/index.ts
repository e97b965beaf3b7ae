// The package's programmatic entry: start a server from code.
export { startServer } from './apiserver/start.js';
export type { RunningServer } from './apiserver/start.js';
export type { ServerOptions } from './server/options.js';
export { defaultServerOptions } from './server/options.js';
