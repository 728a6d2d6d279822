import { accessSync, closeSync, constants, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseError } from '../errors.js';

/** Bytes 18 and 19 of a SQLite header: the file format's write and read versions, 2 in WAL mode, 1 with a rollback journal. */
const FORMAT_OFFSET = 18;

/**
 * A WAL-mode samples file on read-only media (a mounted backup, a CI artifact,
 * a read-only volume) cannot be read in place: every connection needs its
 * `-shm` file, and none can be created beside it. SQLite's answer is the
 * `immutable=1` URI, but better-sqlite3 reads URIs only when `SQLITE_USE_URI=1`
 * is in the environment before its addon loads, which a library cannot
 * promise. So such a file is read from a copy in memory, marked as a
 * rollback-journal file: with no `-wal`, or an empty one, the file alone holds
 * every committed page, and the copy is exactly the data.
 *
 * Returns that copy, or `undefined` when the file can be opened as it is (a
 * writable directory, a rollback-journal file, or `-wal` and `-shm` both there,
 * which SQLite reads read-only). A non-empty `-wal` without its `-shm` is
 * refused with a {@link DatabaseError}: SQLite cannot read it there, and the
 * file alone would show stale data.
 */
export function readOnlyWalCopy(path: string): Buffer | undefined {
  if (existsSync(`${path}-shm`) || isWritableDir(dirname(path))) return undefined;
  if (existsSync(`${path}-wal`) && statSync(`${path}-wal`).size > 0) {
    throw new DatabaseError(path, `${path} has a write-ahead log (${path}-wal) but no ${path}-shm, in a directory that cannot be written: SQLite cannot read it there; copy both files to a writable place`);
  }
  const header = Buffer.alloc(FORMAT_OFFSET + 2);
  const fd = openSync(path, 'r');
  try {
    if (readSync(fd, header, 0, header.length, 0) < header.length) return undefined;
  } finally {
    closeSync(fd);
  }
  if (header.subarray(0, 16).toString('latin1') !== 'SQLite format 3\0' || header[FORMAT_OFFSET] !== 2) return undefined;
  const bytes = readFileSync(path);
  bytes[FORMAT_OFFSET] = 1;
  bytes[FORMAT_OFFSET + 1] = 1;
  return bytes;
}

function isWritableDir(dir: string): boolean {
  try {
    // EROFS on read-only media (for root too), EACCES or EPERM where the directory may not be written.
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
