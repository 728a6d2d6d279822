import type { HoldReason } from '../analyze/decision.js';
import type { UnconfirmedPattern } from '../analyze/hints.js';
import type { CodeCheckResult, CodeEdit } from '../code/decide.js';
import type { PolicyChange, SkippedChange } from '../policy/apply.js';
import { printable } from '../text.js';
import { formatMs } from '../units.js';
import { leftAloneText, siteName } from './code.js';
import { holdReasonText } from './decision-text.js';

/**
 * What `apply` and `apply --code` print besides the diff: each change, then
 * every recommendation left out and why, so that "no changes" never reads as
 * "the data agrees". The CLI only writes these.
 */

/** A TTL and where the data would move it: "(3 s → 5 s)"; too little data makes no recommendation, so no number is shown for it. */
function move(from: string, toMs: number | undefined): string {
  return `(${from}${toMs === undefined ? '' : ` → ${formatMs(toMs)}`})`;
}

/** A move `apply` leaves for a human, and why. */
function skippedLine(name: string, why: HoldReason): string {
  return `skipped ${name}: ${holdReasonText(why, printable)}`;
}

const joinLines = (lines: readonly string[]) => lines.map((l) => `${l}\n`).join('');

/** `apply`'s lines: the changes written to the policy file, then the recommendations left out; or that there is no change, and why. */
export function renderApplyLines(
  policyPath: string,
  applied: { changes: readonly PolicyChange[]; skipped: readonly SkippedChange[] },
  unconfirmed: readonly UnconfirmedPattern[],
): string {
  const skips = [
    ...applied.skipped.map((s) => skippedLine(`${printable(s.pattern)} ${move(s.fromMs === undefined ? 'not in the file' : formatMs(s.fromMs), s.noRecommendation ? undefined : s.toMs)}`, s.why)),
    // Patterns watch saw only expire have no hold times: nothing to write, and said so.
    ...unconfirmed.map((u) => `skipped ${printable(u.pattern)}: expired, never released — no hold times to advise from (see the report)`),
  ];
  if (applied.changes.length === 0) {
    return skips.length === 0 ? `${policyPath}: no changes; every TTL matches the data.\n` : joinLines([`${policyPath}: no changes; ${skips.length} recommendation(s) left out:`, ...skips]);
  }
  const changed = applied.changes.map((c) => `${c.fromMs === undefined ? 'added' : 'changed'} ${c.pattern}: ${c.fromMs === undefined ? '' : `${formatMs(c.fromMs)} → `}${formatMs(c.toMs)}`);
  return joinLines([...changed, ...skips]);
}

/** `apply --code`'s lines: each edit, then every site left alone with its reason; or that there is no change. */
export function renderCodeApplyLines(result: CodeCheckResult, edits: readonly CodeEdit[]): string {
  const out: string[] = [];
  for (const e of edits) {
    const row = result.rows.find((r) => r.edits.includes(e));
    const pattern = row?.pattern === undefined ? '' : ` (${printable(row.pattern)})`;
    const from = e.value.libraryDefault ? `library default ${formatMs(e.fromMs)}` : formatMs(e.fromMs);
    // The literal is the default of an environment variable: where the variable is set, it wins.
    const env = e.value.env === undefined ? '' : ` (the default of ${e.value.env}: a deployed ${e.value.env} overrides it)`;
    out.push(`${e.value.libraryDefault ? 'added' : 'changed'} ${e.value.declaration.file}:${e.value.declaration.line} ${e.value.option}${pattern}: ${from} → ${formatMs(e.toMs)}${env}`);
  }
  for (const row of result.rows) {
    if (row.edits.length > 0) continue;
    const d = row.decision;
    const toMs = d && d.apply.kind !== 'keep' && !d.insufficient ? d.apply.toMs : undefined;
    const ttl = row.site.ttl?.valueMs === undefined ? '' : ` ${move(formatMs(row.site.ttl.valueMs), toMs)}`;
    const name = `${siteName(row)} ${row.site.call}${row.pattern === undefined ? '' : ` ${printable(row.pattern)}`}${ttl}`;
    if (row.leftAlone?.kind === 'wrapper-inner') continue; // its callers are the sites, each listed
    if (row.leftAlone) out.push(`left alone ${name}: ${leftAloneText(row.leftAlone)}`);
    else if (row.noData) out.push(`left alone ${name}: no data for this pattern in the window`);
    else if (d?.apply.kind === 'hold') out.push(skippedLine(name, d.apply.why));
  }
  for (const u of result.unmatched) if (u.decision.level !== 'info') out.push(`not found ${printable(u.pattern)}: in the samples, no call site in the code; nothing to edit`);
  for (const f of result.skipped) out.push(`skipped ${f.file}: ${f.reason}`);
  return (edits.length === 0 ? 'no changes in the code; every TTL ttl-advisor may edit matches the data.\n' : '') + joinLines(out);
}
