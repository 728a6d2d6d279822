import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

// Never a browser downloaded at test time: CHROMIUM_PATH when set (Debian's
// /usr/bin/chromium, say), else the Chromium that ships inside the npm package
// @sparticuz/chromium (a devDependency: `npm ci` brings it from the registry).
// Its binary is unpacked to the temp folder on first use (once for all test processes, see `unpacked`). It needs a few
// system libraries (NSS, NSPR, expat); where they are missing, the package's
// own copies (Amazon Linux 2023 builds) are unpacked and used for the browser alone.

// As the probe starts Chromium here: no background traffic, which this machine's closed network refuses anyway.
const QUIET = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

export async function launchChromium(): Promise<Browser> {
  const explicit = process.env.CHROMIUM_PATH;
  if (explicit) return chromium.launch({ executablePath: explicit, args: QUIET });

  const { default: packaged } = await import('@sparticuz/chromium');
  const { executablePath, lambda, folder } = await unpacked(packaged);
  // The package's own libraries, where the system's were missing (see `unpacked`).
  const env = lambda ? { ...(process.env as Record<string, string>), LD_LIBRARY_PATH: join(folder, 'al2023', 'lib') } : undefined;
  const args = [...QUIET, '--font-render-hinting=none', '--headless=shell'];
  return chromium.launch({ executablePath, args, ...(env && { env }) });
}

type Packaged = { executablePath(): Promise<string> };

/**
 * The unpacked browser that every test process shares. Each process that finds none unpacks one into a
 * folder of its own and renames that folder into place, in one step, with a note of what it unpacked:
 * the package reuses any `chromium` file it finds, so two test files starting at once on a fresh machine
 * had one start the binary while the other was still writing it (`spawn ETXTBSY`, every time).
 * A process that loses the rename uses the winner's folder.
 */
async function unpacked(packaged: Packaged): Promise<{ executablePath: string; lambda: boolean; folder: string }> {
  const root = unpackFolder();
  const folder = join(root, 'ready');
  const note = join(folder, 'unpacked.json');
  if (!existsSync(note)) {
    const staging = mkdtempSync(join(root, 'unpacking-'));
    try {
      let executable = await withEnv({ TMPDIR: staging }, () => packaged.executablePath());
      let lambda = false;
      if (missingLibraries(executable)) {
        // Unpacked again as on AWS Lambda, where the package brings its own libraries too.
        rmSync(executable, { force: true });
        executable = await withEnv({ TMPDIR: staging, AWS_LAMBDA_JS_RUNTIME: 'nodejs20.x' }, () => packaged.executablePath());
        lambda = true;
      }
      writeFileSync(join(staging, 'unpacked.json'), JSON.stringify({ executable: relative(staging, executable), lambda }));
      renameSync(staging, folder);
    } catch (error) {
      if (!existsSync(note)) throw error; // not a lost race
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  const { executable, lambda } = JSON.parse(readFileSync(note, 'utf8')) as { executable: string; lambda: boolean };
  return { executablePath: join(folder, executable), lambda, folder };
}

/**
 * The package unpacks into the temp folder's `chromium`, whatever its version, and reuses
 * whatever it finds there: a folder per package version keeps two versions apart.
 */
function unpackFolder(): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve('@sparticuz/chromium'));
  while (!existsSync(join(dir, 'package.json')) || JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name !== '@sparticuz/chromium') {
    dir = dirname(dir);
  }
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  const folder = join(tmpdir(), `ttl-advisor-chromium-${version}`);
  mkdirSync(folder, { recursive: true });
  return folder;
}

/** Runs `fn` with some environment variables set (os.tmpdir() reads TMPDIR on every call), then restores them. */
async function withEnv<T>(vars: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

function missingLibraries(executable: string): boolean {
  if (!existsSync(executable)) return true;
  try {
    return /not found/.test(execFileSync('ldd', [executable], { encoding: 'utf8' }));
  } catch {
    return false;
  }
}
