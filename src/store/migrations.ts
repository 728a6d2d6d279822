/**
 * The samples database. Its schema is public: users query it with the
 * `sqlite3` shell, and README documents it. It is versioned with
 * `PRAGMA user_version`; each entry of {@link MIGRATIONS} moves a database one
 * version forward, and a database newer than this code is refused.
 */

export const MIGRATIONS: readonly string[] = [
  // 0 → 1
  `
  CREATE TABLE meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE patterns (
    id      INTEGER PRIMARY KEY,
    pattern TEXT NOT NULL UNIQUE
  );

  CREATE TABLE instances (
    id       INTEGER PRIMARY KEY,
    instance TEXT NOT NULL UNIQUE
  );

  -- One row per (pattern, instance, TTL): raw rows point here instead of repeating three columns.
  CREATE TABLE series (
    id          INTEGER PRIMARY KEY,
    pattern_id  INTEGER NOT NULL REFERENCES patterns(id),
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    ttl_ms      INTEGER NOT NULL,
    UNIQUE (pattern_id, instance_id, ttl_ms)
  );

  -- flags = outcome (0 released, 1 expired, 2 not_acquired, 3 error) | threw << 2 | attempts << 3
  CREATE TABLE raw_samples (
    ts_ms     INTEGER NOT NULL,
    key       TEXT    NOT NULL,
    series_id INTEGER NOT NULL REFERENCES series(id),
    hold_us   INTEGER,
    wait_us   INTEGER NOT NULL,
    flags     INTEGER NOT NULL
  );

  CREATE TABLE rollups (
    pattern_id      INTEGER NOT NULL REFERENCES patterns(id),
    bucket_start_ms INTEGER NOT NULL,
    instance_id     INTEGER NOT NULL REFERENCES instances(id),
    count           INTEGER NOT NULL,
    released        INTEGER NOT NULL,
    expired         INTEGER NOT NULL,
    not_acquired    INTEGER NOT NULL,
    error           INTEGER NOT NULL,
    threw           INTEGER NOT NULL,
    hold_sum_us     INTEGER NOT NULL,
    wait_sum_us     INTEGER NOT NULL,
    first_ts_ms     INTEGER NOT NULL,
    last_ts_ms      INTEGER NOT NULL,
    -- hold-time histogram ‖ wait-time histogram ‖ TTL counts (see README)
    hists           BLOB    NOT NULL,
    PRIMARY KEY (pattern_id, bucket_start_ms, instance_id)
  ) WITHOUT ROWID;

  CREATE VIEW samples AS
    SELECT r.ts_ms, r.key, p.pattern, r.hold_us, r.wait_us, r.flags >> 3 AS attempts, s.ttl_ms,
           CASE r.flags & 3 WHEN 0 THEN 'released' WHEN 1 THEN 'expired'
                            WHEN 2 THEN 'not_acquired' ELSE 'error' END AS outcome,
           (r.flags >> 2) & 1 AS threw, i.instance
      FROM raw_samples r
      JOIN series    s ON s.id = r.series_id
      JOIN patterns  p ON p.id = s.pattern_id
      JOIN instances i ON i.id = s.instance_id;
  `,
  // 1 → 2: each recorder's counters, so `ttl-advisor stats` can show dropped samples.
  `
  CREATE TABLE recorder_stats (
    instance_id INTEGER PRIMARY KEY REFERENCES instances(id),
    updated_ms  INTEGER NOT NULL,
    recorded    INTEGER NOT NULL,
    written     INTEGER NOT NULL,
    dropped     INTEGER NOT NULL
  );
  `,
  // 2 → 3: stream batches already applied by \`ttl-advisor collect\`, so a redelivered batch is never counted twice.
  `
  CREATE TABLE stream_batches (
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    epoch       TEXT    NOT NULL,
    seq         INTEGER NOT NULL,
    applied_ms  INTEGER NOT NULL,
    PRIMARY KEY (instance_id, epoch, seq)
  ) WITHOUT ROWID;
  `,
  // 3 → 4: rollups summed over instances, kept up to date by every writer, so a
  // report over a fleet reads one row per pattern and hour (filled by rebuildFleetRollups).
  `
  CREATE TABLE fleet_rollups (
    pattern_id      INTEGER NOT NULL REFERENCES patterns(id),
    bucket_start_ms INTEGER NOT NULL,
    count           INTEGER NOT NULL,
    released        INTEGER NOT NULL,
    expired         INTEGER NOT NULL,
    not_acquired    INTEGER NOT NULL,
    error           INTEGER NOT NULL,
    threw           INTEGER NOT NULL,
    hold_sum_us     INTEGER NOT NULL,
    wait_sum_us     INTEGER NOT NULL,
    first_ts_ms     INTEGER NOT NULL,
    last_ts_ms      INTEGER NOT NULL,
    hists           BLOB    NOT NULL,
    PRIMARY KEY (pattern_id, bucket_start_ms)
  ) WITHOUT ROWID;
  `,
  // 4 → 5: how often locks were extended while held (auto-extension, extend()): for those
  // locks the TTL is not the hold budget. Per raw row, and per rollup as the number of
  // extended locks and the sum of their extensions. And the outcome `lost` (the key
  // vanished before its TTL could have run out): stored as outcome 1 plus `lost` = 1.
  // SQLite cannot add the `lost` count after `extensions` in rollups' column order, so it
  // comes last; readers name their columns.
  `
  ALTER TABLE raw_samples   ADD COLUMN extensions INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE raw_samples   ADD COLUMN lost       INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE rollups       ADD COLUMN lost       INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE fleet_rollups ADD COLUMN lost       INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE rollups       ADD COLUMN extended   INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE rollups       ADD COLUMN extensions INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE fleet_rollups ADD COLUMN extended   INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE fleet_rollups ADD COLUMN extensions INTEGER NOT NULL DEFAULT 0;
  DROP VIEW samples;
  CREATE VIEW samples AS
    SELECT r.ts_ms, r.key, p.pattern, r.hold_us, r.wait_us, r.flags >> 3 AS attempts, s.ttl_ms,
           CASE WHEN r.lost = 1 THEN 'lost' ELSE
             CASE r.flags & 3 WHEN 0 THEN 'released' WHEN 1 THEN 'expired'
                              WHEN 2 THEN 'not_acquired' ELSE 'error' END END AS outcome,
           (r.flags >> 2) & 1 AS threw, i.instance, r.extensions
      FROM raw_samples r
      JOIN series    s ON s.id = r.series_id
      JOIN patterns  p ON p.id = s.pattern_id
      JOIN instances i ON i.id = s.instance_id;
  `,
  // 5 → 6: raw rows are kept by a budget and the file is bounded: each recorder's raw rows
  // written and dropped, and since when its raw rows stop at \`maxDatabaseBytes\` (NULL: they don't).
  `
  ALTER TABLE recorder_stats ADD COLUMN raw_written INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE recorder_stats ADD COLUMN raw_dropped INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE recorder_stats ADD COLUMN raw_full_ms INTEGER;
  `,
  // 6 → 7: gaps in what a producer saw (\`watch\` lost its notifications: Redis's pubsub output-buffer
  // limit, a restart): the hours they touch hold lower bounds of their counts.
  `
  CREATE TABLE gaps (
    instance_id INTEGER NOT NULL REFERENCES instances(id),
    source      TEXT    NOT NULL,
    from_ms     INTEGER NOT NULL,
    to_ms       INTEGER NOT NULL,
    reason      TEXT    NOT NULL,
    open_holds  INTEGER NOT NULL,
    PRIMARY KEY (instance_id, source, from_ms)
  ) WITHOUT ROWID;
  `,
  // 7 → 8: censored holds (end not seen: \`watch\` saw the key expire, \`instrument\` saw no release) are at least
  // \`hold_us\`: rollups keep them in a histogram at the end of \`hists\` (see the codec), raw rows mark them.
  // Rollups count the samples \`watch\` took on a pattern it never saw released (\`unconfirmed\`).
  `
  ALTER TABLE raw_samples ADD COLUMN censored INTEGER NOT NULL DEFAULT 0;
  -- Earlier watchers' expirations (outcome expired, wait unknown: only \`watch\` records that) were censored too.
  UPDATE raw_samples SET censored = 1 WHERE (flags & 3) = 1 AND lost = 0 AND wait_us = -1 AND hold_us IS NOT NULL;
  ALTER TABLE rollups       ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE fleet_rollups ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0;
  DROP VIEW samples;
  CREATE VIEW samples AS
    SELECT r.ts_ms, r.key, p.pattern, r.hold_us, r.wait_us, r.flags >> 3 AS attempts, s.ttl_ms,
           CASE WHEN r.lost = 1 THEN 'lost' ELSE
             CASE r.flags & 3 WHEN 0 THEN 'released' WHEN 1 THEN 'expired'
                              WHEN 2 THEN 'not_acquired' ELSE 'error' END END AS outcome,
           (r.flags >> 2) & 1 AS threw, i.instance, r.extensions, r.censored
      FROM raw_samples r
      JOIN series    s ON s.id = r.series_id
      JOIN patterns  p ON p.id = s.pattern_id
      JOIN instances i ON i.id = s.instance_id;
  `,
  // 8 → 9: renewed locks (leases): a rollup's \`hists\` blob may end with a lease part — renewal gaps, lateness,
  // least margin per hold, round trips, event-loop delay, nominal periods and libraries (see the codec). No
  // table changes; the version says a file may hold blobs that earlier versions would call corrupt.
  `SELECT 1;`,
  // 9 → 10: a file whose rollups are all one instance's keeps no \`fleet_rollups\` rows (they copied \`rollups\` byte
  // for byte, a third of a two-day file): \`meta\` row \`sole_instance_id\` names that instance ('' before any rollup),
  // and readers read \`rollups\` instead. The first rollup of a second instance fills \`fleet_rollups\` and removes the row.
  `
  INSERT INTO meta (name, value)
    SELECT 'sole_instance_id', coalesce(min(instance_id), '') FROM rollups HAVING count(DISTINCT instance_id) <= 1;
  DELETE FROM fleet_rollups WHERE EXISTS (SELECT 1 FROM meta WHERE name = 'sole_instance_id');
  `,
  // 10 → 11: patterns learned from the keys (see keys/miner.ts). A pattern named before a position of it was
  // learned (`lock:user:anna`, before `lock:user:{id}`) is provisional: its row here names the learned pattern
  // its rows are read as, and how many distinct values the learned position had seen. Readers follow chains.
  `
  CREATE TABLE pattern_aliases (
    pattern_id      INTEGER PRIMARY KEY REFERENCES patterns(id),
    learned_id      INTEGER NOT NULL REFERENCES patterns(id),
    distinct_values INTEGER NOT NULL
  );
  `,
];
