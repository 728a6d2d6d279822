import type { GapReason } from '../sample/sample.js';
import type { RespConnection, Reply } from './resp.js';

/** Redis's default pubsub limit, for when CONFIG cannot be read. */
const DEFAULT_PUBSUB_LIMIT = '32mb 8mb 60';
const PROBE_TIMEOUT_MS = 1000;

/** Why a subscriber's connection was lost, and the pubsub limit in force when it can be read. */
export interface LossDiagnosis {
  reason: Exclude<GapReason, 'stopped-while-down'>;
  /** `client-output-buffer-limit`'s pubsub class: hard, soft, soft seconds (`33554432 8388608 60`). */
  pubsubLimit: string | undefined;
}

/**
 * Tells why the subscriber dropped, from the command connection of the same
 * node: when Redis still answers there, it closed the subscriber itself while
 * staying up — for a subscriber that is the pubsub output-buffer limit
 * (notifications came faster than they were read; `CLIENT KILL` and
 * `timeout` do not apply to pubsub clients by default). When it does not
 * answer, the connection was lost (Redis down or restarting, the network).
 */
export async function diagnoseLoss(cmd: RespConnection | undefined): Promise<LossDiagnosis> {
  if (!cmd?.isOpen) return { reason: 'connection-lost', pubsubLimit: undefined };
  const pong = await within(cmd.send(['PING']));
  if (!Buffer.isBuffer(pong)) return { reason: 'connection-lost', pubsubLimit: undefined };
  const limits = await within(cmd.send(['CONFIG', 'GET', 'client-output-buffer-limit']));
  return { reason: 'output-buffer-limit', pubsubLimit: pubsubLimitOf(limits) };
}

/** `pubsub 33554432 8388608 60` out of CONFIG GET's answer, or undefined (CONFIG forbidden, renamed). */
export function pubsubLimitOf(reply: Reply | undefined): string | undefined {
  if (!Array.isArray(reply) || !Buffer.isBuffer(reply[1])) return undefined;
  const match = /pubsub (\d+) (\d+) (\d+)/.exec(reply[1].toString());
  return match ? `${match[1]} ${match[2]} ${match[3]}` : undefined;
}

/** The operator's sentence for a loss: what happened, what was lost, what to do. */
export function lossNotice(node: string, diagnosis: LossDiagnosis, seenThroughMs: number, openHolds: number): string {
  const since = new Date(seenThroughMs).toISOString();
  const lost = `notifications after ${since} (by then every one published had been read) are lost: ${openHolds} open lock(s) dropped, and the hours from then until resubscribed are recorded as incomplete (their counts are lower bounds)`;
  if (diagnosis.reason === 'connection-lost') return `lost ${node}: the connection dropped and Redis does not answer; ${lost}; reconnecting`;
  const limit = diagnosis.pubsubLimit === undefined ? `${DEFAULT_PUBSUB_LIMIT} by default` : readableLimit(diagnosis.pubsubLimit);
  return (
    `lost ${node}: Redis closed the notification connection while it stayed up — its pubsub output-buffer limit ` +
    `(client-output-buffer-limit pubsub ${limit}): notifications came faster than this watcher read them. ${lost[0]!.toUpperCase()}${lost.slice(1)}. ` +
    'Raise the limit (CONFIG SET client-output-buffer-limit "pubsub 256mb 64mb 60"; on managed Redis, in its parameter group), ' +
    'narrow --match to the lock keys, or run the watcher where it gets a CPU of its own, close to Redis; reconnecting'
  );
}

/** `33554432 8388608 60` → `32mb 8mb 60`. */
function readableLimit(limit: string): string {
  return limit
    .split(' ')
    .map((v, i) => (i < 2 && Number(v) >= 1024 * 1024 && Number(v) % (1024 * 1024) === 0 ? `${Number(v) / (1024 * 1024)}mb` : v))
    .join(' ');
}

function within(pending: Promise<Reply>): Promise<Reply | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), PROBE_TIMEOUT_MS)));
  return Promise.race([pending.catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
}
