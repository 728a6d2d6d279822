/**
 * The keyspace notifications `watch` needs, read off `notify-keyspace-events`:
 * K (keyspace channels, so a pattern can pick the lock keys), g (generic:
 * `del`, `expire`), $ (string: `set`), x (`expired`). e (`evicted`) is welcome
 * but not required. `A` stands for every class but K, E, m, n and t's friends.
 */
export const NEEDED_CLASSES = ['K', 'g', '$', 'x'] as const;

/**
 * Classes `watch` sets with `--configure` and names when they are off, but does not refuse without:
 * h (hash: `hincrby`), the only trace of a hash lock's acquire — Redisson's RLock takes its lock with
 * HINCRBY — so without it those locks are not seen (string locks are).
 */
export const WANTED_CLASSES = ['h'] as const;

/** Why `h` is wanted, for the lines that say it is off. */
const WHY_WANTED = "h lets watch see hash locks such as Redisson's RLock, taken with HINCRBY";

/** The classes `A` stands for. */
const ALL = new Set(['g', '$', 'l', 's', 'h', 'z', 'x', 'e', 't', 'd']);

function has(flags: string, c: string): boolean {
  return flags.includes(c) || (ALL.has(c) && flags.includes('A'));
}

/** The needed classes the current setting lacks, in the order Redis documents them ('' when none). */
export function missingClasses(current: string): string {
  return NEEDED_CLASSES.filter((c) => !has(current, c)).join('');
}

/** The wanted classes ({@link WANTED_CLASSES}) the current setting lacks ('' when none). */
export function missingWantedClasses(current: string): string {
  return WANTED_CLASSES.filter((c) => !has(current, c)).join('');
}

/** The setting with the missing needed and wanted classes added, keeping what is there (other tools may use it). */
export function withNeededClasses(current: string): string {
  return current + missingClasses(current) + missingWantedClasses(current);
}

/** The notice for a setting that has every needed class but lacks a wanted one: what is not seen, and how to see it. */
export function wantedOffMessage(where: string, missing: string, current: string | undefined): string {
  const how = current === undefined ? `add ${missing} to notify-keyspace-events` : `run CONFIG SET notify-keyspace-events ${current}${missing}`;
  return `notify-keyspace-events on ${where} lacks ${missing}: hash locks such as Redisson's RLock (taken with HINCRBY) are not seen; to see them, ${how} or pass --configure`;
}

/** The one line that says what to run, for a Redis (or a managed one) whose notifications are off. */
export function notificationsOffMessage(where: string, current: string): string {
  const wanted = withNeededClasses(current);
  const why = missingWantedClasses(current) === '' ? '' : ` (${WHY_WANTED})`;
  return (
    `Keyspace notifications on ${where} lack ${missingClasses(current)} (notify-keyspace-events is ${JSON.stringify(current)}): ` +
    `run CONFIG SET notify-keyspace-events ${wanted} (on a managed Redis, set the parameter notify-keyspace-events to ${wanted}), or pass --configure${why}`
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
    `to include ${missing} (e.g. ${NEEDED_CLASSES.join('')}${WANTED_CLASSES.join('')}; ${WHY_WANTED}); elsewhere, add ${missing} with CONFIG SET notify-keyspace-events`
  );
}
