// @peculiar/x509 wires its algorithms through tsyringe, which refuses to load
// unless `Reflect.getMetadata` exists (the library's README asks for a
// polyfill such as reflect-metadata). tsyringe only reads and writes its own
// injection tokens, so this small per-object store is all it needs; we install
// it only when no real polyfill is present. Adding `reflect-metadata` as a
// dependency and importing it instead would make this file unnecessary.

type MetadataKey = unknown;
type Store = WeakMap<object, Map<MetadataKey, unknown>>;

interface ReflectMetadataApi {
  getMetadata?(key: MetadataKey, target: object): unknown;
  getOwnMetadata?(key: MetadataKey, target: object): unknown;
  defineMetadata?(key: MetadataKey, value: unknown, target: object): void;
  hasMetadata?(key: MetadataKey, target: object): boolean;
  hasOwnMetadata?(key: MetadataKey, target: object): boolean;
}

export function installReflectMetadataShim(): void {
  const api = Reflect as unknown as ReflectMetadataApi;
  if (typeof api.getMetadata === 'function') return;
  const store: Store = new WeakMap();
  const own = (target: object) => store.get(target);
  const lookup = (key: MetadataKey, target: object): Map<MetadataKey, unknown> | undefined => {
    for (let at: object | null = target; at; at = Object.getPrototypeOf(at)) {
      const entries = own(at);
      if (entries?.has(key)) return entries;
    }
    return undefined;
  };
  api.getOwnMetadata = (key, target) => own(target)?.get(key);
  api.hasOwnMetadata = (key, target) => own(target)?.has(key) ?? false;
  api.getMetadata = (key, target) => lookup(key, target)?.get(key);
  api.hasMetadata = (key, target) => lookup(key, target) !== undefined;
  api.defineMetadata = (key, value, target) => {
    let entries = own(target);
    if (!entries) store.set(target, (entries = new Map()));
    entries.set(key, value);
  };
}
