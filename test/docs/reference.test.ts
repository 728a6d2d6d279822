import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import * as pkg from '../../src/index.js';
import { INSTRUMENTS, SERIES_NAMES, type InstrumentKey } from '../../src/metrics/instruments.js';
import { docFiles, readPage, where } from './markdown.js';

/** The reference pages against the code they describe: command synopses and option defaults. */

const pages = docFiles().map(readPage);
const blocks = pages.flatMap((page) => page.blocks);

describe('docs reference', () => {
  it("every synopsis (<!-- example: usage -->) names only the options its command has", () => {
    const program = buildProgram();
    const problems: string[] = [];
    for (const block of blocks.filter((b) => b.marker?.kind === 'usage')) {
      const name = /ttl-advisor\s+([a-z]+)/.exec(block.text)?.[1];
      const command = program.commands.find((c) => c.name() === name);
      if (!command) {
        problems.push(`${where(block)}: no command \`${name}\``);
        continue;
      }
      const known = new Set(command.options.map((o) => o.long));
      for (const flag of block.text.match(/--[a-z][a-z-]*/g) ?? []) {
        if (!known.has(flag)) problems.push(`${where(block)}: \`ttl-advisor ${name}\` has no option ${flag}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('docs reference: option tables', () => {
  it('every default a table marked <!-- defaults: NAME --> states is the value of that exported constant', () => {
    const constants = pkg as unknown as Record<string, unknown>;
    const problems: string[] = [];
    for (const page of pages) {
      page.lines.forEach((line, i) => {
        const name = /^<!--\s*defaults:\s*(\w+)\s*-->$/.exec(line.trim())?.[1];
        if (!name) return;
        const constant = constants[name];
        if (constant === undefined) return void problems.push(`${page.file}:${i + 1}: the package exports no ${name}`);
        let compared = 0;
        for (let k = i + 3; k < page.lines.length && page.lines[k]!.startsWith('|'); k++) {
          const [options = '', defaults = ''] = page.lines[k]!.split(' | ').map((cell) => cell.replace(/^\|\s*/, ''));
          const names = [...options.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
          const values = [...defaults.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
          if (names.length !== values.length) continue;
          names.forEach((option, n) => {
            const actual = option.split('.').reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], constant);
            if (actual === undefined) return;
            compared++;
            const literal = values[n]!;
            const stated: unknown = /^-?[\d.]+$|^true$|^false$|^\[.*\]$/.test(literal) ? JSON.parse(literal) : literal;
            if (JSON.stringify(stated) !== JSON.stringify(actual)) problems.push(`${page.file}:${k + 1}: \`${option}\` defaults to ${JSON.stringify(actual)}, not ${literal}`);
          });
        }
        if (compared === 0) problems.push(`${page.file}:${i + 1}: no row of the table below names a field of ${name}`);
      });
    }
    expect(problems).toEqual([]);
  });
});


describe('docs reference: metric names', () => {
  const keys = Object.keys(INSTRUMENTS) as InstrumentKey[];
  /** The Prometheus series of an instrument as a dashboard names them: a histogram's through `_bucket`. */
  const seriesOf = (key: InstrumentKey) => {
    const { sdk, collector } = SERIES_NAMES[key];
    const bucket = INSTRUMENTS[key].kind === 'histogram' ? '_bucket' : '';
    return [...new Set([`${sdk}${bucket}`, `${collector}${bucket}`])];
  };

  it("docs/metrics.md's contract table has one row per instrument: its name, kind, unit and both Prometheus spellings", () => {
    const page = pages.find((p) => p.file === 'docs/metrics.md')!;
    const header = page.lines.findIndex((line) => line.startsWith('| instrument |'));
    expect(header, 'the contract table').toBeGreaterThan(0);
    const rows: string[][] = [];
    for (let i = header + 2; page.lines[i]?.startsWith('|'); i++) rows.push(page.lines[i]!.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, '')));
    const documented = rows.map(([name = '', kindUnit = '', , prometheus = '']) => ({
      name: name.replace(/`/g, ''),
      kindUnit: kindUnit.replace(/`/g, ''),
      series: [...prometheus.matchAll(/`([^`]+)`/g)].map((m) => m[1]!),
    }));
    expect(documented.map((row) => row.name)).toEqual(keys.map((key) => INSTRUMENTS[key].name));
    keys.forEach((key, i) => {
      const { kind, unit } = INSTRUMENTS[key];
      expect(documented[i]!.kindUnit.startsWith(`${kind}, ${unit}`), `${key}: ${documented[i]!.kindUnit}`).toBe(true);
      expect(documented[i]!.series, key).toEqual(seriesOf(key));
    });
  });

  it('every metric name README.md and docs/ write is one of the contract (control: a misspelt one is caught)', () => {
    const known = new Set(keys.flatMap((key) => {
      const { sdk, collector } = SERIES_NAMES[key];
      const parts = INSTRUMENTS[key].kind === 'histogram' ? ['', '_bucket', '_count', '_sum'] : [''];
      return [INSTRUMENTS[key].name, ...[sdk, collector].flatMap((name) => parts.map((part) => `${name}${part}`))];
    }));
    const unknownIn = (text: string) => [...text.matchAll(/ttl_advisor[._][a-z0-9_.]*[a-z0-9_]/g)].map((m) => m[0]).filter((name) => !known.has(name));
    expect(unknownIn('rate(ttl_advisor_lock_hold_duration_bukcet[1h]) and ttl_advisor.lock.hold.duration.')).toEqual(['ttl_advisor_lock_hold_duration_bukcet']);
    const problems = pages.flatMap((page) => page.lines.flatMap((line, i) => unknownIn(line).map((name) => `${page.file}:${i + 1}: ${name}`)));
    expect(problems).toEqual([]);
  });
});
