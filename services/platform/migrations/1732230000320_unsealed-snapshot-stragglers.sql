-- Up Migration

-- During a rolling upgrade a process of the build before sealed snapshots (1732230000300) may still keep a
-- fold, unsealed, after that migration deleted the others. Each erasure deletes such stragglers; this index
-- holds only them (none once the upgrade is over), so that sweep reads nothing else, however many sealed
-- snapshots there are.
CREATE INDEX snapshots_unsealed ON snapshots (model) WHERE model NOT LIKE '%+sealed';

-- Down Migration
DROP INDEX snapshots_unsealed;
