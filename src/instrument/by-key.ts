/** A key's place: its newest entry, and what is known of the key's pattern. */
export interface Slot<T> {
  newest: T | undefined;
  /**
   * The key's pattern was seen confirmed as a lock's (see `ConfirmedPatterns`): kept here so that a
   * lock's release, which looks its key up anyway, does not derive the pattern again. A pattern once
   * confirmed stays so; false means only "not known yet".
   */
  lockPattern: boolean;
}

/**
 * Entries kept per key, newest first, each chained to the older one on the same
 * key. A key's slot stays in the map while it empties and fills again (a lock
 * key is taken over and over): no map insert or delete per lock, so no rehash
 * churn. Empty slots are cleared out by {@link all}, which the sweep calls.
 */
export class ByKey<T extends { readonly key: string; readonly token: string; older: T | undefined }> {
  private readonly map = new Map<string, Slot<T>>();
  size = 0;

  /** The key's slot (one map lookup), to {@link takeFrom} and to read its `lockPattern`; `undefined` when the key has none. */
  slotOf(key: string): Slot<T> | undefined {
    return this.map.get(key);
  }

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
    if (slot === undefined) this.map.set(entry.key, (slot = { newest: undefined, lockPattern: false }));
    for (let e = slot.newest; e !== undefined; e = e.older) if (e.token === entry.token) return false;
    entry.older = slot.newest;
    slot.newest = entry;
    this.size++;
    return true;
  }

  /**
   * Removes and returns the entry with this key and token (the newest of the
   * key's when `token` is undefined), if `accept(entry, arg)` takes it; one map lookup.
   */
  take<A>(key: string, token: string | undefined, accept?: (entry: T, arg: A) => boolean, arg?: A): T | undefined {
    const slot = this.map.get(key);
    return slot === undefined ? undefined : this.takeFrom(slot, token, accept, arg);
  }

  /** {@link take} from a slot of {@link slotOf}: no map lookup (and `accept` is a plain function, so nothing is allocated). */
  takeFrom<A>(slot: Slot<T>, token: string | undefined, accept?: (entry: T, arg: A) => boolean, arg?: A): T | undefined {
    let previous: T | undefined;
    for (let e = slot.newest; e !== undefined; previous = e, e = e.older) {
      if (token !== undefined && e.token !== token) continue;
      if (accept && !accept(e, arg as A)) return undefined;
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
