// A map of at most `limit` entries that forgets its oldest when a new key
// comes in full: the look-aside caches whose keys come from requests (quota
// live lists, webhook decisions, conversions made ahead) stay bounded
// whatever clients send. Setting a key again makes it the newest.

export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    this.delete(key);
    if (this.size >= this.limit) this.delete(this.keys().next().value!);
    return super.set(key, value);
  }
}
