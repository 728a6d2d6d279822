import { ConfigError } from '../errors.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * Parses a point in time: an ISO 8601 date or date-time (`2026-11-30`,
 * `2026-11-30T08:00Z`), epoch milliseconds, `now`, or a duration before `now`
 * (`48h`, `90m`, `2d`, `1w`). Throws {@link ConfigError} naming the option otherwise.
 */
export function parseTime(value: string, option: string, now = Date.now()): number {
  const text = value.trim();
  if (text === 'now') return now;
  const relative = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(text);
  if (relative) return now - Number(relative[1]) * UNITS[relative[2]!.toLowerCase()]!;
  if (/^\d{11,}$/.test(text)) return Number(text);
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i.test(text)) {
    const ms = Date.parse(text);
    if (Number.isFinite(ms)) return ms;
  }
  throw new ConfigError(
    `Expected \`${option}\` to be an ISO date/time (2026-11-30T08:00Z), epoch ms, or a duration ago like 48h, 90m, 2d; got \`${value}\``,
  );
}
