// What a kind's writes do beside storing the object, as upstream's generic
// store lets a resource add (BeginCreate, BeginUpdate, AfterDelete): the
// Service's cluster IPs and node ports are taken when a write begins and
// given back when it fails or once the object is gone. The server adds them
// to a kind's store at start, from its configuration.

import type { KubeObject } from '../api/kind.js';

/** Ends a write a hook began: `stored` says whether it was stored (a dry run counts as stored). */
export type FinishWrite = (stored: boolean) => Promise<void>;

export interface WriteHooks {
  /** Once a new object is final (after mutating admission), before it is validated and stored; may change it. */
  beginCreate?(obj: KubeObject, opts: { dryRun: boolean }): Promise<FinishWrite>;
  /** Once an update's object is final, before it is validated and stored; may change it. */
  beginUpdate?(obj: KubeObject, old: KubeObject, opts: { dryRun: boolean }): Promise<FinishWrite>;
  /** After an object was removed from the store; never throws (what it cannot undo is left to a repair). */
  afterDelete?(obj: KubeObject): Promise<void>;
}
