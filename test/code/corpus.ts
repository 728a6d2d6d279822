import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CodeScan } from '../../src/code/scan.js';

/**
 * The corpus of issue 46 (test/fixtures/services/): each fixture service's hand-made ground truth, and how
 * a scan of it scores against it — found (every site at its line, wrapper calls included), mapped (the key
 * pattern a reader gives it), the TTL read (where the repository writes one, or the library's default).
 */

export const SERVICES = fileURLToPath(new URL('../fixtures/services/', import.meta.url));

export interface TruthSite {
  at: string;
  call: string;
  kind: 'library' | 'wrapper-call' | 'wrapper-inner';
  pattern: string | null;
  patternValues?: string[];
  ttlMs: number | null;
  libraryDefaultMs?: number;
  ttlDeclaredAt: string | null;
  ttlFrom: 'literal' | 'const' | 'env-default' | 'library-default' | 'computed';
  env?: string;
  note?: string;
}

export interface Truth {
  realService: { repo: string; commit: string };
  sites: TruthSite[];
}

export function fixtureNames(): string[] {
  return readdirSync(SERVICES).filter((n) => existsSync(join(SERVICES, n, 'ground-truth.json'))).sort();
}

export function truthOf(name: string): Truth {
  return JSON.parse(readFileSync(join(SERVICES, name, 'ground-truth.json'), 'utf8')) as Truth;
}

/** `{uuid}` and `{hex}` are ids too: a reader of the code writes `{id}` where the data may say either. */
export function samePattern(a: string, b: string): boolean {
  const norm = (p: string) => p.replace(/\{(uuid|hex)\}/g, '{id}');
  return norm(a) === norm(b);
}

export interface Score {
  sites: number;
  found: number;
  mappable: number;
  mapped: number;
  ttlWritten: number;
  ttlRead: number;
  misses: string[];
}

/** How a scan of one fixture scores against its ground truth; every miss with what was expected and what was seen. */
export function score(name: string, scan: CodeScan): Score {
  const truth = truthOf(name);
  const s: Score = { sites: truth.sites.length, found: 0, mappable: 0, mapped: 0, ttlWritten: 0, ttlRead: 0, misses: [] };
  for (const t of truth.sites) {
    const seen = scan.sites.filter((site) => `${site.at.file}:${site.at.line}` === t.at);
    if (seen.length === 0) {
      s.misses.push(`${name} ${t.at} not found (${t.call})`);
      continue;
    }
    s.found++;
    if (t.pattern !== null) {
      s.mappable++;
      const wanted = [t.pattern, ...(t.patternValues ?? [])];
      if (seen.some((site) => site.patterns.some((p) => wanted.some((w) => samePattern(p, w))))) s.mapped++;
      else s.misses.push(`${name} ${t.at} pattern ${seen.map((x) => (x.patterns.length > 0 ? x.patterns.join(' or ') : `not mapped (${x.keyText})`)).join(' | ')}, expected ${t.pattern}`);
    }
    const ttl = t.ttlMs ?? t.libraryDefaultMs ?? null;
    if (ttl !== null && t.ttlFrom !== 'computed') {
      s.ttlWritten++;
      if (seen.some((site) => site.ttl?.valueMs === ttl)) s.ttlRead++;
      else s.misses.push(`${name} ${t.at} TTL ${seen.map((x) => x.ttl?.valueMs ?? "none").join(' | ')}, expected ${ttl} (${t.ttlFrom})`);
    }
  }
  return s;
}
