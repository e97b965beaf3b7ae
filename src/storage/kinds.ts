// The kinds of store the server can run on, apart from the stores: reading
// the flags does not load them (cli/main.ts reads the flags first).

export type BackendKind = 'sqlite' | 'memory' | 'etcd3';

/** Every store the server can run on, the embedded file first; the names appear nowhere outside storage/. */
export const backendKinds: readonly BackendKind[] = ['sqlite', 'memory', 'etcd3'];

/** The store a server uses when told nothing: the embedded file. */
export const defaultBackendKind: BackendKind = 'sqlite';

/** Whether several servers can share this kind of store (and so must elect who runs the controllers). */
export function isSharedStore(kind: BackendKind): boolean {
  return kind === 'etcd3';
}
