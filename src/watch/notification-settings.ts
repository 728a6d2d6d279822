import { WatchError } from '../errors.js';
import { clearMark, configureMarks, joinMarks, leaveMarks, markOriginal, type ConfigureMarks } from './configure-marks.js';
import { WANTED_CLASSES, missingClasses, missingWantedClasses, notificationsOffMessage, probedOffMessage, wantedOffMessage, withNeededClasses } from './notifications.js';
import { OWN_KEY_PREFIX, ownKeyTag } from './own-keys.js';
import { probeNotifications } from './probe.js';
import type { NodeAddress, Reply, RespConnection } from './resp.js';

/**
 * A node's `notify-keyspace-events`, as `watch` checks, sets and restores it:
 * read with CONFIG GET (tested with a probe key where CONFIG is refused),
 * changed by `--configure` under marks a later run can undo (configure-marks.ts).
 */

/** What these functions need of a node the watcher follows. */
export interface SettingsNode {
  readonly id: string;
  readonly address: NodeAddress;
  cmd: RespConnection | undefined;
  /** The database the command connection has selected (commands on it are pipelined). */
  cmdDb: number;
  /** Where this watcher's `--configure` lease is kept on the node, once it joined. */
  marks: ConfigureMarks | undefined;
  /** The setting before `--configure` changed it, where no mark could be written: restored from memory. */
  original: string | undefined;
}

/** What they need of the watcher. */
export interface SettingsContext {
  /** This watcher among others: its lease's member, its probe key's name. */
  readonly watcherId: string;
  isCluster(): boolean;
  readonly configure: boolean;
  readonly leaseMs: number;
  notice(message: string): void;
  open(address: NodeAddress, onPush?: (message: Reply[]) => void): Promise<RespConnection>;
}

/** Selects database `db` on a node's command connection, pipelined: answered before the command behind it. */
export function select(node: SettingsNode, cmd: RespConnection, db: number): void {
  if (node.cmdDb === db) return;
  node.cmdDb = db;
  void cmd.send(['SELECT', db]).catch(() => undefined);
}

/**
 * Checks (or, with `configure`, sets) the classes `watch` needs on a node; throws a {@link WatchError} saying what to set.
 * A wanted class that is off (`h`: hash locks) is only a notice: the other locks are seen without it.
 */
export async function checkNotifications(ctx: SettingsContext, node: SettingsNode, cmd: RespConnection): Promise<void> {
  const reply = await cmd.send(['CONFIG', 'GET', 'notify-keyspace-events']);
  const current = Array.isArray(reply) && Buffer.isBuffer(reply[1]) ? reply[1].toString() : undefined;
  // CONFIG refused (an ACL's -config) or renamed, as on managed Redis: whether the events arrive is tested instead.
  if (current === undefined) await probe(ctx, node, cmd, reply instanceof Error ? reply.message : 'CONFIG GET answered nothing');
  else if (ctx.configure) await configure(ctx, node, cmd, current);
  else if (missingClasses(current) !== '') throw new WatchError(notificationsOffMessage(node.id, current));
  else if (missingWantedClasses(current) !== '') ctx.notice(wantedOffMessage(node.id, missingWantedClasses(current), current));
}

/** Leaves the node's marks and, as the last configuring watcher, restores the setting from before. */
export async function restoreNotifications(ctx: SettingsContext, node: SettingsNode): Promise<void> {
  if (!node.marks && node.original === undefined) return;
  let cmd: RespConnection | undefined;
  try {
    cmd = node.cmd?.isOpen ? node.cmd : await ctx.open(node.address);
    if (cmd === node.cmd) select(node, cmd, 0);
    let original = node.original;
    if (node.marks) {
      const left = await leaveMarks(cmd, node.marks, ctx.watcherId);
      if (left instanceof Error) throw left;
      if ('others' in left) {
        ctx.notice(`left notify-keyspace-events on ${node.id} as it is: ${left.others} other --configure watcher(s) still use it; the last to stop restores it`);
        return;
      }
      original ??= left.restore;
    }
    if (original === undefined) return;
    const reply = await cmd.send(['CONFIG', 'SET', 'notify-keyspace-events', original]);
    if (reply instanceof Error) throw reply;
    if (node.marks) await clearMark(cmd, node.marks);
  } catch (error) {
    ctx.notice(`could not restore notify-keyspace-events on ${node.id}: ${(error as Error).message}`);
  } finally {
    if (cmd !== node.cmd) cmd?.close();
  }
}

/** Renews this watcher's `--configure` lease on a node; a missed renewal is not fatal (a lease spans three). */
export function renewLease(ctx: SettingsContext, node: SettingsNode): void {
  if (!node.marks || !node.cmd?.isOpen) return;
  select(node, node.cmd, 0);
  void joinMarks(node.cmd, node.marks, ctx.watcherId, ctx.leaseMs).catch(() => undefined);
}

/** The hash tag that keeps this watcher's own keys on the node ('' outside a Cluster; `undefined`: it serves no slot). */
async function ownTag(ctx: SettingsContext, cmd: RespConnection): Promise<string | undefined> {
  if (!ctx.isCluster()) return '';
  const nodes = await cmd.send(['CLUSTER', 'NODES']);
  return Buffer.isBuffer(nodes) ? ownKeyTag(nodes.toString()) : undefined;
}

/** `notify-keyspace-events` cannot be read (`why`): refuses if a probe key's events do not arrive. */
async function probe(ctx: SettingsContext, node: SettingsNode, cmd: RespConnection, why: string): Promise<void> {
  const tag = await ownTag(ctx, cmd);
  const result =
    tag === undefined
      ? { untested: 'the node serves no slot to put a probe key in' }
      : await probeNotifications(cmd, (onPush) => ctx.open(node.address, onPush), node.cmdDb, `${OWN_KEY_PREFIX}probe:${ctx.watcherId}${tag}`);
  if ('untested' in result) {
    ctx.notice(
      `cannot check the keyspace notifications on ${node.id}: notify-keyspace-events cannot be read (${why}) nor tested (${result.untested}); ` +
        "watching anyway: if no lock is ever counted, add Kg$x to notify-keyspace-events (and h, to see hash locks such as Redisson's)",
    );
    return;
  }
  const wanted = [...result.missing].filter((c) => (WANTED_CLASSES as readonly string[]).includes(c)).join('');
  const needed = [...result.missing].filter((c) => !wanted.includes(c)).join('');
  if (needed !== '') throw new WatchError(probedOffMessage(node.id, needed, why));
  if (wanted !== '') ctx.notice(wantedOffMessage(node.id, wanted, undefined));
}

/** `--configure`: joins the node's marks (or remembers the setting in memory), then adds the missing classes, wanted ones too. */
async function configure(ctx: SettingsContext, node: SettingsNode, cmd: RespConnection, current: string): Promise<void> {
  const missing = missingClasses(current) + missingWantedClasses(current);
  const tag = await ownTag(ctx, cmd);
  if (tag !== undefined) {
    const marks = configureMarks(tag);
    select(node, cmd, 0);
    const joined = await joinMarks(cmd, marks, ctx.watcherId, ctx.leaseMs);
    if (joined instanceof Error) {
      ctx.notice(`cannot mark what --configure changes on ${node.id} (${joined.message}): if this watcher is killed, the setting stays changed`);
    } else {
      node.marks = marks;
      if (joined.original !== undefined && missing === '') {
        const was = JSON.stringify(joined.original);
        ctx.notice(
          joined.others > 0
            ? `notify-keyspace-events on ${node.id} is set by ${joined.others} other running --configure watcher(s); the last to stop restores ${was}`
            : `notify-keyspace-events on ${node.id} was left changed by a --configure watcher that did not stop cleanly; ${was} is restored when this one stops`,
        );
      }
    }
  }
  if (missing === '') return;
  // Marked before it changes, so a watcher killed right after still leaves the way back. The first value seen is the
  // one to restore: after a lost connection, what Redis reports may be our own.
  const unmarked = node.marks ? await markOriginal(cmd, node.marks, current) : true;
  if (unmarked) node.original ??= current;
  const reply = await cmd.send(['CONFIG', 'SET', 'notify-keyspace-events', withNeededClasses(current)]);
  if (reply instanceof Error) throw new WatchError(`Cannot set notify-keyspace-events on ${node.id}: ${reply.message}`);
}
