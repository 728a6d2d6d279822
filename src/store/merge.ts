import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DatabaseError } from '../errors.js';
import { rebuildFleetRollups } from './fleet-rollups.js';
import { rollupValuesSql } from './rollup.js';
import { checkedVersion, openForReading, openForWriting } from './schema.js';

export interface MergeResult {
  inputs: number;
  instances: number;
  rollupRows: number;
  rawRows: number;
}

/**
 * Merges samples databases into `outPath` (created or migrated as needed).
 *
 * Data is merged per instance: an instance's rollups and raw rows in the output
 * are replaced by those of the input that has it. Per-instance files (the usual
 * case) therefore add up, merging the same input twice changes nothing, and
 * merging a file again after it recorded more brings the output up to date.
 * All or nothing: every input, and an existing output, is checked (schema
 * version, `PRAGMA quick_check`) before anything is written; the merge is made
 * in a copy beside the output that replaces it only once complete. A failure
 * leaves the output byte for byte as it was (or absent, if it was). Inputs may
 * be of any schema version up to this code's. Nothing else may write the
 * output meanwhile.
 */
export function mergeDatabases(outPath: string, inputPaths: readonly string[]): MergeResult {
  const inputs = inputPaths.map((path) => {
    if (resolve(path) === resolve(outPath)) throw new DatabaseError(path, `${path} is the output; it cannot also be an input`);
    return { path, version: checkedVersion(path, 'nothing was merged') };
  });
  const outExists = existsSync(outPath) && statSync(outPath).size > 0;
  if (outExists) checkedVersion(outPath, 'nothing was merged');
  const temp = join(dirname(outPath), `.${basename(outPath)}.${process.pid}.${randomBytes(4).toString('hex')}.merging`);
  try {
    if (outExists) {
      // A consistent copy, the output's WAL included, made without writing to the output.
      const source = openForReading(outPath);
      try {
        // VACUUM INTO writes the copy only; a reading connection refuses it while `query_only`.
        source.pragma('query_only = OFF');
        source.prepare('VACUUM INTO ?').run(temp);
      } finally {
        source.close();
      }
    }
    const result = mergeInto(temp, inputs);
    // The copy's WAL is folded in when its last connection closes; stale WAL files of the old output must not
    // be replayed onto the new one.
    for (const suffix of ['-wal', '-shm']) rmSync(outPath + suffix, { force: true });
    renameSync(temp, outPath);
    return result;
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(temp + suffix, { force: true });
  }
}

function mergeInto(outPath: string, inputs: readonly { path: string; version: number }[]): MergeResult {
  const out = openForWriting(outPath, 5000);
  const result: MergeResult = { inputs: inputs.length, instances: 0, rollupRows: 0, rawRows: 0 };
  try {
    for (const input of inputs) {
      out.prepare('ATTACH DATABASE ? AS src').run(input.path);
      try {
        out.transaction(() => {
          out.exec(`
            INSERT OR IGNORE INTO patterns (pattern) SELECT pattern FROM src.patterns;
            INSERT OR IGNORE INTO instances (instance) SELECT instance FROM src.instances;
            CREATE TEMP TABLE merge_instances AS
              SELECT si.id AS src_id, i.id AS out_id FROM src.instances si JOIN main.instances i ON i.instance = si.instance;
            CREATE TEMP TABLE merge_patterns AS
              SELECT sp.id AS src_id, p.id AS out_id FROM src.patterns sp JOIN main.patterns p ON p.pattern = sp.pattern;
            INSERT OR IGNORE INTO series (pattern_id, instance_id, ttl_ms)
              SELECT mp.out_id, mi.out_id, ss.ttl_ms FROM src.series ss
                JOIN merge_patterns mp ON mp.src_id = ss.pattern_id JOIN merge_instances mi ON mi.src_id = ss.instance_id;
            CREATE TEMP TABLE merge_series AS
              SELECT ss.id AS src_id, s.id AS out_id FROM src.series ss
                JOIN merge_patterns mp ON mp.src_id = ss.pattern_id JOIN merge_instances mi ON mi.src_id = ss.instance_id
                JOIN main.series s ON s.pattern_id = mp.out_id AND s.instance_id = mi.out_id AND s.ttl_ms = ss.ttl_ms;
          `);
          // Replace, per instance: what the output had for these instances came from an earlier merge of them.
          out.exec(`
            DELETE FROM main.rollups WHERE instance_id IN (SELECT out_id FROM merge_instances);
            DELETE FROM main.raw_samples WHERE series_id IN
              (SELECT id FROM main.series WHERE instance_id IN (SELECT out_id FROM merge_instances));
          `);
          result.rollupRows += out
            .prepare(
              `INSERT INTO main.rollups (pattern_id, bucket_start_ms, instance_id, ${rollupValuesSql()})
               SELECT mp.out_id, r.bucket_start_ms, mi.out_id, ${rollupValuesSql('r.', input.version)}
                 FROM src.rollups r JOIN merge_patterns mp ON mp.src_id = r.pattern_id JOIN merge_instances mi ON mi.src_id = r.instance_id`,
            )
            .run().changes;
          result.rawRows += out
            .prepare(
              `INSERT INTO main.raw_samples (ts_ms, key, series_id, hold_us, wait_us, flags, extensions, lost, censored)
               SELECT r.ts_ms, r.key, ms.out_id, r.hold_us, r.wait_us, r.flags, ${input.version >= 5 ? 'r.extensions, r.lost' : '0, 0'}, ${input.version >= 8 ? 'r.censored' : '0'}
                 FROM src.raw_samples r JOIN merge_series ms ON ms.src_id = r.series_id`,
            )
            .run().changes;
          if (input.version >= 2) {
            // The raw-row counters came with version 6: older inputs had none to carry.
            const raw = input.version >= 6 ? 's.raw_written, s.raw_dropped, s.raw_full_ms' : '0, 0, NULL';
            out.exec(`
              INSERT OR REPLACE INTO main.recorder_stats (instance_id, updated_ms, recorded, written, dropped, raw_written, raw_dropped, raw_full_ms)
                SELECT mi.out_id, s.updated_ms, s.recorded, s.written, s.dropped, ${raw} FROM src.recorder_stats s JOIN merge_instances mi ON mi.src_id = s.instance_id;
            `);
          }
          if (input.version >= 7) {
            out.exec(`
              DELETE FROM main.gaps WHERE instance_id IN (SELECT out_id FROM merge_instances);
              INSERT INTO main.gaps (instance_id, source, from_ms, to_ms, reason, open_holds)
                SELECT mi.out_id, g.source, g.from_ms, g.to_ms, g.reason, g.open_holds FROM src.gaps g JOIN merge_instances mi ON mi.src_id = g.instance_id;
            `);
          }
          if (input.version >= 11) {
            // What each input learned of its patterns: a name learned in one file is read so in every other.
            out.exec(`
              INSERT OR IGNORE INTO main.pattern_aliases (pattern_id, learned_id, distinct_values)
                SELECT f.out_id, t.out_id, a.distinct_values FROM src.pattern_aliases a
                  JOIN merge_patterns f ON f.src_id = a.pattern_id JOIN merge_patterns t ON t.src_id = a.learned_id;
            `);
          }
          result.instances += (out.prepare('SELECT count(*) AS n FROM merge_instances').get() as { n: number }).n;
          out.exec('DROP TABLE merge_instances; DROP TABLE merge_patterns; DROP TABLE merge_series;');
        }).immediate();
      } finally {
        out.exec('DETACH DATABASE src');
      }
    }
    // Instances were replaced, not added to: the sums over instances are recomputed.
    out.transaction(() => rebuildFleetRollups(out)).immediate();
    return result;
  } finally {
    out.close();
  }
}
