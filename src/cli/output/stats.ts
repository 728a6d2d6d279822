import type { DatabaseStats } from '../../store/stats.js';
import { learnedText } from '../../report/pattern-text.js';
import { printable } from '../../text.js';
import { formatCount, formatTime } from '../../units.js';

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
}

/** Why a file's dropped count says nothing: counters came with schema 2, and only recorders write them. */
function droppedNote(s: DatabaseStats): string {
  if (s.recorders.length > 0) return '';
  return s.schemaVersion < 2 ? ' (not recorded by this file’s version)' : ' (no recorder’s counters: no recorder wrote this file)';
}

/** Why a watcher lost sight of locks, in a word or three (the report says it at length). */
const GAP_REASONS: Readonly<Record<string, string>> = {
  'output-buffer-limit': 'at the pubsub output-buffer limit',
  'connection-lost': 'connection lost',
  'stopped-while-down': 'stopped while down',
  'open-limit': 'at --max-open',
};

/** `ttl-advisor stats` for people. */
export function renderStatsText(all: readonly DatabaseStats[]): string {
  return all
    .map((s) => {
      const lines = [
        `${printable(s.path)}`,
        `  schema version   ${s.schemaVersion}`,
        `  file size        ${formatBytes(s.bytes)}`,
        `  samples          ${formatCount(s.samples)} (${formatCount(s.rawRows)} raw rows, ${formatCount(s.rollupRows)} rollup rows)`,
        `  patterns         ${formatCount(s.patterns)}${s.recordedPatterns > s.patterns ? ` (${formatCount(s.recordedPatterns)} names recorded, read as these once their positions were learned)` : ''}`,
        `  instances        ${formatCount(s.instances)}`,
        `  time range       ${s.firstMs === undefined ? 'no samples yet' : `${formatTime(s.firstMs)} → ${formatTime(s.lastMs!)}`}`,
        `  dropped          ${formatCount(s.dropped)}${droppedNote(s)}`,
      ];
      if (s.gaps.count > 0) {
        const reasons = Object.entries(s.gaps.byReason).map(([reason, n]) => `${formatCount(n)} ${GAP_REASONS[reason] ?? reason}`);
        lines.push(`  gaps             ${formatCount(s.gaps.count)} (${reasons.join(', ')}): ${formatCount(s.gaps.locksNotRecorded)} lock(s) not recorded; the hours they touch count lower bounds`);
      }
      if (s.rawDropped > 0) lines.push(`  raw rows dropped ${formatCount(s.rawDropped)} (the rollups still count every lock)`);
      if (s.rawFullSinceMs !== undefined) {
        lines.push(`  raw rows stopped since ${formatTime(s.rawFullSinceMs)}: the file reached maxDatabaseBytes; rollups go on`);
      }
      if (s.learned.length > 0) {
        lines.push('  patterns learned from the keys (most names first)');
        for (const l of s.learned.slice(0, 10)) lines.push(`    ${printable(l.pattern)}: ${learnedText(l)}`);
        if (s.learned.length > 10) lines.push(`    … and ${s.learned.length - 10} more`);
      }
      if (s.recentHours.length > 0) {
        lines.push('  samples per hour (newest first)');
        for (const h of s.recentHours) lines.push(`    ${formatTime(h.hourStartMs)}  ${formatCount(h.samples).padStart(12)}`);
      }
      if (s.recorders.length > 0) {
        lines.push('  recorders (newest first)');
        for (const r of s.recorders.slice(0, 10)) {
          lines.push(
            `    ${printable(r.instance)}  updated ${formatTime(r.updatedMs)}  recorded ${formatCount(r.recorded)}  written ${formatCount(r.written)}  dropped ${formatCount(r.dropped)}` +
              `  raw rows ${formatCount(r.rawWritten)} (dropped ${formatCount(r.rawDropped)})`,
          );
        }
        if (s.recorders.length > 10) lines.push(`    … and ${s.recorders.length - 10} more`);
      }
      return lines.join('\n');
    })
    .join('\n\n') + '\n';
}

/** `ttl-advisor stats --format json`. */
export function renderStatsJson(all: readonly DatabaseStats[]): string {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return (
    JSON.stringify(
      {
        version: 1,
        databases: all.map((s) => ({
          ...s,
          firstAt: iso(s.firstMs),
          lastAt: iso(s.lastMs),
          firstMs: undefined,
          lastMs: undefined,
          recentHours: s.recentHours.map((h) => ({ hour: iso(h.hourStartMs), samples: h.samples })),
          rawFullSince: s.rawFullSinceMs === undefined ? null : iso(s.rawFullSinceMs),
          rawFullSinceMs: undefined,
          recorders: s.recorders.map((r) => ({
            ...r,
            updatedAt: iso(r.updatedMs),
            updatedMs: undefined,
            rawFullSince: r.rawFullMs === undefined ? null : iso(r.rawFullMs),
            rawFullMs: undefined,
          })),
        })),
      },
      null,
      2,
    ) + '\n'
  );
}
