/**
 * Entries kept per key, newest first, each chained to the older one on the same
 * key. A key's slot stays in the map while it empties and fills again (a lock
 * key is taken over and over): no map insert or delete per lock, so no rehash
 * churn. Empty slots are cleared out by {@link all}, which the sweep calls.
 */
export class ByKey<T extends { readonly key: string; readonly token: string; older: T | undefined }> {
  private readonly map = new Map<string, { newest: T | undefined }>();
  size = 0;

  newest(key: string): T | undefined {
    return this.map.get(key)?.newest;
  }

  find(key: string, token: string): T | undefined {
    for (let e = this.map.get(key)?.newest; e !== undefined; e = e.older) if (e.token === token) return e;
    return undefined;
  }

  /** Adds an entry unless one with its key and token is there already (then returns false). */
  add(entry: T): boolean {
    let slot = this.map.get(entry.key);
    if (slot === undefined) this.map.set(entry.key, (slot = { newest: undefined }));
    for (let e = slot.newest; e !== undefined; e = e.older) if (e.token === entry.token) return false;
    entry.older = slot.newest;
    slot.newest = entry;
    this.size++;
    return true;
  }

  /**
   * Removes and returns the entry with this key and token (the newest of the
   * key's when `token` is undefined), if `accept` takes it; one map lookup.
   */
  take(key: string, token: string | undefined, accept?: (entry: T) => boolean): T | undefined {
    const slot = this.map.get(key);
    if (slot === undefined) return undefined;
    let previous: T | undefined;
    for (let e = slot.newest; e !== undefined; previous = e, e = e.older) {
      if (token !== undefined && e.token !== token) continue;
      if (accept && !accept(e)) return undefined;
      if (previous === undefined) slot.newest = e.older;
      else previous.older = e.older;
      e.older = undefined;
      this.size--;
      return e;
    }
    return undefined;
  }

  remove(entry: T): void {
    this.take(entry.key, entry.token);
  }

  /** Every entry, newest first per key (safe to remove from afterwards); drops the slots left empty. */
  all(): T[] {
    const list: T[] = [];
    for (const [key, slot] of this.map) {
      if (slot.newest === undefined) this.map.delete(key);
      for (let e = slot.newest; e !== undefined; e = e.older) list.push(e);
    }
    return list;
  }

  clear(): void {
    this.map.clear();
    this.size = 0;
  }
}
