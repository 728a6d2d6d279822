import type { LockCommand } from './commands.js';

/**
 * Acquires sent and not yet answered, as a doubly linked list through the
 * commands themselves (`prev`, `next`): adding and removing one is a few
 * pointer writes, with no hashing per command (a `Set` of them was one hash
 * insert and one delete per lock).
 */
export class InFlight {
  private head: LockCommand | undefined = undefined;
  size = 0;

  add(command: LockCommand): LockCommand {
    command.next = this.head;
    if (this.head !== undefined) this.head.prev = command;
    this.head = command;
    this.size++;
    return command;
  }

  /** Takes `command` out; a no-op when it is not in the list (answered already, or cleared). */
  remove(command: LockCommand): void {
    if (command.prev === undefined && this.head !== command) return;
    if (command.prev === undefined) this.head = command.next;
    else command.prev.next = command.next;
    if (command.next !== undefined) command.next.prev = command.prev;
    command.prev = command.next = undefined;
    this.size--;
  }

  /** Every acquire awaiting its reply. */
  all(): LockCommand[] {
    const list: LockCommand[] = [];
    for (let c = this.head; c !== undefined; c = c.next) list.push(c);
    return list;
  }

  clear(): void {
    for (const c of this.all()) c.prev = c.next = undefined;
    this.head = undefined;
    this.size = 0;
  }
}
