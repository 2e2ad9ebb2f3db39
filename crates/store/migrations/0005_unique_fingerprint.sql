-- Schema version 5: one run per import fingerprint. Version 4 looked the fingerprint up and then
-- inserted, so two identical imports at the same instant could both be stored. A unique index
-- makes the second insert fail (the saver then answers as for a fingerprint found before).
-- A store may already hold such pairs: every run is kept, and the oldest of each (by time,
-- then id) keeps the fingerprint; the others lose it, so they stay listed, shown and compared
-- as before and only the oldest is named by the next import of the same document.
UPDATE runs SET fingerprint = NULL
WHERE fingerprint IS NOT NULL
  AND EXISTS (SELECT 1 FROM runs o
              WHERE o.fingerprint = runs.fingerprint
                AND (o.created_at < runs.created_at
                     OR (o.created_at = runs.created_at AND o.id < runs.id)));
DROP INDEX IF EXISTS runs_fingerprint;
CREATE UNIQUE INDEX runs_fingerprint_unique ON runs (fingerprint) WHERE fingerprint IS NOT NULL;
