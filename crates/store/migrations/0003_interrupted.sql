-- Schema version 3: whether a run was stopped early (Ctrl-C or a signal), so `history` can mark
-- partial figures without reading every document. Runs stored before are filled in from their
-- documents, as disktier writes them (compact JSON: a top-level, job's or scenario's
-- `"interrupted":true`; a string holding those characters has its quotes escaped). LIKE reads
-- the text only, so a damaged document does not stop the migration.
ALTER TABLE runs ADD COLUMN interrupted BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE runs SET interrupted = TRUE WHERE doc LIKE '%"interrupted":true%';
