import type { LeaseAnalysis } from '../analyze/lease.js';
import { LEASE_SAFETY, MIN_RENEWALS } from '../analyze/lease.js';
import { formatCount, formatMs } from '../units.js';

/**
 * A lease's advice in the words of the library whose locks they are (see
 * `analyze/lease.ts` for the numbers): what to set, where it is set.
 */

/** Library names as users know them. */
const LIBRARY_NAMES: Readonly<Record<LeaseAnalysis['library'], string>> = {
  unknown: 'renewed lock',
  'ttl-advisor': 'withLock autoExtend',
  bullmq: 'BullMQ',
  redlock: 'node-redlock using()',
  'redis-semaphore': 'redis-semaphore',
  redisson: 'Redisson',
  'redis-py': 'redis-py Lock',
};

export function libraryName(lease: LeaseAnalysis): string {
  return LIBRARY_NAMES[lease.library];
}

/** The settings to write, in the library's own terms: "`lockDuration: 3000`". */
export function leaseSettingsText(lease: LeaseAnalysis): string {
  const { leaseMs, renewEveryMs, thresholdMs, maxHoldMs } = lease.recommended;
  switch (lease.library) {
    case 'bullmq':
      return `Worker option \`lockDuration: ${leaseMs}\` (renewed \`lockDuration / 2\` apart at the latest); a crashed worker's job is taken up again within \`lockDuration\` + \`stalledInterval\`, so keep \`stalledInterval\` near it; a job timeout of ${formatMs(maxHoldMs)}`;
    case 'redlock':
      return `\`redlock.using(keys, ${leaseMs}, { automaticExtensionThreshold: ${thresholdMs ?? leaseMs - renewEveryMs} }, …)\`; abort the routine after ${formatMs(maxHoldMs)}`;
    case 'redis-semaphore':
      return `\`{ lockTimeout: ${leaseMs}, refreshInterval: ${renewEveryMs} }\`; stop the work after ${formatMs(maxHoldMs)}`;
    case 'redisson':
      return `\`Config.setLockWatchdogTimeout(${leaseMs})\` (renewed every third of it); \`lock.lock(leaseTime)\` is not a lease — keep the watchdog; cap the work at ${formatMs(maxHoldMs)}`;
    case 'ttl-advisor':
      return `\`{ ttlMs: ${leaseMs}, autoExtend: ${renewEveryMs}, maxHoldMs: ${maxHoldMs} }\``;
    default:
      return `a lease of ${formatMs(leaseMs)}, renewed every ${formatMs(renewEveryMs)}${thresholdMs !== undefined ? ` (when less than ${formatMs(thresholdMs)} is left)` : ''}; cap holds at ${formatMs(maxHoldMs)}`;
  }
}

/** How the recommendation comes from the lateness: the formula with its numbers. */
export function leaseFormulaText(lease: LeaseAnalysis, floorMs: number): string {
  const q = formatMs(lease.latenessMs.p999);
  if (lease.mode === 'threshold') {
    const rtt = lease.roundTripMs ? ` + p99 round trip ${formatMs(lease.roundTripMs.p99)}` : '';
    return `threshold ≥ ${LEASE_SAFETY} × q99.9 lateness ${q}${rtt} → ${formatMs(lease.recommended.thresholdMs ?? 0)}; duration max(${formatMs(floorMs)}, 2 × threshold) = ${formatMs(lease.recommended.leaseMs)}`;
  }
  const alpha = Math.min(0.95, Math.max(0.05, lease.alpha));
  return `lease = max(${formatMs(floorMs)}, ${LEASE_SAFETY} × q99.9 lateness ${q} / (1 − ${round2(alpha)})) = ${formatMs(lease.recommended.leaseMs)}`;
}

/** The lease finding: what the renewals showed and what to set. */
export function leaseText(lease: LeaseAnalysis, ttlMs: number, floorMs: number): string {
  if (lease.renewals === 0) {
    return `${libraryName(lease)} lease: ${formatCount(lease.holds)} hold(s), no renewal seen yet: nothing to advise the lease from (it needs ${formatCount(MIN_RENEWALS)} renewals).`;
  }
  const period = lease.periodSource === 'known' ? `due at most ${formatMs(lease.periodMs)} apart (the holders' period)` : `about every ${formatMs(lease.periodMs)} (the median gap)`;
  const margin = lease.atRisk > 0 ? '' : `, the least margin ${formatMs(lease.minMarginMs)} of ${formatMs(ttlMs)}`;
  const loop = lease.loopDelayMaxMs !== null ? `; the event loop was blocked up to ${formatMs(lease.loopDelayMaxMs)}` : '';
  return (
    `${libraryName(lease)} lease: ${formatCount(lease.renewals)} renewal(s) of ${formatCount(lease.holds)} hold(s), ${period}: ` +
    `q99.9 lateness ${formatMs(lease.latenessMs.p999)}, the latest ${formatMs(lease.latenessMs.max)}${margin}${loop}. ` +
    `From lateness: ${leaseFormulaText(lease, floorMs)} — ${leaseSettingsText(lease)} ` +
    `(the hold cap is max(${formatMs(floorMs)}, 3 × p99 hold): a timeout, not the TTL).`
  );
}

/** What ran out, in the library's terms: BullMQ's lost locks are stalled jobs, which may run twice. */
export function ranOutText(lease: LeaseAnalysis, ranOut: number): string {
  if (ranOut === 0) return '';
  const what = lease.library === 'bullmq' ? 'job lock(s) ran out (taken as stalled: the job may run twice)' : 'lease(s) ran out';
  return `${formatCount(ranOut)} ${what}`;
}

function round2(n: number): string {
  return String(Math.round(n * 100) / 100);
}
