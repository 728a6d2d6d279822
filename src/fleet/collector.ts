import { CommandTimeoutError, withDeadline } from '../deadline.js';
import { defaultInstanceId } from '../token.js';
import { fieldsOf, pairsOf, sendCommandOf, type RedisCommandClient, type SendCommand } from '../redis-client.js';
import { openForWriting } from '../store/schema.js';
import { SampleWriter } from '../store/writer.js';
import { positiveInteger } from '../validate.js';
import { DEFAULT_STREAM } from './stream-sink.js';
import { decodeStreamBatch, type StreamBatch } from './stream-entry.js';

/** Options of {@link StreamCollector}. */
export interface CollectorOptions {
  /** The central samples database. */
  db: string;
  /** @default 'ttl-advisor:samples' */
  stream?: string;
  /** Consumer group shared by all collectors. @default 'ttl-advisor' */
  group?: string;
  /** This collector's name in the group. @default `${hostname}:${pid}` */
  consumer?: string;
  /** Entries read per XREADGROUP. @default 200 */
  batchSize?: number;
  /** How long one XREADGROUP blocks waiting for entries (ms). @default 1000 */
  blockMs?: number;
  /** Longest wait for any reply beyond the block time (ms): a Redis that accepts and never answers is a Redis error, retried. @default 5000 */
  commandTimeoutMs?: number;
  /**
   * Entries another collector read but has not acknowledged for this long (ms)
   * are claimed (XAUTOCLAIM): that collector is taken for dead. A live one
   * acknowledges within milliseconds of reading. @default 30000
   */
  claimIdleMs?: number;
  /** Called about every `progressIntervalMs` with the totals so far. */
  onProgress?: (progress: CollectorProgress) => void;
  /** @default 10000 */
  progressIntervalMs?: number;
  /** Called for each entry that cannot be decoded (it is acknowledged and skipped). */
  onBadEntry?: (id: string, error: Error) => void;
  /** Called when Redis fails; the collector waits and tries again (a restarted Redis gets its group back). */
  onRedisError?: (error: Error) => void;
}

export interface CollectorProgress {
  /** Stream entries handled (applied, duplicate or bad). */
  entries: number;
  /** Entries applied for the first time. */
  applied: number;
  /** Redelivered entries recognised and skipped. */
  duplicates: number;
  bad: number;
  /** Locks counted by the applied rollups. */
  samples: number;
  /** Entries claimed from collectors taken for dead. */
  claimed: number;
  entriesPerSecond: number;
  /** Entries in the stream not yet delivered to the group (Redis ≥ 7), when known. */
  lag: number | undefined;
  /** Entries delivered but not yet acknowledged, group-wide. */
  pending: number | undefined;
}

/** Defaults of {@link CollectorOptions}, frozen; the CLI's help shows these. */
export const COLLECTOR_DEFAULTS = Object.freeze({
  stream: DEFAULT_STREAM,
  group: 'ttl-advisor',
  batchSize: 200,
  blockMs: 1000,
  claimIdleMs: 30_000,
  progressIntervalMs: 10_000,
  commandTimeoutMs: 5000,
});

/** Thrown inside `run` when its signal aborts: a stop, not a failure. */
class Stopped extends Error {}

type StreamEntries = [id: string, fields: string[] | null][];

/** Stream entries from a reply, each with its fields as a flat [field, value, …] list (null for an entry deleted meanwhile). */
function entriesOf(reply: unknown): StreamEntries {
  if (!Array.isArray(reply)) return [];
  return reply.map((entry) => {
    const [id, fields] = entry as [unknown, unknown];
    return [String(id), fields === null || fields === undefined ? null : pairsOf(fields).flatMap(([f, v]) => [String(f), String(v)])];
  });
}

/**
 * Reads sink batches from a Redis stream through a consumer group into a
 * central SQLite file. An entry is acknowledged (XACK) only after the SQLite
 * transaction that applied it commits, and every batch carries an
 * (instance, epoch, seq) identity that the same transaction records, so a
 * redelivered entry is never counted twice. Several collectors may share the
 * group; entries left pending by a dead one are claimed after `claimIdleMs`.
 *
 * The Redis connection blocks in XREADGROUP: give the collector its own. Any
 * client works: ioredis `Redis` or `Cluster`, node-redis client or cluster.
 */
export class StreamCollector {
  private readonly stream: string;
  private readonly group: string;
  private readonly consumer: string;
  private readonly batchSize: number;
  private readonly blockMs: number;
  private readonly claimIdleMs: number;
  private readonly progressIntervalMs: number;
  private readonly totals = { entries: 0, applied: 0, duplicates: 0, bad: 0, samples: 0, claimed: 0 };
  private readonly send: SendCommand;
  private readonly commandTimeoutMs: number;
  private stopSignal: AbortSignal | undefined;

  constructor(
    redis: RedisCommandClient,
    private readonly options: CollectorOptions,
  ) {
    this.send = sendCommandOf(redis);
    const d = COLLECTOR_DEFAULTS;
    this.stream = options.stream ?? d.stream;
    this.group = options.group ?? d.group;
    this.consumer = options.consumer ?? defaultInstanceId();
    this.batchSize = positiveInteger('batchSize', options.batchSize, d.batchSize);
    this.blockMs = positiveInteger('blockMs', options.blockMs, d.blockMs);
    this.claimIdleMs = positiveInteger('claimIdleMs', options.claimIdleMs, d.claimIdleMs);
    this.progressIntervalMs = positiveInteger('progressIntervalMs', options.progressIntervalMs, d.progressIntervalMs);
    this.commandTimeoutMs = positiveInteger('commandTimeoutMs', options.commandTimeoutMs, d.commandTimeoutMs);
  }

  /**
   * Collects until `signal` aborts, then resolves with the totals. A stop never
   * waits on Redis: a command under way is abandoned (entries it read stay
   * pending in the group and come back on the next run), one applied to SQLite
   * is acknowledged first.
   */
  async run(signal: AbortSignal): Promise<CollectorProgress> {
    this.stopSignal = signal;
    const db = openForWriting(this.options.db, 5000);
    // Batches carry their own patterns and instances: the writer needs no templates and no cap.
    const writer = new SampleWriter(db, { instance: 'collector', maxPatterns: Number.MAX_SAFE_INTEGER });
    const started = Date.now();
    let lastProgress = started;
    let lastClaim = 0;
    try {
      await this.ensureGroup();
      // Entries this consumer read before a restart and never acknowledged.
      for (;;) {
        const own = await this.read('0', false);
        if (own.length === 0) break;
        await this.handle(own, writer);
      }
      while (!signal.aborted) {
        try {
          if (Date.now() - lastClaim >= Math.min(this.claimIdleMs, 5000)) {
            lastClaim = Date.now();
            await this.claimAbandoned(writer);
          }
          const entries = await this.read('>', true);
          if (entries.length > 0) await this.handle(entries, writer);
        } catch (error) {
          if (!isRedisError(error)) throw error;
          this.options.onRedisError?.(error as Error);
          // A restarted Redis has lost the stream and its group: create them again.
          if (/NOGROUP/.test((error as Error).message)) await this.ensureGroup().catch(() => undefined);
          else await new Promise((resolve) => setTimeout(resolve, 500));
        }
        if (Date.now() - lastProgress >= this.progressIntervalMs) {
          lastProgress = Date.now();
          this.options.onProgress?.(await this.progress(started));
        }
      }
      return await this.progress(started);
    } catch (error) {
      if (error instanceof Stopped) return this.finalProgress(started);
      throw error;
    } finally {
      db.close();
    }
  }

  /** One command, bounded by `commandTimeoutMs` (plus what it blocks for) and by the stop signal. */
  private command(args: readonly (string | number)[], blockMs = 0): Promise<unknown> {
    const signal = this.stopSignal;
    if (signal?.aborted) return Promise.reject(new Stopped());
    const reply = withDeadline(this.send(args, this.stream), this.commandTimeoutMs + blockMs);
    if (!signal) return reply;
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(new Stopped());
      signal.addEventListener('abort', onAbort, { once: true });
      reply.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private async ensureGroup(): Promise<void> {
    try {
      // From the stream's start: batches sent before the first collector ran are not lost.
      await this.command(['XGROUP', 'CREATE', this.stream, this.group, '0', 'MKSTREAM']);
    } catch (error) {
      if (!String((error as Error).message).startsWith('BUSYGROUP')) throw error;
    }
  }

  private async read(id: '0' | '>', block: boolean): Promise<StreamEntries> {
    const args: (string | number)[] = ['XREADGROUP', 'GROUP', this.group, this.consumer, 'COUNT', this.batchSize];
    if (block) args.push('BLOCK', this.blockMs);
    args.push('STREAMS', this.stream, id);
    // One stream asked for: its entries are the first (and only) value of the stream → entries reply.
    const [first] = pairsOf(await this.command(args, block ? this.blockMs : 0));
    return entriesOf(first?.[1]);
  }

  private async claimAbandoned(writer: SampleWriter): Promise<void> {
    let cursor = '0-0';
    do {
      const reply = (await this.command(['XAUTOCLAIM', this.stream, this.group, this.consumer, this.claimIdleMs, cursor, 'COUNT', this.batchSize])) as [
        unknown,
        unknown,
      ];
      cursor = String(reply[0]);
      const entries = entriesOf(reply[1]).filter(([, fields]) => fields !== null);
      this.totals.claimed += entries.length;
      if (entries.length > 0) await this.handle(entries, writer);
    } while (cursor !== '0-0');
  }

  /** Applies entries in one transaction, then acknowledges them: never the other way round. */
  private async handle(entries: StreamEntries, writer: SampleWriter): Promise<void> {
    const batches: StreamBatch[] = [];
    for (const [id, fields] of entries) {
      try {
        batches.push(decodeStreamBatch(fields ?? []));
      } catch (error) {
        this.totals.bad++;
        this.options.onBadEntry?.(id, error as Error);
      }
    }
    const result = writer.apply(batches);
    this.totals.entries += entries.length;
    this.totals.applied += result.applied;
    this.totals.duplicates += result.duplicates;
    this.totals.samples += result.samples;
    // Applied and committed: acknowledged even when a stop was asked meanwhile (else it would come back).
    await withDeadline(this.send(['XACK', this.stream, this.group, ...entries.map(([id]) => id)], this.stream), this.commandTimeoutMs);
  }

  private async progress(started: number): Promise<CollectorProgress> {
    let lag: number | undefined;
    let pending: number | undefined;
    try {
      const groups = (await this.command(['XINFO', 'GROUPS', this.stream])) as unknown[];
      for (const g of groups) {
        const info = fieldsOf(g);
        if (String(info.get('name')) !== this.group) continue;
        lag = typeof info.get('lag') === 'number' ? (info.get('lag') as number) : undefined;
        pending = typeof info.get('pending') === 'number' ? (info.get('pending') as number) : undefined;
      }
    } catch {
      // progress is best effort
    }
    return this.totalsSince(started, lag, pending);
  }

  /** The totals at a stop: the group's lag when Redis answers at once, without waiting on a stalled one. */
  private async finalProgress(started: number): Promise<CollectorProgress> {
    this.stopSignal = undefined;
    let timer: NodeJS.Timeout | undefined;
    const quick = new Promise<CollectorProgress>((resolve) => (timer = setTimeout(() => resolve(this.totalsSince(started, undefined, undefined)), 300)));
    try {
      return await Promise.race([this.progress(started), quick]);
    } finally {
      clearTimeout(timer);
    }
  }

  private totalsSince(started: number, lag: number | undefined, pending: number | undefined): CollectorProgress {
    const seconds = Math.max(0.001, (Date.now() - started) / 1000);
    return { ...this.totals, entriesPerSecond: this.totals.entries / seconds, lag, pending };
  }
}

/** Errors from Redis or the connection, as opposed to SQLite or programming errors. */
function isRedisError(error: unknown): boolean {
  const e = error as { name?: string; code?: string; message?: string };
  return (
    error instanceof CommandTimeoutError ||
    // ioredis
    e?.name === 'ReplyError' ||
    e?.name === 'MaxRetriesPerRequestError' ||
    // node-redis: its error classes set no name, so the class itself says what happened
    /^(ErrorReply|SimpleError|BlobError|ClientClosedError|ClientOfflineError|SocketClosedUnexpectedlyError|ConnectionTimeoutError|ReconnectStrategyError|SocketTimeoutError)$/.test(
      (error as object | undefined)?.constructor?.name ?? '',
    ) ||
    /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT)$/.test(e?.code ?? '') ||
    /Connection is closed|NOGROUP|LOADING/.test(e?.message ?? '')
  );
}
