import { describe, expect, it } from 'vitest';
import { formatMs, formatSpan, toMicros } from '../src/units.js';

describe('units', () => {
  it.each([
    [0.25, '250 µs'],
    [12.34, '12.3 ms'],
    [402.6, '403 ms'],
    [5402.6, '5.4 s'],
    [16_300, '16.3 s'],
    [300_000, '5 min'],
    // Rounding never reads as the next unit: 999.774 ms is not "1000 ms" (a second).
    [999.774, '999.8 ms'],
    [999.96, '999.9 ms'],
    [0.9996, '999.6 µs'],
    [59_999.7, '59.999 s'],
  ])('formatMs(%d) = %s', (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });

  it('formats spans in hours, or below an hour exactly in minutes and seconds', () => {
    expect(formatSpan(48 * 3_600_000)).toBe('48.0 h');
    expect(formatSpan(35 * 60_000)).toBe('35 min');
    // Rounded down, never up: just short of a day is not "24.0 h", and 40 s is neither "1 min" nor "0 min".
    expect(formatSpan(24 * 3_600_000 - 60_000)).toBe('23.9 h');
    expect(formatSpan(24 * 3_600_000)).toBe('24.0 h');
    expect(formatSpan(59 * 60_000 + 59_000)).toBe('59 min 59 s');
    expect(formatSpan(90_000)).toBe('1 min 30 s');
    expect(formatSpan(60_999)).toBe('1 min');
    expect(formatSpan(40_000)).toBe('40 s');
    expect(formatSpan(0)).toBe('0 s');
  });

  it('stores durations as whole microseconds, and anything else as 0', () => {
    expect(toMicros(12.3456)).toBe(12_346);
    expect(toMicros(-5)).toBe(0);
    expect(toMicros('x')).toBe(0);
    expect(toMicros(Number.NaN)).toBe(0);
  });
});
