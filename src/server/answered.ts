// One 'close' listener per response, however many parts want to know when the
// answer is done (the in-flight count, metrics, the request log, audit): each
// EventEmitter.once costs a wrapper and a listener of its own on every request.

import type { ServerResponse } from 'node:http';

const hooksKey = Symbol('answered hooks');
type Hooked = ServerResponse & { [hooksKey]?: (() => void)[] };

/**
 * Runs `hook` once the response is done, complete or with its connection
 * gone, after the hooks added before it. One that throws does not keep the
 * others from running; the first failure is thrown after them.
 */
export function whenAnswered(res: ServerResponse, hook: () => void): void {
  const hooked = res as Hooked;
  const hooks = hooked[hooksKey];
  if (hooks) {
    hooks.push(hook);
    return;
  }
  const list = [hook];
  hooked[hooksKey] = list;
  res.once('close', () => {
    let failure: unknown;
    let failed = false;
    for (const h of list) {
      try {
        h();
      } catch (e) {
        if (!failed) [failure, failed] = [e, true];
      }
    }
    if (failed) throw failure;
  });
}
