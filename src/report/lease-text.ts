import type { LeaseAnalysis } from '../analyze/lease.js';
import { HOLD_CAP_MULTIPLIER, LEASE_SAFETY, MIN_RENEWALS, THRESHOLD_DURATION_FACTOR } from '../analyze/lease.js';
import { LEASE_LIBRARY_FACTS } from '../sample/libraries.js';
import type { LeaseLibrary } from '../sample/sample.js';
import { formatCount, formatMs } from '../units.js';

/**
 * A lease's advice in the words of the library whose locks they are (see
 * `analyze/lease.ts` for the numbers): what to set, where it is set.
 */

export function libraryName(lease: LeaseAnalysis): string {
  return LEASE_LIBRARY_FACTS[lease.library].name;
}

/** The settings to write, in the library's own terms: "`lockDuration: 3000`". */
export function leaseSettingsText(lease: LeaseAnalysis): string {
  return SETTINGS[lease.library](lease.recommended);
}

type Recommended = LeaseAnalysis['recommended'];
const optionsOf = (library: LeaseLibrary) => LEASE_LIBRARY_FACTS[library].options!;
const bull = optionsOf('bullmq');
const redlock = optionsOf('redlock');
const semaphore = optionsOf('redis-semaphore');
const ours = optionsOf('ttl-advisor');

/** Per library, where its lease is set and what caps the work (the compiler wants a row for every library). */
const SETTINGS: Readonly<Record<LeaseLibrary, (r: Recommended) => string>> = {
  bullmq: ({ leaseMs, maxHoldMs }) =>
    `Worker option \`${bull.ttl}: ${leaseMs}\` (renewed \`${bull.ttl} / ${LEASE_LIBRARY_FACTS.bullmq.defaultPeriodDivisor}\` apart at the latest); a crashed worker's job is taken up again within \`${bull.ttl}\` + \`stalledInterval\`, so keep \`stalledInterval\` near it; a job timeout of ${formatMs(maxHoldMs)}`,
  redlock: ({ leaseMs, renewEveryMs, thresholdMs, maxHoldMs }) =>
    `\`redlock.using(keys, ${leaseMs}, { ${redlock.threshold}: ${thresholdMs ?? leaseMs - renewEveryMs} }, …)\`; abort the routine after ${formatMs(maxHoldMs)}`,
  'redis-semaphore': ({ leaseMs, renewEveryMs, maxHoldMs }) => `\`{ ${semaphore.ttl}: ${leaseMs}, ${semaphore.renewEvery}: ${renewEveryMs} }\`; stop the work after ${formatMs(maxHoldMs)}`,
  redisson: ({ leaseMs, maxHoldMs }) =>
    `\`Config.setLockWatchdogTimeout(${leaseMs})\` (renewed every third of it); \`lock.lock(leaseTime)\` is not a lease — keep the watchdog; cap the work at ${formatMs(maxHoldMs)}`,
  'ttl-advisor': ({ leaseMs, renewEveryMs, maxHoldMs }) => `\`{ ${ours.ttl}: ${leaseMs}, ${ours.renewEvery}: ${renewEveryMs}, maxHoldMs: ${maxHoldMs} }\``,
  unknown: genericSettings,
  'redis-py': genericSettings,
};

function genericSettings({ leaseMs, renewEveryMs, thresholdMs, maxHoldMs }: Recommended): string {
  return `a lease of ${formatMs(leaseMs)}, renewed every ${formatMs(renewEveryMs)}${thresholdMs !== undefined ? ` (when less than ${formatMs(thresholdMs)} is left)` : ''}; cap holds at ${formatMs(maxHoldMs)}`;
}

/** How the recommendation comes from the lateness: the formula with its numbers. */
export function leaseFormulaText(lease: LeaseAnalysis, floorMs: number): string {
  const q = formatMs(lease.latenessMs.p999);
  if (lease.mode === 'threshold') {
    const rtt = lease.roundTripMs ? ` + p99 round trip ${formatMs(lease.roundTripMs.p99)}` : '';
    return `threshold ≥ ${LEASE_SAFETY} × q99.9 lateness ${q}${rtt} → ${formatMs(lease.recommended.thresholdMs ?? 0)}; duration max(${formatMs(floorMs)}, ${THRESHOLD_DURATION_FACTOR} × threshold) = ${formatMs(lease.recommended.leaseMs)}`;
  }
  return `lease = max(${formatMs(floorMs)}, ${LEASE_SAFETY} × q99.9 lateness ${q} / (1 − ${round2(lease.alpha)})) = ${formatMs(lease.recommended.leaseMs)}`;
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
    `(the hold cap is max(${formatMs(floorMs)}, ${HOLD_CAP_MULTIPLIER} × p99 hold): a timeout, not the TTL).`
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
