/**
 * A shell-style glob as a regular expression anchored at both ends: `*` any run
 * of characters, `?` one character, everything else literal. Used for
 * `--pattern` filters over key patterns and for file names given to `--db`.
 */
export function globToRegExp(glob: string, flags = 's'): RegExp {
  const source = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, flags);
}
