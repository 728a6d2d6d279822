import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { TtlAdvisorError, WatchError } from '../errors.js';
import { recordGapSafely } from '../sample/safe-recorder.js';
import type { GapReason } from '../sample/sample.js';
import { diagnoseLoss, lossNotice } from './gaps.js';
import { KeyspaceTracker, type WatchStats } from './keyspace-tracker.js';
import { checkNotifications, renewLease, restoreNotifications, select, type SettingsContext, type SettingsNode } from './notification-settings.js';
import { resolveWatchOptions, type ResolvedWatchOptions, type WatchOptions } from './options.js';
import { dbOf, eventAt, keyStartOf } from './keyspace-channel.js';
import { OpenLimit } from './open-limit.js';
import { isOwnKeyAt } from './own-keys.js';
import { RespConnection, nodeOfUrl, type NodeAddress, type OpenOptions, type Reply } from './resp.js';

export { WATCH_DEFAULTS } from './options.js';
export type { WatchOptions } from './options.js';

interface Node extends SettingsNode {
  sub: RespConnection | undefined;
  downSince: number | undefined;
  removed: boolean;
  /**
   * Every notification Redis published before this (epoch ms) has been read: the send time of the last
   * PING on the subscriber whose answer came back (Redis answers it after all it published before). A
   * connection Redis drops loses what it still held, from then on: a notification's arrival is no
   * measure of it, since a watcher that falls behind reads seconds-old notifications from its socket.
   */
  seenThroughMs: number;
  /** A PING is on its way on the subscriber: the next is sent once it is answered. */
  pinging: boolean;
  /** The gap being lived through, recorded when the node is back (or the watcher stops). */
  gap: { fromMs: number; reason: GapReason; openHolds: number } | undefined;
}

const TOPOLOGY_POLL_MS = 5000;
/** How often each subscriber is PINGed to know how far its notifications have been read (see `Node.seenThroughMs`). */
const SEEN_THROUGH_PING_MS = 250;
const text = (r: Reply | undefined) => (Buffer.isBuffer(r) ? r.toString() : r instanceof Error ? r.message : String(r));

/**
 * Samples every lock in a Redis from its keyspace notifications: one
 * subscriber per master, a PTTL read per lock on the same node. Runs until
 * {@link stop}; reconnects after a node restarts, dropping (and counting) the
 * holds its gap hid.
 */
export class KeyspaceWatcher {
  private readonly nodes = new Map<string, Node>();
  private readonly tracker: KeyspaceTracker;
  private stopping = false;
  private poll: NodeJS.Timeout | undefined;
  private renewal: NodeJS.Timeout | undefined;
  private pacer: NodeJS.Timeout | undefined;
  private cluster = false;
  private readonly settings: SettingsContext;

  private constructor(private readonly options: ResolvedWatchOptions) {
    this.tracker = new KeyspaceTracker({
      recorder: options.recorder,
      templates: options.templates,
      instance: options.instance,
      maxOpen: options.maxOpen,
      // A glob that matches every key matches every cache: there, only a release makes a lock.
      keepUnconfirmed: options.match !== '*',
      readTtl: (node, db, _key, keyBytes) => this.readTtl(node, db, keyBytes),
      openLimit: new OpenLimit({ maxOpen: options.maxOpen, recorders: options.recorders, instance: options.instance, onNotice: options.onNotice }),
    });
    this.settings = {
      watcherId: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      isCluster: () => this.cluster,
      configure: options.configure,
      leaseMs: options.configureLeaseMs,
      notice: (message) => options.onNotice?.(message),
      open: (address, onPush) => this.open(address, { onPush }),
    };
  }

  /** Connects to every master, checks (or sets) the notifications, subscribes; rejects with a {@link WatchError} saying why not. */
  static async start(options: WatchOptions): Promise<KeyspaceWatcher> {
    const watcher = new KeyspaceWatcher(resolveWatchOptions(options));
    try {
      await watcher.discover();
    } catch (error) {
      await watcher.stop();
      throw error instanceof TtlAdvisorError ? error : new WatchError((error as Error).message);
    }
    watcher.pacer = setInterval(() => watcher.nodes.forEach((node) => watcher.pingSubscriber(node)), SEEN_THROUGH_PING_MS);
    watcher.pacer.unref();
    if (watcher.options.configure) {
      watcher.renewal = setInterval(() => watcher.nodes.forEach((node) => renewLease(watcher.settings, node)), watcher.options.configureLeaseMs / 3);
      watcher.renewal.unref();
    }
    return watcher;
  }

  stats(): WatchStats & { nodes: number; nodesDown: number } {
    const nodes = [...this.nodes.values()];
    return { ...this.tracker.stats(), nodes: nodes.length, nodesDown: nodes.filter((n) => n.downSince !== undefined).length };
  }

  /** Unsubscribes, restores what `configure` changed, and returns how many holds were still open (not recorded). */
  async stop(): Promise<{ abandoned: number }> {
    this.stopping = true;
    clearInterval(this.poll);
    clearInterval(this.renewal);
    clearInterval(this.pacer);
    for (const node of this.nodes.values()) {
      node.sub?.close();
      if (node.gap) this.recordGap(node, 'stopped-while-down');
    }
    await Promise.all([...this.nodes.values()].map((node) => restoreNotifications(this.settings, node)));
    for (const node of this.nodes.values()) node.cmd?.close();
    return { abandoned: this.tracker.close() };
  }

  private async discover(): Promise<void> {
    const seed = nodeOfUrl(this.options.url);
    const probe = await this.open(seed);
    try {
      const info = text(await probe.send(['INFO', 'cluster']));
      this.cluster = /cluster_enabled:1/.test(info);
      const masters = this.cluster ? parseMasters(text(await probe.send(['CLUSTER', 'NODES'])), seed) : [seed];
      for (const address of masters) await this.addNode(address);
    } finally {
      probe.close();
    }
    if (this.cluster) {
      this.poll = setInterval(() => void this.followTopology().catch(() => undefined), TOPOLOGY_POLL_MS);
      this.poll.unref();
    }
  }

  private open(address: NodeAddress, handlers: Omit<OpenOptions, 'timeoutMs'> = {}): Promise<RespConnection> {
    return RespConnection.open(address, { timeoutMs: this.options.connectTimeoutMs, ...handlers }).catch((error: Error) => {
      throw new WatchError(`Cannot connect to Redis at ${address.host}:${address.port}: ${error.message}`);
    });
  }

  private async addNode(address: NodeAddress): Promise<void> {
    const id = `${address.host}:${address.port}`;
    const node: Node = {
      id,
      address,
      sub: undefined,
      cmd: undefined,
      cmdDb: 0,
      marks: undefined,
      original: undefined,
      downSince: undefined,
      removed: false,
      seenThroughMs: Date.now(),
      pinging: false,
      gap: undefined,
    };
    this.nodes.set(id, node);
    await this.connect(node);
  }

  /** Command connection, notification settings, subscriber: in that order, so nothing is missed once subscribed. */
  private async connect(node: Node): Promise<void> {
    const cmd = await this.open(node.address, {
      onClose: () => {
        if (node.cmd === cmd) node.cmd = undefined;
      },
    });
    node.cmd = cmd;
    node.cmdDb = 0;
    const { dbIndex } = this.options;
    if (dbIndex !== undefined) {
      // A database the node does not have (any but 0 in a Cluster) would be watched in silence for ever.
      const selected = await cmd.send(['SELECT', dbIndex]);
      if (selected instanceof Error) throw new WatchError(`Cannot watch database ${dbIndex} on ${node.id}: ${selected.message}`);
      node.cmdDb = dbIndex;
    }
    await checkNotifications(this.settings, node, cmd);
    const db = this.options.dbIndex === undefined ? '*' : String(this.options.dbIndex);
    const sub = await this.open(node.address, {
      onPmessage: (chunk, channelStart, channelEnd, eventStart, eventEnd, arrivedMs) =>
        this.onPmessage(node, chunk, channelStart, channelEnd, eventStart, eventEnd, arrivedMs),
      onClose: () => this.onLost(node, sub),
    });
    const subscribed = await sub.send(['PSUBSCRIBE', `__keyspace@${db}__:${this.options.match}`]);
    if (subscribed instanceof Error) throw new WatchError(`Cannot subscribe on ${node.id}: ${subscribed.message}`);
    // Nothing published before the subscription was this watcher's to read.
    node.seenThroughMs = Date.now();
    node.pinging = false;
    node.sub = sub;
  }

  /** A PING on the node's subscriber, one at a time: its answer moves `seenThroughMs` to when it was sent. */
  private pingSubscriber(node: Node): void {
    const sub = node.sub;
    if (!sub || node.pinging) return;
    node.pinging = true;
    const sentMs = Date.now();
    sub.send(['PING']).then(
      (reply) => {
        if (node.sub !== sub) return;
        node.pinging = false;
        if (!(reply instanceof Error)) node.seenThroughMs = sentMs;
      },
      () => undefined, // the connection closed: onLost takes it from here, and the next connection pings anew
    );
  }

  /**
   * One notification, read where it lies in the socket chunk and stamped with when that chunk arrived:
   * a hold is the time between two such stamps.
   */
  private onPmessage(node: Node, chunk: Buffer, channelStart: number, channelEnd: number, eventStart: number, eventEnd: number, arrivedMs: number): void {
    const keyStart = keyStartOf(chunk, channelStart, channelEnd);
    if (keyStart < 0 || isOwnKeyAt(chunk, keyStart, channelEnd)) return;
    // The key as latin1, one character per byte: one that is not valid UTF-8 is a lock too, and its PTTL needs the exact bytes.
    const key = chunk.toString('latin1', keyStart, channelEnd);
    this.tracker.onKeyEvent(node.id, dbOf(chunk, channelStart), key, eventAt(chunk, eventStart, eventEnd), arrivedMs);
  }

  private onLost(node: Node, sub: RespConnection): void {
    if (this.stopping || node.sub !== sub) return;
    node.sub = undefined;
    node.downSince = performance.now();
    const openHolds = this.tracker.dropNode(node.id);
    // What Redis still held for us is gone with the connection: everything published since it was last known read.
    const fromMs = node.seenThroughMs;
    const cmd = node.cmd;
    node.gap = { fromMs, reason: 'connection-lost', openHolds };
    void diagnoseLoss(cmd).then((diagnosis) => {
      cmd?.close();
      if (node.gap?.fromMs === fromMs) node.gap.reason = diagnosis.reason;
      this.options.onNotice?.(lossNotice(node.id, diagnosis, fromMs, openHolds));
      return this.reconnect(node);
    }).catch(() => undefined); // nothing here may end the host process
  }

  /** Hands the node's gap, now over, to the recorders that keep gaps. */
  private recordGap(node: Node, reason?: GapReason): void {
    const gap = node.gap;
    if (!gap) return;
    node.gap = undefined;
    const { instance } = this.options;
    recordGapSafely(this.options.recorders, {
      source: node.id,
      fromMs: gap.fromMs,
      toMs: Date.now(),
      reason: reason ?? gap.reason,
      openHolds: gap.openHolds,
      ...(instance !== undefined && { instance }),
    });
  }

  private async reconnect(node: Node): Promise<void> {
    for (let attempt = 1; !this.stopping && !node.removed; attempt++) {
      await new Promise((r) => setTimeout(r, Math.min(100 * attempt, 2000)));
      if (this.stopping || node.removed) return;
      try {
        await this.connect(node);
        const lostMs = Date.now() - (node.gap?.fromMs ?? Date.now());
        node.downSince = undefined;
        this.recordGap(node);
        this.options.onNotice?.(`back on ${node.id}: ${(lostMs / 1000).toFixed(1)} s of notifications were not seen (recorded as a gap)`);
        return;
      } catch (error) {
        node.cmd?.close();
        if (attempt === 1 || attempt % 30 === 0) this.options.onNotice?.(`${node.id}: ${(error as Error).message}; retrying`);
      }
    }
  }

  private async followTopology(): Promise<void> {
    const live = [...this.nodes.values()].find((n) => n.cmd?.isOpen);
    if (!live?.cmd) return;
    const masters = parseMasters(text(await live.cmd.send(['CLUSTER', 'NODES'])), live.address);
    const wanted = new Set(masters.map((m) => `${m.host}:${m.port}`));
    for (const node of this.nodes.values()) {
      if (wanted.has(node.id) || node.removed) continue;
      node.removed = true;
      node.sub?.close();
      node.cmd?.close();
      this.nodes.delete(node.id);
      const dropped = this.tracker.dropNode(node.id);
      this.options.onNotice?.(`${node.id} is no longer a master: unsubscribed (${dropped} open lock(s) dropped)`);
    }
    for (const address of masters) {
      if (this.nodes.has(`${address.host}:${address.port}`)) continue;
      await this.addNode(address).then(
        () => this.options.onNotice?.(`${address.host}:${address.port} is a new master: watching it`),
        (error: Error) => this.options.onNotice?.(`new master ${address.host}:${address.port}: ${error.message}`),
      );
    }
  }

  private async readTtl(nodeId: string, db: number, keyBytes: Buffer): Promise<number> {
    const node = this.nodes.get(nodeId);
    const cmd = node?.cmd;
    if (!node || !cmd) return -2;
    select(node, cmd, db);
    const reply = await cmd.send(['PTTL', keyBytes]);
    return typeof reply === 'number' ? reply : -2;
  }
}

/** The masters of a `CLUSTER NODES` answer, with the seed's credentials. */
function parseMasters(nodes: string, seed: NodeAddress): NodeAddress[] {
  const masters: NodeAddress[] = [];
  for (const line of nodes.split('\n')) {
    const [, address, flags] = line.split(' ');
    if (!address || !flags) continue;
    const f = flags.split(',');
    if (!f.includes('master') || f.includes('fail') || f.includes('noaddr')) continue;
    const hostPort = address.split('@')[0]!;
    const colon = hostPort.lastIndexOf(':');
    const host = hostPort.slice(0, colon) || seed.host;
    masters.push({ ...seed, host, port: Number(hostPort.slice(colon + 1)) });
  }
  return masters;
}
