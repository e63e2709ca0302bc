-- Up Migration

-- Snapshots now keep their personal values sealed under the subjects' data keys, under kinds ending in
-- '+sealed' (SEALED_SNAPSHOT_SUFFIX in services/platform/src/personal-data/sealed-snapshots.ts), so that a
-- user's deletion shreds them with the keys and no longer scans this table. The ones kept before hold
-- plaintext that no erasure would now reach: they go. A snapshot is only a cache of the log; the next load
-- of each stream folds it and keeps a sealed one.
DELETE FROM snapshots WHERE model NOT LIKE '%+sealed';

-- Down Migration
-- Sealed snapshots are of kinds the earlier code never reads; they are left for it to ignore.
