import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * better-sqlite3's native binding, as a user can act on it: built for another Node (a service moved to
 * Node 22 or 24 kept the node_modules built for 20; an npm that builds against another Node's headers),
 * or never built (an install whose scripts were not allowed, a slim image without a compiler).
 */

const FIX = 'run `npm rebuild better-sqlite3` with this Node (it needs a compiler and Python where no prebuilt binary can be fetched)';
/** The folders of better-sqlite3's package its loader tries, in order (`bindings`' list, the compiled/ one last). */
const CANDIDATES = ['build', 'build/Debug', 'build/Release', 'out/Debug', 'Debug', 'out/Release', 'Release', 'build/default', `compiled/${process.versions.node}/${process.platform}/${process.arch}`];
let checked: string | undefined | null = null;

/**
 * What keeps the binding from loading in this Node, in a sentence; undefined when nothing does. Read once per
 * process, without loading it: a recorder says it at construction, not at its first seal (until then, and after,
 * each sample it cannot write is dropped and counted).
 */
export function bindingProblem(): string | undefined {
  if (checked !== null) return checked;
  checked = undefined;
  let root: string;
  try {
    root = dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
  } catch {
    return (checked = 'better-sqlite3 is not installed (run `npm install better-sqlite3`)');
  }
  // Where better-sqlite3's loader (the `bindings` package) looks, in its order: a problem only when none would load.
  const found = CANDIDATES.map((dir) => join(root, dir, 'better_sqlite3.node')).flatMap((file) => {
    const built = abiOf(file);
    return built === null ? [] : [{ file, built }];
  });
  if (found.length === 0) checked = `better-sqlite3's native binding was never built (no better_sqlite3.node under ${root}: its install script did not run or failed); ${FIX}`;
  else if (found.every(({ built }) => built !== undefined && built !== process.versions.modules)) checked = mismatch(found[0]!.file, found[0]!.built!);
  return checked;
}

/** A load failure of the binding (`NODE_MODULE_VERSION …`, "did not self-register") in words a user can act on; undefined for any other error. */
export function bindingErrorText(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const versions = /NODE_MODULE_VERSION (\d+)[\s\S]*NODE_MODULE_VERSION (\d+)/.exec(message);
  const file = /'([^']+\.node)'/.exec(message)?.[1] ?? /(\S+\.node)\b/.exec(message)?.[1];
  if (versions) return mismatch(file ?? 'better_sqlite3.node', versions[1]!);
  if (/did not self-register/.test(message) && file) {
    const built = abiOf(file);
    return built && built !== process.versions.modules ? mismatch(file, built) : `better-sqlite3's native binding did not load (${message}); ${FIX}`;
  }
  return undefined;
}

function mismatch(file: string, built: string): string {
  return `better-sqlite3's native binding (${file}) was built for another Node: NODE_MODULE_VERSION ${built}, where this Node (${process.version}) needs ${process.versions.modules}; ${FIX}`;
}

/** The Node ABI a native addon was built for (its `node_register_module_v<N>` symbol); null when the file is missing, undefined when unread. */
function abiOf(file: string): string | undefined | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const chunk = Buffer.alloc(1 << 20);
    const marker = Buffer.from('node_register_module_v');
    let carry = Buffer.alloc(0);
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) {
      const text = Buffer.concat([carry, chunk.subarray(0, n)]);
      const at = text.indexOf(marker);
      // The digits after the marker, once the chunk holds them all (a marker at a chunk's end is read with the next).
      if (at >= 0 && text.length - (at + marker.length) >= 8) return /^\d+/.exec(text.subarray(at + marker.length, at + marker.length + 8).toString('latin1'))?.[0];
      carry = text.subarray(at >= 0 ? at : Math.max(0, text.length - 32));
    }
    const at = carry.indexOf(marker);
    return at >= 0 ? /^\d+/.exec(carry.subarray(at + marker.length).toString('latin1'))?.[0] : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
