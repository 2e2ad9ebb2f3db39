-- Schema version 2: runs made together (one `disktier assess`) share a group id, and
-- `history --target/--profile` filters use indexes.
ALTER TABLE runs ADD COLUMN group_id TEXT;
CREATE INDEX runs_group_id ON runs (group_id);
CREATE INDEX runs_target ON runs (target);
CREATE INDEX runs_profile ON runs (profile);
