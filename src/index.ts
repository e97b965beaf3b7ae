// The package's programmatic entry: start a server from code.
export { startServer } from './server/start.js';
export type { RunningServer } from './server/start.js';
export type { ServerOptions } from './server/options.js';
export { defaultServerOptions } from './server/options.js';
