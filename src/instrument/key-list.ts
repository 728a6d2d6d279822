/**
 * A command's keys as the reader keeps them: the first as a string, and a list of the others only when
 * there are some (see `LockCommand`), so that a one-key lock command allocates no list.
 */
export type MoreKeys = readonly string[] | undefined;

/** How many keys `key` and `more` name. */
export const keyCount = (more: MoreKeys): number => (more === undefined ? 1 : 1 + more.length);

/** The `i`-th of them (0: `key`). */
export const keyAt = (key: string, more: MoreKeys, i: number): string => (i === 0 ? key : more![i - 1]!);
