import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { LATE_BULLMQ, recordLeases } from '../helpers/lease-data.js';
import { tempDir } from '../helpers/temp.js';

/**
 * A lease in code: a BullMQ worker whose renewals come late. `check --code` fails on `lockDuration`;
 * `apply --code` raises it as the lease decision says and keeps `lockRenewTime` at its share; then
 * `check --code` passes. The control: the same worker with a lease long enough passes at once.
 */

const dir = realpathSync(tempDir('ttl-advisor-code-lease-'));
const NOW = Date.UTC(2026, 11, 2);
let bull = '';

beforeAll(async () => {
  bull = await recordLeases(dir, 'bull', LATE_BULLMQ);
});

function service(name: string, lockDuration: string, lockRenewTime: string): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(
    join(root, 'src/worker.ts'),
    [
      "import { Worker } from 'bullmq';",
      '',
      "// Thumbnails: one job's lock is `bull:thumbs:<id>:lock`.",
      `export const thumbs = new Worker('thumbs', async () => undefined, { lockDuration: ${lockDuration}, lockRenewTime: ${lockRenewTime} });`,
      '',
    ].join('\n'),
  );
  execFileSync('git', ['init', '-q'], { cwd: root });
  return root;
}

describe('leases in code', () => {
  it('late BullMQ renewals: check --code fails on lockDuration, apply --code raises it keeping lockRenewTime at half, check --code passes', async () => {
    const root = service('late', '1_000', '500');
    const args = ['--code', join(root, 'src'), '--policy', join(dir, 'none.json'), '--db', bull];
    const before = await runCli(['check', ...args, '--format', 'github'], NOW);
    expect(before.code).toBe(1);
    expect(before.stdout).toMatch(/^::error file=src\/worker\.ts,line=4,title=bull%3Athumbs%3A\{id\}%3Alock%3A lease at risk::new Worker at src\/worker\.ts:4: /m);

    const applied = await runCli(['apply', ...args], NOW);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/^changed src\/worker\.ts:4 lockDuration \(bull:thumbs:\{id\}:lock\): 1 s → 3 s$/m);
    expect(applied.stdout).toMatch(/^changed src\/worker\.ts:4 lockRenewTime \(bull:thumbs:\{id\}:lock\): 500 ms → 1\.5 s$/m);
    expect(readFileSync(join(root, 'src/worker.ts'), 'utf8')).toContain("{ lockDuration: 3_000, lockRenewTime: 1500 }");

    const after = await runCli(['check', ...args], NOW);
    expect(after.code).toBe(0);
    expect((await runCli(['apply', ...args], NOW)).stdout).toMatch(/^no changes in the code/);
  });

  it('control: a lease that covers the lateness passes as it is', async () => {
    const root = service('fine', '3000', '1500');
    const check = await runCli(['check', '--code', join(root, 'src'), '--policy', join(dir, 'none.json'), '--db', bull], NOW);
    expect(check.code).toBe(0);
  });
});
