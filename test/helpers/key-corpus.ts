import { random } from '../../fixtures/generate.js';

/**
 * Lock keys as real services build them, for the key-pattern miner's tests: ids of every shape
 * (e-mail addresses, user names, tenant slugs, SKUs, base64url session ids, ULIDs, SHA-1s,
 * ObjectIds, snowflakes, UUIDs, dates, hash tags), composite keys with two ids, and a few job
 * names that must stay apart. Each kind is one critical section with its own hold-time
 * distribution; a seeded generator makes every run the same.
 */

/** A small seeded generator: the demo's (mulberry32). */
export const seeded = random;

const FIRST = ['anna', 'bob', 'carla', 'dmitri', 'eve', 'farid', 'gina', 'hugo', 'ines', 'jamal', 'kenji', 'lena', 'marta', 'nils', 'olga', 'pavel', 'quinn', 'rosa', 'sven', 'tara', 'umar', 'vera', 'wei', 'ximena', 'yusuf', 'zoe'];
const LAST = ['smith', 'garcia', 'mueller', 'rossi', 'novak', 'kim', 'tanaka', 'silva', 'dubois', 'jensen', 'kowalski', 'nakamura', 'okafor', 'petrov', 'larsen', 'moreau'];
const DOMAINS = ['gmail.com', 'example.org', 'corp.example.co.uk', 'mail.fr', 'proton.me'];
const WORDS = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'wonka', 'tyrell', 'cyberdyne', 'soylent', 'vandelay', 'pied', 'piper', 'aperture', 'oscorp', 'massive', 'dynamic', 'blue', 'sun'];
const PRODUCTS = ['TSHIRT', 'HOODIE', 'CAP', 'SOCKS', 'JACKET', 'SCARF', 'BEANIE', 'POLO', 'JEANS', 'SHORTS', 'DRESS', 'SKIRT'];
const COLORS = ['RED', 'BLUE', 'GREEN', 'BLACK', 'WHITE', 'NAVY', 'GREY', 'OLIVE'];
const SIZES = ['XS', 'S', 'M', 'L', 'XL', 'XXL'];
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const HEX = '0123456789abcdef';

export interface KeyKind {
  /** What the kind of key is, for messages. */
  name: string;
  /** The pattern a learner that saw enough of its keys names it. */
  pattern: string;
  /** A key of this kind: a fresh id each call (a job name picks one of its few). */
  key(r: () => number): string;
  /** Median hold (ms): each kind's distribution differs, so a mixed pattern shows in its p99. */
  medianMs: number;
}

const pick = <T>(r: () => number, list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
const chars = (r: () => number, alphabet: string, n: number) => Array.from({ length: n }, () => pick(r, [...alphabet])).join('');
const digits = (r: () => number, n: number) => String(1 + Math.floor(r() * 9)) + chars(r, '0123456789', n - 1);

function username(r: () => number): string {
  const f = pick(r, FIRST);
  const l = pick(r, LAST);
  switch (Math.floor(r() * 4)) {
    case 0:
      return `${f}${l}`;
    case 1:
      return `${f}_${l}`;
    case 2:
      return `${f}.${l}${Math.floor(r() * 100)}`;
    default:
      return `${f[0]}${l}${Math.floor(r() * 1000)}`;
  }
}

const slug = (r: () => number) => `${pick(r, WORDS)}-${pick(r, WORDS)}${r() < 0.3 ? `-${pick(r, WORDS)}` : ''}`;

/** The critical sections: seventeen kinds of id, composites with two, and four jobs. */
export const KEY_KINDS: readonly KeyKind[] = [
  { name: 'e-mail', pattern: 'lock:user:{id}', key: (r) => `lock:user:${pick(r, FIRST)}.${pick(r, LAST)}${Math.floor(r() * 1000)}@${pick(r, DOMAINS)}`, medianMs: 40 },
  { name: 'user name', pattern: 'lock:account:{id}', key: (r) => `lock:account:${username(r)}`, medianMs: 25 },
  { name: 'tenant slug', pattern: 'tenant:{id}:invoice:lock:{id}', key: (r) => `tenant:${slug(r)}:invoice:lock:${digits(r, 5)}`, medianMs: 120 },
  { name: 'SKU', pattern: 'lock:sku:{id}', key: (r) => `lock:sku:${pick(r, PRODUCTS)}-${pick(r, COLORS)}-${pick(r, SIZES)}`, medianMs: 450 },
  { name: 'SKU with a number', pattern: 'inventory:lock:{id}', key: (r) => `inventory:lock:SKU-${digits(r, 5)}-${pick(r, COLORS)}`, medianMs: 70 },
  { name: 'base64url session', pattern: 'lock:session:{id}', key: (r) => `lock:session:${chars(r, B64, 22)}`, medianMs: 15 },
  { name: 'ULID', pattern: 'lock:order:{id}', key: (r) => `lock:order:01${chars(r, CROCKFORD, 24)}`, medianMs: 200 },
  { name: 'SHA-1', pattern: 'lock:file:{hex}', key: (r) => `lock:file:${chars(r, HEX, 40)}`, medianMs: 900 },
  { name: 'ObjectId', pattern: 'lock:doc:{hex}', key: (r) => `lock:doc:6${chars(r, HEX, 23)}`, medianMs: 60 },
  { name: 'snowflake', pattern: 'lock:message:{id}', key: (r) => `lock:message:${digits(r, 19)}`, medianMs: 10 },
  {
    name: 'UUID',
    pattern: 'lock:cart:{uuid}',
    key: (r) => `lock:cart:${chars(r, HEX, 8)}-${chars(r, HEX, 4)}-4${chars(r, HEX, 3)}-a${chars(r, HEX, 3)}-${chars(r, HEX, 12)}`,
    medianMs: 80,
  },
  {
    name: 'date',
    pattern: 'lock:report:{id}-{id}-{id}',
    key: (r) => `lock:report:20${digits(r, 2)}-${String(1 + Math.floor(r() * 12)).padStart(2, '0')}-${String(1 + Math.floor(r() * 28)).padStart(2, '0')}`,
    medianMs: 2000,
  },
  { name: 'tenant and user', pattern: 'lock:tenant:{id}:user:{id}', key: (r) => `lock:tenant:${slug(r)}:user:${username(r)}`, medianMs: 300 },
  { name: 'hash tag', pattern: 'lock:{{user{id}}}:profile', key: (r) => `lock:{user${digits(r, 6)}}:profile`, medianMs: 35 },
  { name: 'queue in a hash tag', pattern: 'bull:{{render}}:{id}:lock', key: (r) => `bull:{render}:${digits(r, 4)}:lock`, medianMs: 5000 },
  // Seen in public services: a wallet address after a prefix constant (EIP-55 mixed case or lower case), an id first.
  {
    name: 'wallet address',
    pattern: 'lock:address:{id}',
    key: (r) => {
      const hex = chars(r, HEX, 40);
      return `lock:address:0x${r() < 0.5 ? hex : [...hex].map((c) => (r() < 0.5 ? c.toUpperCase() : c)).join('')}`;
    },
    medianMs: 250,
  },
  { name: 'id first', pattern: '{id}:wallet:withdraw:lock', key: (r) => `${digits(r, 7)}:wallet:withdraw:lock`, medianMs: 180 },
  { name: 'job digest', pattern: 'cron:lock:daily-digest', key: () => 'cron:lock:daily-digest', medianMs: 3000 },
  { name: 'job report', pattern: 'cron:lock:weekly-report', key: () => 'cron:lock:weekly-report', medianMs: 8000 },
  { name: 'job cleanup', pattern: 'cron:lock:cleanup-sessions', key: () => 'cron:lock:cleanup-sessions', medianMs: 600 },
  { name: 'job sync', pattern: 'cron:lock:sync-inventory', key: () => 'cron:lock:sync-inventory', medianMs: 1500 },
];

/** One generated lock: its kind, key and hold. */
export interface CorpusLock {
  kind: number;
  key: string;
  holdMs: number;
}

/** A log-normal hold around `medianMs` (σ 0.6), rounded to whole µs. */
function holdOf(r: () => number, medianMs: number): number {
  const u = Math.max(r(), 1e-12);
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
  return Math.round(medianMs * Math.exp(0.6 * z) * 1000) / 1000;
}

/**
 * `count` locks, interleaved at random across the kinds (jobs rarer than the rest, as jobs run
 * every few minutes): each with a fresh id of its kind.
 */
export function corpus(count: number, seed = 44): CorpusLock[] {
  const r = seeded(seed);
  const weights = KEY_KINDS.map((k) => (k.name.startsWith('job') ? 0.25 : 1));
  const total = weights.reduce((a, b) => a + b, 0);
  return Array.from({ length: count }, () => {
    let x = r() * total;
    let kind = 0;
    while (kind < weights.length - 1 && x >= weights[kind]!) x -= weights[kind++]!;
    const k = KEY_KINDS[kind]!;
    return { kind, key: k.key(r), holdMs: holdOf(r, k.medianMs) };
  });
}

/** The nearest-rank percentile of `values` (not sorted in place). */
export function exactPercentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * The share of samples whose pattern holds exactly its lock's samples (grouping accuracy, as log
 * template mining measures it), from each pattern's count: a kind counts when the pattern it
 * should be learned as holds all of its samples and no other's.
 */
export function groupingAccuracy(locks: readonly CorpusLock[], countOf: (pattern: string) => number): { accuracy: number; wrong: string[] } {
  const perKind = new Map<number, number>();
  for (const l of locks) perKind.set(l.kind, (perKind.get(l.kind) ?? 0) + 1);
  let right = 0;
  const wrong: string[] = [];
  for (const [kind, n] of perKind) {
    const { pattern, name } = KEY_KINDS[kind]!;
    if (countOf(pattern) === n) right += n;
    else wrong.push(`${name}: ${pattern} holds ${countOf(pattern)} of ${n}`);
  }
  return { accuracy: right / locks.length, wrong };
}
