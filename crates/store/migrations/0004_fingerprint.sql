-- Schema version 4: an import's fingerprint (SHA-256 of its stored document), so that
-- importing the same file with the same options again finds the run it made rather than
-- storing a second, identical one. Runs stored before have none (SQL has no SHA-256 both
-- backends share), so an import made before this version is not recognised.
ALTER TABLE runs ADD COLUMN fingerprint TEXT;
CREATE INDEX runs_fingerprint ON runs (fingerprint);
