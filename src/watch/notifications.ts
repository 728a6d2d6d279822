/**
 * The keyspace notifications `watch` needs, read off `notify-keyspace-events`:
 * K (keyspace channels, so a pattern can pick the lock keys), g (generic:
 * `del`, `expire`), $ (string: `set`), x (`expired`). e (`evicted`) is welcome
 * but not required. `A` stands for every class but K, E, m, n and t's friends.
 */
export const NEEDED_CLASSES = ['K', 'g', '$', 'x'] as const;

/** The classes `A` stands for. */
const ALL = new Set(['g', '$', 'l', 's', 'h', 'z', 'x', 'e', 't', 'd']);

function has(flags: string, c: string): boolean {
  return flags.includes(c) || (ALL.has(c) && flags.includes('A'));
}

/** The needed classes the current setting lacks, in the order Redis documents them ('' when none). */
export function missingClasses(current: string): string {
  return NEEDED_CLASSES.filter((c) => !has(current, c)).join('');
}

/** The setting with the missing classes added, keeping what is there (other tools may use it). */
export function withNeededClasses(current: string): string {
  return current + missingClasses(current);
}

/** The one line that says what to run, for a Redis (or a managed one) whose notifications are off. */
export function notificationsOffMessage(where: string, current: string): string {
  const wanted = withNeededClasses(current);
  return (
    `Keyspace notifications on ${where} lack ${missingClasses(current)} (notify-keyspace-events is ${JSON.stringify(current)}): ` +
    `run CONFIG SET notify-keyspace-events ${wanted} (on a managed Redis, set the parameter notify-keyspace-events to ${wanted}), or pass --configure`
  );
}

/**
 * The one line for a Redis whose setting cannot be read (`why`: CONFIG GET's refusal) and where a probe key's
 * events of the classes `missing` did not arrive: what to set, first where a managed Redis keeps it.
 */
export function probedOffMessage(where: string, missing: string, why: string): string {
  return (
    `Keyspace notifications on ${where} lack ${missing}: a probe key's events of ${missing.length === 1 ? 'that class' : 'those classes'} did not arrive ` +
    `(notify-keyspace-events cannot be read: ${why}). On a managed Redis, set the parameter notify-keyspace-events in its parameter group ` +
    `to include ${missing} (e.g. ${NEEDED_CLASSES.join('')}); elsewhere, add ${missing} with CONFIG SET notify-keyspace-events`
  );
}
