import { describe, expect, it } from 'vitest';
import { learnNames, learnedPositions } from '../../src/keys/learned-names.js';
import { KeyPatternMiner } from '../../src/keys/miner.js';
import { compileTemplates } from '../../src/keys/pattern.js';
import { maskValue, segmentsOf, segmentsOfName } from '../../src/keys/segments.js';
import { KEY_KINDS, corpus, groupingAccuracy, seeded } from '../helpers/key-corpus.js';

/** Feeds keys to one miner; returns each key's pattern as read at the end (its renames followed, as a report reads them). */
function mine(keys: readonly string[], miner = new KeyPatternMiner()): string[] {
  const recorded = keys.map((key) => miner.patternOf(key));
  const { nameOf } = learnNames(new Set(recorded), miner.takeAliases().map((a) => [a.from, a.to, a.distinct] as const));
  return recorded.map((p) => nameOf.get(p)!);
}

function countsOf(patterns: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const p of patterns) counts.set(p, (counts.get(p) ?? 0) + 1);
  return counts;
}

describe('segments: positions and the placeholders a value’s shape gives', () => {
  it.each([
    ['anna.smith@gmail.com', '{id}'],
    ['12345', '{id}'],
    ['7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11', '{uuid}'],
    ['507f1f77bcf86cd799439011', '{hex}'],
    ['01ARZ3NDEKTSV4RRFFQ69G5FAV', '{id}'],
    ['Xq3_kP9-zR2mW8vB1nL4tY', '{id}'],
    ['product-123', 'product-{id}'],
    ['user42', 'user{id}'],
    ['daily-digest', 'daily-digest'],
    ['TSHIRT-RED-XL', 'TSHIRT-RED-XL'],
    ['processPaymentRetryQueue', 'processPaymentRetryQueue'],
    ['{render}', '{{render}}'],
    ['{user:123}', '{{user:{id}}}'],
  ])('%j → %j', (value, masked) => {
    expect(maskValue(value)).toBe(masked);
  });

  it('cuts at : / | #, at . only in a key without them, and never inside a hash tag', () => {
    expect(segmentsOf('lock:user:anna.smith@gmail.com').values).toEqual(['lock', 'user', '{id}']);
    expect(segmentsOf('lock.order.42').values).toEqual(['lock', 'order', '{id}']);
    expect(segmentsOf('lock:{user:1}:cart').values).toEqual(['lock', '{{user:{id}}}', 'cart']);
    expect(segmentsOf('a/b|c#d').seps).toEqual(['', '/', '|', '#']);
    // A pattern name is cut the same way, its hash tags and placeholders whole.
    expect(segmentsOfName('lock:{{user:{id}}}:cart').values).toEqual(['lock', '{{user:{id}}}', 'cart']);
    expect(segmentsOfName('bull:{{render}}:{id}:lock').values).toEqual(['bull', '{{render}}', '{id}', 'lock']);
  });

  it('bounds the positions of a hostile key', () => {
    const { values } = segmentsOf(Array.from({ length: 10_000 }, (_, i) => `s${i % 7}`).join(':'));
    expect(values).toHaveLength(24);
  });
});

describe('KeyPatternMiner: patterns learned from the keys', () => {
  it('a corpus of 19 critical sections (15 kinds of id, composites, 4 jobs): grouping accuracy 1, nothing under {other}', () => {
    const locks = corpus(58_000);
    const patterns = mine(locks.map((l) => l.key));
    const counts = countsOf(patterns);
    const { accuracy, wrong } = groupingAccuracy(locks, (p) => counts.get(p) ?? 0);
    expect(wrong).toEqual([]);
    expect(accuracy).toBe(1);
    expect(counts.has('{other}')).toBe(false);
    expect(counts.size).toBe(KEY_KINDS.length);
  });

  it('keeps a few job names apart however often they run, and learns names once they are many', () => {
    const miner = new KeyPatternMiner();
    const jobs = ['daily-digest', 'weekly-report', 'cleanup-sessions', 'sync-inventory', 'refresh-cache'];
    for (let i = 0; i < 10_000; i++) expect(miner.patternOf(`cron:lock:${jobs[i % 5]}`)).toBe(`cron:lock:${jobs[i % 5]}`);
    // 32 names stay literal (the default `literalValues`); the 33rd is learned, and the first 32 are renamed.
    const users = Array.from({ length: 33 }, (_, i) => `user-${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
    for (const u of users.slice(0, 32)) expect(miner.patternOf(`lock:account:${u}`)).toBe(`lock:account:${u}`);
    expect(miner.patternOf(`lock:account:${users[32]}`)).toBe('lock:account:{id}');
    const aliases = miner.takeAliases();
    expect(aliases.map((a) => a.from).sort()).toEqual(users.slice(0, 32).map((u) => `lock:account:${u}`).sort());
    expect(new Set(aliases.map((a) => a.to))).toEqual(new Set(['lock:account:{id}']));
    expect(aliases[0]!.distinct).toBe(33);
    expect(miner.learnedPositions('lock:account:{id}')).toEqual([{ position: 3, distinct: 33 }]);
    // The jobs are untouched.
    expect(miner.patternOf('cron:lock:daily-digest')).toBe('cron:lock:daily-digest');
  });

  it('learns a position of many values behind a few masked ones (SKU-10045-BLACK, SKU-20001-RED…), not one masked shape (product-123)', () => {
    const r = seeded(1);
    const colors = ['RED', 'BLUE', 'BLACK'];
    const skus = mine(Array.from({ length: 500 }, () => `lock:sku:SKU-${10_000 + Math.floor(r() * 90_000)}-${colors[Math.floor(r() * 3)]}`));
    expect(new Set(skus)).toEqual(new Set(['lock:sku:{id}']));
    const products = mine(Array.from({ length: 500 }, (_, i) => `order:lock:product-${i}`));
    expect(new Set(products)).toEqual(new Set(['order:lock:product-{id}']));
  });

  it('keeps a Redis Cluster hash tag’s braces apart from a placeholder', () => {
    expect(mine(['bull:{render}:42:lock', 'bull:{render}:43:lock'])).toEqual(['bull:{{render}}:{id}:lock', 'bull:{{render}}:{id}:lock']);
    // At the first position, where namespaces stand, past 256 values (eight times the limit elsewhere).
    const tagged = mine(Array.from({ length: 300 }, (_, i) => `{tenant-${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}}:lock`));
    expect(new Set(tagged)).toEqual(new Set(['{{{id}}}:lock']));
    // A template says the same: `{{` and `}}` are literal braces.
    const [template] = compileTemplates(['bull:{{render}}:{job}:lock']);
    expect(template!.matches('bull:{render}:42:lock')).toBe(true);
    expect(template!.matches('bull:render:42:lock')).toBe(false);
  });

  it('learns the same patterns whatever the order: one family’s ids first, interleaved, or in one burst', () => {
    const locks = corpus(20_000, 7);
    const byKind = [...locks].sort((a, b) => a.kind - b.kind);
    const reversed = [...locks].reverse();
    const expected = mine(locks.map((l) => l.key));
    const asRead = (order: typeof locks) => {
      const read = mine(order.map((l) => l.key));
      return new Map(order.map((l, i) => [l.key, read[i]!]));
    };
    for (const order of [byKind, reversed]) {
      const read = asRead(order);
      locks.forEach((l, i) => expect(read.get(l.key), l.key).toBe(expected[i]));
    }
  });

  it('stays bounded with a million distinct ids of one family first (memory: tree nodes and patterns remembered)', () => {
    const miner = new KeyPatternMiner();
    const r = seeded(3);
    const words = ['acme', 'globex', 'initech', 'hooli', 'stark', 'wayne', 'wonka', 'tyrell'];
    for (let i = 0; i < 1_000_000; i++) miner.patternOf(`tenant:${words[i % 8]}-${words[Math.floor(r() * 8)]}-${i.toString(36)}:invoice:lock:${i}`);
    expect(miner.size).toBeLessThan(50);
    const locks = corpus(10_000);
    const patterns = mine(
      locks.map((l) => l.key),
      miner,
    );
    const counts = countsOf(patterns);
    expect(groupingAccuracy(locks, (p) => counts.get(p) ?? 0).accuracy).toBe(1);
  });

  it('a full tree files new keys under {other}, never grows past its bound', () => {
    const miner = new KeyPatternMiner({ maxNodes: 100 });
    const patterns = new Set<string>();
    // Keys of many depths and separators: positions the tree cannot merge.
    for (let d = 1; d < 24; d++) for (const sep of [':', '/', '|', '#']) patterns.add(miner.patternOf(`k${sep}${`x${sep}`.repeat(d)}1`));
    expect(miner.size).toBeLessThanOrEqual(100);
    expect(patterns.has('{other}')).toBe(true);
  });
});

describe('KeyPatternMiner: what a review found', () => {
  it('a shape once established stays, whatever comes after (a literal it made an id stays one)', () => {
    const r = seeded(8);
    const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const token = () => Array.from({ length: 22 }, () => B64[Math.floor(r() * 64)]).join('');
    const miner = new KeyPatternMiner();
    for (let i = 0; i < 8; i++) miner.patternOf(`sess:${token().replace(/^./, 'Q7')}`.slice(0, 27));
    expect(miner.patternOf('sess:abcdefghijklmnopqrstuv')).toBe('sess:{id}');
    miner.patternOf('sess:12345'); // an id of another length
    expect(miner.patternOf('sess:abcdefghijklmnopqrstuv')).toBe('sess:{id}');
    expect(miner.patternOf('sess:zyxwvutsrqponmlkjihgfe')).toBe('sess:{id}');
  });

  it('many values behind a few masked shapes are learned whatever their order (one shape first, then others)', () => {
    const keys = ['BLACK', 'RED', 'BLUE'].flatMap((color) => Array.from({ length: 40 }, (_, i) => `lock:sku:SKU-${10_000 + i * 7}-${color}`));
    expect(new Set(mine(keys))).toEqual(new Set(['lock:sku:{id}']));
  });

  it('a value masked in part that its position’s id shape takes is renamed too (its samples read as the ids’)', () => {
    const r = seeded(9);
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789_ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    const token = () => Array.from({ length: 22 }, (_, i) => (i % 5 === 0 ? '_' : i % 3 === 0 ? String(i % 10) : alphabet[Math.floor(r() * 26) + (i % 2 ? 37 : 0)])).join('');
    // 22 characters, not random-looking: masked in part, `checkout_{id}_campaign`, before the ids' shape is known.
    const keys = ['sess:checkout_2024_campaign', ...Array.from({ length: 12 }, () => `sess:${token()}`)];
    expect(new Set(mine(keys))).toEqual(new Set(['sess:{id}']));
  });

  it('never grows past maxNodes, also with a new separator after a learned position', () => {
    const miner = new KeyPatternMiner({ maxNodes: 4, literalValues: 2 });
    for (const sep of [':', '/', '#', '|']) for (const v of ['x', 'y', 'z', 'w']) miner.patternOf(`a${sep}${v}`);
    expect(miner.size).toBeLessThanOrEqual(4);
  });

  it('remembers every pattern it handed out for renaming: none is forgotten before the tree is full', () => {
    const miner = new KeyPatternMiner();
    const provisional = Array.from({ length: 32 }, (_, i) => miner.patternOf(`lock:user:someone${String.fromCharCode(97 + (i % 26), 97 + Math.floor(i / 26))}`));
    // 12,500 more patterns (250 services × 25 names × 2), all kept apart, before the family's 33rd name.
    const word = (n: number) => n.toString(26).replace(/./g, (c) => String.fromCharCode(97 + parseInt(c, 26)));
    for (let a = 0; a < 250; a++) for (let b = 0; b < 25; b++) for (const c of ['x', 'y']) miner.patternOf(`svc${word(a)}:job${word(b)}:${c}`);
    expect(miner.takeAliases()).toEqual([]);
    miner.patternOf('lock:user:lastone');
    expect(miner.takeAliases().map((a) => a.from).sort()).toEqual(provisional.sort());
  });
});

describe('learnNames: the names several learners recorded, read as one learner would', () => {
  it('follows renames, and learns from one file what another file learned', () => {
    // File a learned lock:user:{id} from 33 names; file b saw five names only.
    const aliases = Array.from({ length: 32 }, (_, i) => [`lock:user:u${String.fromCharCode(97 + (i % 26))}x${i}`, 'lock:user:{id}', 33] as const);
    const names = ['lock:user:{id}', ...aliases.map((a) => a[0]), 'lock:user:anna', 'lock:user:bob', 'cron:lock:digest', 'cron:lock:report', '{other}'];
    const { nameOf, learned } = learnNames(names, aliases);
    expect(nameOf.get('lock:user:anna')).toBe('lock:user:{id}');
    expect(nameOf.get('cron:lock:digest')).toBe('cron:lock:digest');
    expect(nameOf.get('{other}')).toBe('{other}');
    expect(learned.get('lock:user:{id}')).toEqual({ names: 35, positions: [{ position: 3, distinct: 33 }] });
  });

  it('never learns a position from counting names: what the learners kept apart stays apart', () => {
    // Fifty services' patterns (a team's explicit ones, say), and a lock's numeric ids beside a literal name.
    const names = [...Array.from({ length: 50 }, (_, i) => `svc${i}:lock:entity:{id}`), 'job:lock:{id}', 'job:lock:global', 'job:lock:{uuid}'];
    const { nameOf } = learnNames(names, []);
    for (const name of names) expect(nameOf.get(name)).toBe(name);
    // Where a learner renamed one of them, its position is learned for all.
    const renamed = learnNames(names, [['svc1:lock:entity:{id}', '{id}:lock:entity:{id}', 400]]).nameOf;
    expect(new Set(names.slice(0, 50).map((n) => renamed.get(n)))).toEqual(new Set(['{id}:lock:entity:{id}']));
  });

  it('names the positions a rename learned', () => {
    expect(learnedPositions('lock:tenant:acme:user:bob', 'lock:tenant:{id}:user:{id}')).toEqual([3, 5]);
    expect(learnedPositions('cron:lock:a', 'cron:lock:a')).toEqual([]);
  });
});
