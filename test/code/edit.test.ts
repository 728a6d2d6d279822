import { describe, expect, it } from 'vitest';
import { literalText, literalValue, planLiteralEdits, type EditFs } from '../../src/code/edit.js';

describe('literalText: a TTL literal rewritten in its own style', () => {
  it('keeps plain numbers plain and numeric separators where the original used them', () => {
    expect(literalText('5000', 16_100)).toBe('16100');
    expect(literalText('5_000', 16_100)).toBe('16_100');
    expect(literalText('5_000', 3000)).toBe('3_000');
    expect(literalText('240_000', 2400)).toBe('2_400');
    expect(literalText('300_000', 1_234_567)).toBe('1_234_567');
  });

  it('keeps the unit of a product: the leading factors change, the rest stays', () => {
    // 16.1 * 1000 is 16100.000000000002 in JavaScript, which Redis refuses as a PX: a product only where it is whole.
    expect(literalText('5 * 1000', 16_100)).toBe('16100');
    expect(literalText('5 * 1000', 16_200)).toBe('16.2 * 1000');
    expect(literalText('5*1000', 3000)).toBe('3*1000');
    expect(literalText('2 * 60 * 1000', 1_800_000)).toBe('30 * 60 * 1000');
    // 0.05 minutes would be no way to write 3 s: the minutes give way.
    expect(literalText('5 * 60 * 1000', 3000)).toBe('3 * 1000');
    // The counting factor changes in place, rounded up to one decimal (never under what was asked).
    expect(literalText('5 * 1000', 3050)).toBe('3.1 * 1000');
    expect(literalText('1000 * 60 * 15', 3_051_000)).toBe('1000 * 60 * 50.9');
    expect(literalValue('1000 * 60 * 50.9')).toBe(3_054_000);
    // A count under one unit: the leading factors give way, as for `5 * 60 * 1000` above.
    expect(literalText('2 * 60 * 1000', 500)).toBe('500');
    expect(literalText('5_0 * 1_000', 16_200)).toBe('16.2 * 1_000');
    expect(literalText('5_0 * 1_000', 16_100)).toBe('16_100');
  });

  it('writes other forms as milliseconds', () => {
    expect(literalText('5e3', 16_100)).toBe('16100');
    expect(literalText('4000 + 1000', 3000)).toBe('3000');
  });
});

describe('planLiteralEdits', () => {
  const text = 'const a = 5_000; // five seconds\nconst b = 5 * 1000;\n';
  const at = (literal: string) => ({ path: '/repo/x.ts', start: text.indexOf(literal), end: text.indexOf(literal) + literal.length, text: literal });
  const fsWith = (bytes: Buffer): EditFs => ({ read: () => bytes, realpath: (p) => p, writable: () => true });

  it('changes only the literals’ characters, from the end so the offsets hold', () => {
    const [out] = planLiteralEdits(
      [
        { literal: at('5_000'), text: '16_100' },
        { literal: at('5 * 1000'), text: '3 * 1000' },
      ],
      '/repo',
      fsWith(Buffer.from(text)),
    );
    expect(out).toEqual({ target: '/repo/x.ts', name: 'x.ts', before: text, after: 'const a = 16_100; // five seconds\nconst b = 3 * 1000;\n' });
  });

  it('refuses a file that no longer reads as scanned', () => {
    expect(() => planLiteralEdits([{ literal: at('5_000'), text: '16_100' }], '/repo', fsWith(Buffer.from(text.replace('5_000', '6_000'))))).toThrow(/changed while it was read/);
  });
});
